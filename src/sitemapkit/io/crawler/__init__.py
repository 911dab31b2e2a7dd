"""io.crawler: the crawl of a running site: the runner of :mod:`sitemapkit.core.crawler`.

:func:`crawl` (:mod:`.api`) builds a :class:`Crawl`: the flow with a bounded seen set and
frontier (:mod:`.store`), driven by :class:`~.runner.CrawlRunner` over httpx, pages parsed
in a child process (:mod:`.parse`), fetch settings in :class:`~.options.CrawlOptions`.
"""

from __future__ import annotations

from .api import Crawl, crawl
from .options import CrawlOptions, CrawlProgress

__all__ = ["Crawl", "CrawlOptions", "CrawlProgress", "crawl"]
