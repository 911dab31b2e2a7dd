"""Reading sitemaps: files, standard input and (through ``io.fetch``) URLs and sites.

``read()`` yields records (:class:`~sitemapkit.Url` for pages, :class:`~sitemapkit.SitemapRef`
for index entries when children are not followed) with the sitemap they came from;
findings are collected on the :class:`ReadReport` passed in, or dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

from .core.finding import Finding
from .core.model import SitemapRef, Url
from .core.parse import DEFAULT_MAX_BYTES, SitemapParser, parse_bytes
from .errors import InputError
from .io.files import open_input

if TYPE_CHECKING:  # not imported at run time: reading files does not need discovery
    from .core.discovery import SitemapTree

__all__ = [
    "ReadKeywords",
    "ReadReport",
    "SourcedRecord",
    "loads",
    "read",
    "read_batches",
    "read_file",
]

_URL: re.Pattern[str] = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass(frozen=True, slots=True)
class SourcedRecord:
    """A record and the sitemap (file path or URL) it was read from."""

    record: Url | SitemapRef
    source: str


@dataclass(slots=True)
class ReadReport:
    """What reading found: findings in document order and the sitemaps read."""

    findings: list[Finding] = field(default_factory=list)
    sitemaps: list[str] = field(default_factory=list)
    #: Entries present in the documents but not yielded (no usable loc, or refused).
    dropped: int = 0
    #: For a URL or a site: the discovered sitemaps with their status (a
    #: :class:`~sitemapkit.core.discovery.SitemapTree`), once reading ended.
    tree: SitemapTree | None = None

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")


def read_file(
    path: str,
    *,
    published_at: str | None = None,
    strict: bool = False,
    report: ReadReport | None = None,
    max_bytes: int | None = None,
) -> Iterator[SourcedRecord]:
    """Stream the records of one local sitemap file (``-`` for standard input).

    ``published_at`` is the file's URL: relative locs are resolved against it.
    """
    return _records(
        _file_batches(
            path, published_at=published_at, strict=strict, report=report, max_bytes=max_bytes
        )
    )


def _records(batches: Iterator[tuple[str, Sequence[Url | SitemapRef]]]) -> Iterator[SourcedRecord]:
    for source, records in batches:
        for rec in records:
            yield SourcedRecord(rec, source)


def _file_batches(
    path: str,
    *,
    published_at: str | None,
    strict: bool,
    report: ReadReport | None,
    max_bytes: int | None = None,
) -> Iterator[tuple[str, Sequence[Url | SitemapRef]]]:
    where = "<stdin>" if path == "-" else path
    try:
        stream = open_input(path)
    except OSError as exc:
        raise InputError(f"cannot open {where!r}: {exc.strerror}", where=where) from None
    parser = SitemapParser(
        source=where,
        base_url=published_at,
        strict=strict,
        max_bytes=DEFAULT_MAX_BYTES if max_bytes is None else max_bytes,
    )
    rep = report if report is not None else ReadReport()
    rep.sitemaps.append(where)
    kept = 0
    with stream:
        try:
            while chunk := stream.read(1 << 20):
                records = parser.feed(chunk)
                if records:
                    kept += len(records)
                    yield where, records
            records = parser.close()
            if records:
                kept += len(records)
                yield where, records
        finally:
            rep.findings.extend(parser.findings)
            rep.dropped += max(0, parser.entries - kept)


class ReadKeywords(TypedDict, total=False):
    """The keywords of :func:`read`: those of :func:`read_batches` (a test keeps them the same)."""

    published_at: str | None
    follow: bool
    strict: bool
    report: ReadReport | None


def read(target: str, **options: Unpack[ReadKeywords]) -> Iterator[SourcedRecord]:
    """Stream the records of a sitemap file, a sitemap URL, a robots.txt URL or a site.

    The keywords are :func:`read_batches`'s.

    A local index's children are listed as ``SitemapRef`` records (they live at URLs);
    URLs are fetched and followed through :mod:`sitemapkit.io.fetch`.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "s.txt")
    >>> _ = open(p, "w").write("https://example.com/a\\n")
    >>> [r.record.loc for r in read(p)]
    ['https://example.com/a']
    """
    return _records(read_batches(target, **options))


def read_batches(
    target: str,
    *,
    published_at: str | None = None,
    follow: bool = True,
    strict: bool = False,
    report: ReadReport | None = None,
) -> Iterator[tuple[str, Sequence[Url | SitemapRef]]]:
    """:func:`read` by the batch: ``(source, records)`` pairs, in the same order.

    Less overhead per record, for consumers of millions of them. A batch read by a
    parser process may be a lazy sequence that builds its ``Url`` objects only when
    they are read (it has a ``loc_text`` attribute: the locs joined by line breaks).
    """
    if _URL.match(target) and not Path(target).exists():
        # Imported here: httpx and the runner are not needed to read files, so reading a
        # file does not pay for importing them.
        from .io.fetch import read_url_records

        records = read_url_records(target, follow=follow, strict=strict, report=report)
        with records:
            yield from records.batches()
        if report is not None:
            report.tree = records.tree
        return
    yield from _file_batches(target, published_at=published_at, strict=strict, report=report)


def loads(
    data: bytes, *, strict: bool = True, base_url: str | None = None
) -> list[Url | SitemapRef]:
    """Parse one small document (any format, gzip or not) into records.

    Strict by default, like ``json.loads``: the first problem raises
    :class:`~sitemapkit.ParseError`; ``strict=False`` skips bad entries silently
    (use :class:`~sitemapkit.core.parse.SitemapParser` to see the findings).

    >>> [u.loc for u in loads(b"https://example.com/a\\n")]
    ['https://example.com/a']
    """
    return parse_bytes(data, strict=strict, base_url=base_url)[0]
