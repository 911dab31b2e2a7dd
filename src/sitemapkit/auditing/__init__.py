"""auditing: ``audit()`` — a site's pages held against its sitemaps (issue #14 §1).

The edge that drives the pure comparison (:mod:`sitemapkit.lint.audit`): it gathers the
sitemaps of the set with their positions and the pages of the site, and hands both over.

- :mod:`.api`: :func:`audit`, the front door: a build folder or a site URL.
- :mod:`.sitemaps`: the documents of a set read one by one, an index's children after it.
- :mod:`.folder`: a build folder: its sitemaps (robots.txt, else ``sitemap*.xml*``) and
  its pages (:class:`~sitemapkit.io.sources.folder.FolderPages`), offline.
- :mod:`.site`: a site URL: its sitemaps through discovery and its pages from the crawler.

(The package is not called ``audit``: that name is the function's, ``sitemapkit.audit``.)
"""

from __future__ import annotations

from .api import audit

__all__ = ["audit"]
