"""Validating sitemaps: files, build folders, URLs and whole sets, against every offline rule.

The edge that drives the pure validator (:mod:`sitemapkit.lint`): it reads files (or fetches
URLs through a pluggable :class:`Fetcher`), feeds each document to the reader and the
checks, runs the XSD and the structural checks on the parsed tree, places every finding on
its line, and walks sitemap indexes into their children.

- :mod:`.api`: :func:`validate`, the front door.
- :mod:`.driver`: the set's documents one by one: read → passes → merge → locate → cap.
- :mod:`.merge`: one document's findings from its passes (severities, dedupe, caps).
- :mod:`.document`: targets and the URLs they are known as (:mod:`sitemapkit.io.target`
  decides what a target is).
- :mod:`.site`: URL targets through the discovery flow; a robots.txt's ``Sitemap:`` lines.
- :mod:`.fetcher`: :class:`Fetcher` and :class:`HttpFetcher`.
- :mod:`.online`: the online checks (SM012, and the entries' URLs with ``check_urls``).
- :mod:`.process`: the tree pass of large documents in a child process.

The tree pass itself is pure and lives in :mod:`sitemapkit.lint.tree`.

Per document, two passes run side by side: the streaming reader with the entry checks (this
thread) and the tree pass, which parses the uncompressed document with libxml2, validates it
against the bundled schemas and runs the structural checks (a worker thread; libxml2 releases
the GIL). The tree holds one document at a time, about six times its uncompressed size
(≈ 300 MB for a 50 MiB file); documents over the reader's budget are read only up to it.
Across a set, duplicate and hreflang checks keep a few dozen bytes per URL.

Names are imported on first use: the tree process imports :mod:`.process` alone, without
the validator's HTTP client and XSDs (a second or so of start-up CPU saved per run).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ..lazy import names

if TYPE_CHECKING:
    from ..lint.report import ValidationReport
    from .api import validate
    from .driver import Tuning
    from .fetcher import Fetched, Fetcher, HttpFetcher

__all__ = ["Fetched", "Fetcher", "HttpFetcher", "Tuning", "ValidationReport", "validate"]

#: Where each name is defined.
_WHERE: Final = {
    "ValidationReport": "..lint.report",
    "validate": ".api",
    "Tuning": ".driver",
    "Fetched": ".fetcher",
    "Fetcher": ".fetcher",
    "HttpFetcher": ".fetcher",
}

__getattr__ = names(__name__, _WHERE)
