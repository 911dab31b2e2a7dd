"""Reading sitemaps: files, standard input and (through ``io.fetch``) URLs and sites.

``read()`` yields records (:class:`~sitemapkit.Url` for pages, :class:`~sitemapkit.SitemapRef`
for index and robots.txt entries when children are not followed) with the sitemap they
came from; findings are collected on the :class:`ReadReport` passed in, or dropped.

A local robots.txt (recognised by its name, its ``published_at`` URL or its content) lists
sitemaps, read with the one robots.txt parser (:mod:`sitemapkit.core.robots`). The
children of a local index or robots.txt are read depth-first in listing order: from the
file beside it when there is one (the rule of ``validate``: the child's URL under the
index's directory URL, or, when the index's URL is unknown, the file of the same name, the
rule of ``write``), else fetched, unless ``offline``. A document already read is not read
again; one that leads back to itself is a cycle (SM506).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

from .core.finding import Finding, Severity
from .core.model import SitemapRef, Url
from .core.parse import DEFAULT_MAX_BYTES, SitemapParser, parse_bytes
from .core.robots import MAX_ROBOTS_BYTES, parse_robots
from .core.trusted import trusted_ref
from .errors import InputError
from .io import target as kinds
from .io.files import open_input

if TYPE_CHECKING:  # not imported at run time: reading files does not need discovery
    from .core.discovery import SitemapTree
    from .io.fetch.options import FetchKeywords

__all__ = [
    "ReadKeywords",
    "ReadReport",
    "SourcedRecord",
    "loads",
    "read",
    "read_batches",
    "read_file",
    "read_targets",
]


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
    path: str | os.PathLike[str],
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
            os.fspath(path),
            published_at=published_at,
            strict=strict,
            report=report,
            max_bytes=max_bytes,
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
    rep = report if report is not None else ReadReport()
    head = stream.peek(8192)[:8192] if hasattr(stream, "peek") else b""
    if kinds.is_robots(path, published_at, head):
        with stream:
            data = stream.read(MAX_ROBOTS_BYTES + 1)
        yield from _robots_batch(data, where, published_at, rep)
        return
    parser = SitemapParser(
        source=where,
        base_url=published_at,
        strict=strict,
        max_bytes=DEFAULT_MAX_BYTES if max_bytes is None else max_bytes,
    )
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


def _robots_batch(
    data: bytes, where: str, url: str | None, report: ReadReport
) -> Iterator[tuple[str, Sequence[Url | SitemapRef]]]:
    """The sitemaps a local robots.txt lists, as one batch of ``SitemapRef``."""
    parsed = parse_robots(
        data[:MAX_ROBOTS_BYTES], url, truncated=len(data) > MAX_ROBOTS_BYTES, where=where
    )
    report.sitemaps.append(where)
    report.findings.extend(parsed.findings)
    if not parsed.sitemaps:
        why = kinds.no_sitemap_line(data)
        report.findings.append(
            Finding("SM012", "warning", f"No sitemap found: {why}; nothing was read", where)
        )
        return
    yield where, [trusted_ref(u) for u in parsed.sitemaps]


class ReadKeywords(TypedDict, total=False):
    """The keywords of :func:`read`: those of :func:`read_batches` (a test keeps them the same)."""

    published_at: str | None
    follow: bool
    strict: bool
    offline: bool
    report: ReadReport | None
    fetch: FetchKeywords | None


def read(target: str, **options: Unpack[ReadKeywords]) -> Iterator[SourcedRecord]:
    """Stream the records of a sitemap file, a robots.txt, a sitemap URL or a site.

    The keywords are :func:`read_batches`'s.

    An index's (or robots.txt's) children are followed: a local one's from the files
    beside it, else fetched; URLs are fetched and followed through
    :mod:`sitemapkit.io.fetch`. With ``follow=False`` its entries are ``SitemapRef``
    records. When nothing could be found or read, the report holds a finding that says
    what was tried (SM012).

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
    offline: bool = False,
    report: ReadReport | None = None,
    fetch: FetchKeywords | None = None,
) -> Iterator[tuple[str, Sequence[Url | SitemapRef]]]:
    """:func:`read` by the batch: ``(source, records)`` pairs, in the same order.

    Less overhead per record, for consumers of millions of them. A batch read by a
    parser process may be a lazy sequence that builds its ``Url`` objects only when
    they are read (it has a ``loc_text`` attribute: the locs joined by line breaks).
    ``offline`` reads local files only: children that are not beside their index are
    reported (SM012), not fetched. ``fetch`` bounds and tunes what is fetched: the
    keywords of :func:`sitemapkit.io.fetch.discover` (``max_sitemaps``, ``max_depth``,
    ``max_bytes``, ``max_time``, ``timeout``, ``concurrency``, ``user_agent``, ...), as
    the command's ``--max-*`` options do; a budget that cuts the read is a finding (SM012)
    naming what was not read.
    """
    yield from read_targets(
        [(target, published_at)],
        follow=follow,
        strict=strict,
        offline=offline,
        report=report,
        fetch=fetch,
    )


def read_targets(
    targets: Sequence[tuple[str, str | None]],
    *,
    follow: bool = True,
    strict: bool = False,
    offline: bool = False,
    report: ReadReport | None = None,
    fetch: FetchKeywords | None = None,
) -> Iterator[tuple[str, Sequence[Url | SitemapRef]]]:
    """:func:`read_batches` of several ``(target, published_at)`` pairs, in the order
    given; a local document is read once, however many of the targets lead to it.
    ``fetch``: the keywords of :func:`sitemapkit.io.fetch.discover` for every URL read
    (budgets, timeouts); its ``max_time`` bounds all of them together."""
    rep = report if report is not None else ReadReport()
    walk = _LocalWalk(follow=follow, strict=strict, offline=offline, report=rep)
    walk.fetch_with(fetch)
    for target, published_at in targets:
        if kinds.is_url(target):
            if offline:
                raise InputError(
                    f"{target!r} is a URL and --offline reads local files only",
                    where=target,
                    hint="leave out --offline to fetch it",
                )
            yield from _url_batches(
                target, follow=follow, strict=strict, report=rep, fetch=walk.fetch_now()
            )
        elif kinds.is_folder(target):
            yield from walk.folder(Path(target), published_at)
        elif target == "-" or "file:" + _resolved(target) not in walk.done:
            yield from walk.document(target, published_at, ())


def _url_batches(
    target: str,
    *,
    follow: bool,
    strict: bool,
    report: ReadReport,
    fetch: FetchKeywords | None = None,
) -> Iterator[tuple[str, Sequence[Url | SitemapRef]]]:
    # Imported here: httpx and the runner are not needed to read files, so reading a
    # file does not pay for importing them.
    from .io.fetch import read_url_records

    options: FetchKeywords = {**(fetch or {}), "follow": follow, "strict": strict}
    options["report"] = report
    records = read_url_records(target, **options)
    with records:
        yield from records.batches()
    report.tree = records.tree


@dataclass(slots=True)
class _LocalWalk:
    """A local document and, when following, its children depth-first in listing order."""

    follow: bool
    strict: bool
    offline: bool
    report: ReadReport
    #: visit keys of the documents read (their URL, or their resolved path)
    done: set[str] = field(default_factory=set)
    fetch: FetchKeywords | None = None
    ends: float | None = None  # time.monotonic() when fetch's max_time is spent

    def fetch_with(self, fetch: FetchKeywords | None) -> None:
        self.fetch = fetch
        if fetch is not None and "max_time" in fetch:
            self.ends = time.monotonic() + fetch["max_time"]

    def fetch_now(self) -> FetchKeywords | None:
        """The fetch keywords of the next crawl: what is left of max_time."""
        if self.fetch is None or self.ends is None:
            return self.fetch
        return {**self.fetch, "max_time": max(self.ends - time.monotonic(), 1e-3)}

    def document(
        self, path: str, url: str | None, above: tuple[str, ...]
    ) -> Iterator[tuple[str, Sequence[Url | SitemapRef]]]:
        from .core.discovery import visit_key

        keys = ("file:" + _resolved(path),) + ((visit_key(url),) if url is not None else ())
        self.done.update(keys)
        refs: list[SitemapRef] = []
        for source, records in _file_batches(
            path, published_at=url, strict=self.strict, report=self.report
        ):
            if self.follow and records and type(records[0]) is SitemapRef:
                refs.extend(r for r in records if type(r) is SitemapRef)
                records = [r for r in records if type(r) is not SitemapRef]
                if not records:
                    continue
            yield source, records
        if refs:
            yield from self._children(path, url, refs, keys, (*above, *keys))

    def folder(
        self, folder: Path, url: str | None
    ) -> Iterator[tuple[str, Sequence[Url | SitemapRef]]]:
        """A build folder: its robots.txt, else every sitemap file in it, indexes first
        (their children beside them are read through them, once), in name order."""
        robots = kinds.folder_robots(folder)
        if robots is not None:
            yield from self.document(str(robots), kinds.join_url(url, robots.name), ())
            return
        files = kinds.folder_sitemaps(folder)
        if not files:
            self.report.findings.append(
                Finding(
                    "SM012",
                    "warning",
                    f"No sitemap found: {kinds.EMPTY_FOLDER}; nothing was read",
                    str(folder),
                )
            )
            return
        for path in files:
            if "file:" + _resolved(str(path)) not in self.done:
                yield from self.document(str(path), kinds.join_url(url, path.name), ())

    def _children(
        self,
        path: str,
        url: str | None,
        refs: list[SitemapRef],
        own: tuple[str, ...],
        above: tuple[str, ...],
    ) -> Iterator[tuple[str, Sequence[Url | SitemapRef]]]:
        from .core.discovery import visit_key

        where = "<stdin>" if path == "-" else path
        listed: set[str] = set()
        for ref in refs:
            key = visit_key(ref.loc)
            if key in listed:
                self._finding(
                    "SM507", "warning", f"It lists {ref.loc!r} twice; read once", where, ref
                )
                continue
            listed.add(key)
            local = "no local file (standard input)" if path == "-" else _beside(path, url, ref.loc)
            keys = (key, "file:" + _resolved(local.path)) if isinstance(local, _Local) else (key,)
            back = next((k for k in keys if k in above), None)
            if back is not None:
                what = "itself" if back in own else f"{ref.loc!r}, which leads back to it"
                self._finding(
                    "SM506", "error", f"It lists {what}: a cycle, not followed again", where, ref
                )
                continue
            if any(k in self.done for k in keys):
                continue  # read already, through another index
            if isinstance(local, _Local):
                yield from self.document(local.path, ref.loc, above)
            elif self.offline:
                self._finding(
                    "SM012",
                    "warning",
                    f"{ref.loc!r} was not fetched (--offline): {local}",
                    where,
                    ref,
                )
            else:
                self.done.add(key)
                yield from _url_batches(
                    ref.loc,
                    follow=True,
                    strict=self.strict,
                    report=self.report,
                    fetch=self.fetch_now(),
                )

    def _finding(
        self, rule: str, severity: Severity, message: str, where: str, ref: SitemapRef
    ) -> None:
        self.report.findings.append(Finding(rule, severity, message, where, loc=ref.loc))


@dataclass(frozen=True, slots=True)
class _Local:
    path: str


def _resolved(path: str) -> str:
    return path if path == "-" else str(Path(path).resolve())


def _beside(index: str, url: str | None, child: str) -> _Local | str:
    """The local file of ``child`` beside the index at ``index``, or why there is none
    (:func:`sitemapkit.io.target.beside`)."""
    found = kinds.beside(index, url, child)
    return _Local(str(found)) if isinstance(found, Path) else found


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
