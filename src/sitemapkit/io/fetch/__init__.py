"""io: the async HTTP runner of the discovery flow. The edge where sitemaps meet the network.

:class:`~sitemapkit.core.discovery.DiscoveryFlow` decides what to fetch; this package
fetches it with one ``httpx.AsyncClient`` and streams every body, chunk by chunk, through a
:class:`~sitemapkit.core.parse.SitemapParser`. Entry points (:mod:`.api`):

* :func:`discover` → :class:`~sitemapkit.core.discovery.SitemapTree` (every sitemap with
  its status; URL records are counted, not kept);
* :func:`aiter_records` → an async iterator of ``(record, sitemap_url)`` pairs, with the
  tree filling in as it goes;
* :func:`read_url_records` and :func:`discover_sync`, the same for synchronous scripts.

The modules, in the order a request meets them: :mod:`.options` (the one ``FetchOptions``),
:mod:`.runner` (drives the flow: concurrency, retries, redirects), :mod:`.guard`
(``refuse_private``), :mod:`.cache` (conditional requests), :mod:`.decode`
(``Content-Encoding`` in bounded steps, so a "gzip bomb" costs a few megabytes),
:mod:`.document` (a body parsed here or in a worker), :mod:`.worker` (parser processes on
:mod:`sitemapkit.io.child`).

Any exception other than the documented ones escaping this package is a bug.
"""

from ...core.discovery import SitemapStatus, SitemapTree
from ..http import retry_after_seconds
from .api import (
    RecordIterator,
    RecordStream,
    Sourced,
    aiter_records,
    discover,
    discover_sync,
    read_url_records,
)
from .decode import ContentDecoder
from .options import (
    DEFAULT_CONCURRENCY,
    DEFAULT_PER_HOST,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    USER_AGENT,
    FetchKeywords,
    FetchOptions,
    Report,
)
from .worker import PlainUrls

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_PER_HOST",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "USER_AGENT",
    "ContentDecoder",
    "FetchKeywords",
    "FetchOptions",
    "PlainUrls",
    "RecordIterator",
    "RecordStream",
    "Report",
    "SitemapStatus",
    "SitemapTree",
    "Sourced",
    "aiter_records",
    "discover",
    "discover_sync",
    "read_url_records",
    "retry_after_seconds",
]
