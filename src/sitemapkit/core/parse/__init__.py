"""core: read sitemaps from bytes, incrementally and defensively. Pure: never does I/O.

One reader for every format a sitemap URL can serve: XML ``urlset`` and ``sitemapindex``
(sitemaps.org 0.9, the legacy Google 0.84 namespace, or no namespace), RSS 2.0, Atom 0.3 and
1.0, plain-text sitemaps, each optionally gzip-compressed (one or several members). Bytes go
in with :meth:`SitemapParser.feed`, model objects (:class:`~sitemapkit.core.model.Url`,
:class:`~sitemapkit.core.model.SitemapRef`) come out in document order, problems are
collected as :class:`~sitemapkit.core.finding.Finding` objects.

Rules this package keeps:

* Hardened XML: libxml2 through lxml with no DTD loading, no entity expansion, no network,
  default size and depth limits. A DOCTYPE is reported (SM011); an entity reference is
  never replaced by its text, so XXE and "billion laughs" documents cannot leak files or
  blow up memory.
* Bounded memory: every entry element is dropped from the tree once read; the decompressed
  size (``max_bytes``) and the number of entries (``max_entries``) are budgets whose
  overrun raises :class:`~sitemapkit.errors.LimitError`.
* Tolerant by default: a bad value drops that field, a bad entry drops that entry, each
  with a finding; a document that stops being well-formed keeps every record read before
  the damage (SM004). ``strict=True`` raises :class:`~sitemapkit.errors.ParseError` at the
  first error-severity finding instead (warnings are only recorded).
* Chunking never matters: the same bytes split anywhere give the same records and findings
  (in strict mode, the records of the chunk that an error interrupts are not returned).

Where things are: ``parser`` (the shell: stages, budgets, the front doors), ``findings``
(severities, caps, strict mode), ``document`` (what the readers share, the entry budget),
``compression`` (gzip, SM007/SM008), ``prolog`` (format detection, the prolog's findings),
``tree`` (libxml2, well-formedness, placing entries), ``scanner`` (the regex fast path),
``canonical`` (records from canonical values), ``entry`` (``<url>``, ``<sitemap>``),
``extension`` and ``video`` (image, video, news, hreflang), ``feed`` (RSS, Atom), ``text``,
``value`` (values read the long way).
"""

from __future__ import annotations

from .document import Kind, Record
from .findings import REPORTED
from .parser import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_ENTRIES,
    DEFAULT_MAX_FINDINGS,
    SitemapParser,
    iter_parse,
    parse_bytes,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ENTRIES",
    "DEFAULT_MAX_FINDINGS",
    "REPORTED",
    "Kind",
    "Record",
    "SitemapParser",
    "iter_parse",
    "parse_bytes",
]
