"""render: what the report counts, per sitemap and across the set, while the records stream.

Pure: bytes in (a document in chunks, compressed or not), counts out. Each document goes
through the one reader (:class:`~sitemapkit.core.parse.SitemapParser`, in the reading
mode: its findings are the validator's business and are dropped here); only counters
are kept, so memory does not grow with the number of URLs. What can grow with hostile
input is bounded: distinct hosts (:data:`MAX_HOSTS`), distinct months, the children
remembered per index (:data:`MAX_CHILDREN`, for drawing the tree).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from ..core.model import CHANGEFREQS, SitemapRef, Url
from ..core.parse import DEFAULT_MAX_BYTES, SitemapParser
from ..core.robots import MAX_ROBOTS_BYTES, is_robots_name, parse_robots
from ..errors import SitemapError
from ..writer.index import Latest

__all__ = ["EXTENSIONS", "MAX_CHILDREN", "MAX_HOSTS", "TENTHS", "SetStats", "SitemapStats"]

#: Distinct hosts counted; beyond, the count says "at least".
MAX_HOSTS: Final = 10_000
#: Children of the indexes remembered for the tree of sitemaps, over the whole set.
MAX_CHILDREN: Final = 200_000
#: The extensions a URL can use, in the order the page lists them.
EXTENSIONS: Final = ("image", "video", "news", "hreflang")
#: sitemaps.org: "Valid values range from 0.0 to 1.0"; the chart has a bar per tenth.
TENTHS: Final = tuple(f"{n / 10:.1f}" for n in range(11))


@dataclass(slots=True)
class SitemapStats:
    """One document of the set: its kind (a sitemap's, or ``"robots.txt"``), entries,
    size as stored and after decompression, whether it is gzip, the latest lastmod of
    its entries (compared as instants), and the locs of an index's children (or of a
    robots.txt's sitemaps), remembered up to a bound."""

    name: str
    kind: str | None = None
    entries: int = 0
    urls: int = 0
    size: int = 0
    plain: int = 0
    gzip: bool = False
    lastmod: str | None = None
    children: list[str] = field(default_factory=list)
    #: Why reading stopped early (the validator's report says it too), if it did.
    stopped: str | None = None


@dataclass(slots=True)
class SetStats:
    """The counts of a whole set: per document (:attr:`sitemaps`, by name) and the
    distributions the charts draw.

    >>> stats = SetStats()
    >>> doc = stats.add("s.xml", [b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    ...     b"<url><loc>https://example.com/a</loc><lastmod>2024-05-01</lastmod>"
    ...     b"<priority>0.5</priority></url></urlset>"])
    >>> doc.kind, doc.urls, doc.lastmod, dict(stats.months), stats.priority["0.5"]
    ('urlset', 1, '2024-05-01', {'2024-05': 1}, 1)
    """

    sitemaps: dict[str, SitemapStats] = field(default_factory=dict)
    urls: int = 0
    months: Counter[str] = field(default_factory=Counter)
    changefreq: Counter[str] = field(default_factory=Counter)
    priority: Counter[str] = field(default_factory=Counter)
    extensions: Counter[str] = field(default_factory=Counter)
    hosts: set[str] = field(default_factory=set)
    #: True when more than :data:`MAX_HOSTS` hosts were seen (only that many are counted).
    more_hosts: bool = False
    _children: int = 0

    def add(
        self,
        name: str,
        chunks: Iterable[bytes],
        *,
        base_url: str | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> SitemapStats:
        """Read one document (``chunks`` of its bytes as stored) into the counts; a
        document read again under the same ``name`` replaces nothing (the first counts)."""
        known = self.sitemaps.get(name)
        if known is not None:
            return known
        doc = self.sitemaps[name] = SitemapStats(name)
        if is_robots_name(name):
            self._robots(doc, chunks, base_url or (name if "://" in name[:12] else None))
            return doc
        # one finding of a rule is enough: they are dropped, the validator reports them
        parser = SitemapParser(
            source=name, base_url=base_url, max_bytes=max_bytes, max_findings=1, summarize=False
        )
        latest = Latest()
        try:
            for chunk in chunks:
                if not doc.size:
                    doc.gzip = chunk[:2] == b"\x1f\x8b"
                doc.size += len(chunk)
                self._records(doc, parser.feed(chunk), latest)
            self._records(doc, parser.close(), latest)
        except SitemapError as exc:
            doc.stopped = exc.message
        doc.kind, doc.entries, doc.plain = parser.kind, parser.entries, parser.bytes_in
        doc.lastmod = latest.value
        return doc

    def _robots(self, doc: SitemapStats, chunks: Iterable[bytes], url: str | None) -> None:
        """A robots.txt of the set (validate takes them): its ``Sitemap:`` lines are its
        entries, and the sitemaps it lists are its children in the tree."""
        data = b""
        for chunk in chunks:
            doc.size += len(chunk)
            if len(data) <= MAX_ROBOTS_BYTES:
                data += chunk[: MAX_ROBOTS_BYTES + 1 - len(data)]
        found = parse_robots(data[:MAX_ROBOTS_BYTES], url, where=doc.name).sitemaps
        doc.kind, doc.entries, doc.plain = "robots.txt", len(found), doc.size
        room = max(MAX_CHILDREN - self._children, 0)
        doc.children.extend(found[:room])
        self._children += len(doc.children)

    def _records(self, doc: SitemapStats, records: list[Url | SitemapRef], latest: Latest) -> None:
        if not records:
            return
        urls = [r for r in records if isinstance(r, Url)]
        lastmods = [r.lastmod for r in records if isinstance(r.lastmod, str)]
        latest.add_all([v.encode() for v in lastmods])
        if len(urls) < len(records):
            room = MAX_CHILDREN - self._children
            refs = [r.loc for r in records if isinstance(r, SitemapRef)][: max(room, 0)]
            doc.children.extend(refs)
            self._children += len(refs)
        if not urls:
            return
        doc.urls += len(urls)
        self.urls += len(urls)
        # the month as the value writes it (its own calendar), e.g. "2024-05"
        self.months.update(v[:7] for v in lastmods if len(v) >= 7)
        self.changefreq.update(_freq(u.changefreq) for u in urls)
        self.priority.update(_tenth(u.priority) for u in urls)
        ext = self.extensions
        ext["image"] += sum(1 for u in urls if u.images)
        ext["video"] += sum(1 for u in urls if u.videos)
        ext["news"] += sum(1 for u in urls if u.news is not None)
        ext["hreflang"] += sum(1 for u in urls if u.alternates)
        if not self.more_hosts:
            self._hosts(urls)

    def _hosts(self, urls: list[Url]) -> None:
        hosts = self.hosts
        # locs are absolute URLs: the host is what lies between "//" and the next "/"
        new = {u.loc.partition("//")[2].partition("/")[0].lower() for u in urls} - hosts
        room = MAX_HOSTS - len(hosts)
        if len(new) > room:  # the first ones in sorted order: the same page every run
            self.more_hosts = True
            new = set(sorted(new)[:room])
        hosts.update(new)


def _freq(value: str | None) -> str:
    """The bar a changefreq falls in: its value, ``"none"`` or ``"other"`` (a value kept
    although not one of the seven)."""
    if value is None:
        return "none"
    return value if value in CHANGEFREQS else "other"


def _tenth(priority: float | str | None) -> str:
    """The bar a priority falls in: its nearest tenth (``"0.5"``), ``"none"`` or ``"other"``."""
    if priority is None:
        return "none"
    if isinstance(priority, str):
        return "other"
    return f"{priority:.1f}" if 0 <= priority <= 1 else "other"
