"""lint: the entries of one sitemap document, each with its file, line and column. Pure.

An audit (:mod:`.audit`) holds a site's pages against what its sitemaps list, and its
findings about an entry point at that entry's ``<loc>``. Records carry no positions, so
a document's bytes are read twice here, as the validator does: by the tolerant reader
(:func:`~sitemapkit.core.parse.parse_bytes`, which gives the locs as a reader keeps them)
and by lxml for the entries' lines; the column of each ``<loc>`` comes from the one
locator (:class:`~.checks.position.Locator`). A text sitemap's entries are at column 1 of
their line. A document that is not well-formed keeps its records, without positions.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

from lxml import etree

from ..core.compression import Inflater
from ..core.finding import Finding
from ..core.hardening import HARDENED
from ..core.model import SitemapRef, Url
from ..core.parse import DEFAULT_MAX_BYTES, Kind, parse_bytes
from ..errors import LimitError, SitemapError
from .checks.position import Locator, entry_anchors, resolve_places

__all__ = ["Listed", "Listing", "read_listing"]


class Listed(NamedTuple):
    """One ``<url>`` of a sitemap: its loc and lastmod as the reader keeps them, the
    sitemap (file or URL) that lists it, and the line and column of its ``<loc>``."""

    loc: str
    lastmod: str | None
    sitemap: str
    line: int | None = None
    column: int | None = None


@dataclass(slots=True)
class Listing:
    """What one sitemap document lists: ``entries`` (a urlset's, a feed's, a text
    sitemap's), ``children`` (an index's sitemaps, by URL), the reader's findings, and
    ``error`` when the document could not be read at all."""

    where: str
    kind: Kind | None = None
    entries: list[Listed] = field(default_factory=list)
    children: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None


def _plain(data: bytes, max_bytes: int) -> bytes:
    """The document's bytes, gunzipped when gzip (bounded by ``max_bytes``)."""
    if data[:2] != b"\x1f\x8b":
        return data
    out, size = [], 0
    for piece in Inflater().feed(data):
        size += len(piece)
        if size > max_bytes:
            raise LimitError(f"the document inflates past {max_bytes:,} bytes")
        out.append(piece)
    return b"".join(out)


def read_listing(
    data: bytes, where: str, *, url: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES
) -> Listing:
    """The entries of the document ``data`` read from ``where`` (published at ``url``,
    which resolves relative locs and names it), with their positions.

    >>> doc = (b'<?xml version="1.0" encoding="UTF-8"?>\\n'
    ...        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\\n'
    ...        b'  <url><loc>https://example.com/a</loc><lastmod>2024-05-01</lastmod></url>\\n'
    ...        b'</urlset>\\n')
    >>> read_listing(doc, "s.xml").entries
    [Listed(loc='https://example.com/a', lastmod='2024-05-01', sitemap='s.xml', line=3, column=8)]
    """
    listing = Listing(where)
    try:
        plain = _plain(data, max_bytes)
        records, listing.findings, listing.kind = parse_bytes(
            plain, source=where, base_url=url, max_bytes=max_bytes
        )
    except SitemapError as exc:
        listing.error = exc.message
        return listing
    urls = [r for r in records if isinstance(r, Url)]
    listing.children = [r.loc for r in records if isinstance(r, SitemapRef)]
    places = _places(plain, listing.kind, urls, url)
    seen: Counter[str] = Counter()
    for u in urls:
        at = places.get((u.loc, seen[u.loc]))
        seen[u.loc] += 1
        lastmod = u.lastmod if isinstance(u.lastmod, str) or u.lastmod is None else str(u.lastmod)
        line, column = at if at is not None else (None, None)
        listing.entries.append(Listed(u.loc, lastmod, where, line, column))
    return listing


def _places(
    data: bytes, kind: Kind | None, urls: list[Url], url: str | None
) -> dict[tuple[str, int], tuple[int, int]]:
    """``(loc, occurrence)`` → line and column of the entry's ``<loc>`` (a text
    sitemap's line, column 1)."""
    seen: Counter[str] = Counter()
    wanted = []
    for u in urls:
        wanted.append((u.loc, seen[u.loc]))
        seen[u.loc] += 1
    if kind == "text":
        lines = resolve_places(wanted, root=None, data=data, kind=kind, base_url=url)
        return {key: (line, 1) for key, (line, _) in lines.items()}
    if kind not in ("urlset", "sitemapindex"):
        return {}  # a feed: its records keep no place
    try:
        root = etree.fromstring(data, etree.XMLParser(**HARDENED))
    except etree.XMLSyntaxError:
        return {}  # read by the recovering reader: no tree to place entries in
    found = resolve_places(
        wanted, root=root, data=data, kind=kind, base_url=url, anchors=entry_anchors(root, kind)
    )
    columns = Locator(data, kind).positions({(ordinal, None) for _, ordinal in found.values()})
    out = {}
    for key, (line, ordinal) in found.items():
        at = columns.get((ordinal, None))
        out[key] = at if at is not None else (line, 1)
    return out
