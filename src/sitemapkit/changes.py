"""Diffing two sets of sitemaps: URLs added, removed and changed, in constant memory.

Each side is read as a stream of :class:`~sitemapkit.Url` records and turned into one line
per URL, ``loc TAB sequence TAB canonical-JSON``. The lines are sorted externally
(:mod:`sitemapkit.io.extsort`: sorted runs on disk, merged with ``heapq.merge``), so memory
stays bounded however many URLs there are; the two sorted streams are then merge-joined on
``loc``. The canonical JSON holds every field of the record except ``loc`` (``None`` and
empty lists left out, keys sorted), so two records are equal exactly when their fields are;
two lastmods that differ as text are compared as instants (``10:00:00Z`` and
``12:00:00.000+02:00`` are one time: no change).

A loc listed more than once on one side counts once, with its first occurrence (as the
writer keeps it); the others are counted in the summary's ``*_duplicates``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, TypedDict, Unpack

from .core.finding import Finding
from .core.model import SitemapRef, Url
from .core.w3cdate import parse_usable
from .errors import FetchError, InputError, ParseError, SitemapError
from .io.child import Child, ChildError, ErrorRecord, serve
from .io.extsort import DEFAULT_MAX_BYTES, ExternalSorter, merge_runs
from .io.resource import Closeable
from .io.target import local_child
from .reader import ReadReport, read, read_file

__all__ = [
    "Change",
    "Diff",
    "DiffKeywords",
    "DiffOptions",
    "DiffSummary",
    "canonical_json",
    "diff",
    "iter_urls",
]

ChangeKind = Literal["added", "removed", "changed"]

_URL_TARGET: Final = ("http://", "https://")
#: Names the writer gives the root of a set (``--index auto``: index or the single shard).
_ENTRY_NAMES: Final = ("sitemap.xml", "sitemap.xml.gz", "sitemap.txt", "sitemap.txt.gz")
_SITEMAP_SUFFIXES: Final = (".xml", ".xml.gz", ".txt", ".txt.gz")
#: Findings meaning a sitemap, or the rest of one, could not be read (RULES.md: SM004 not
#: well-formed, SM005 HTML, SM007 bad compression, SM012 fetch failed). Its URLs would show
#: as removed or added, so such a side is refused unless ``partial=True``.
_INCOMPLETE: Final = frozenset(["SM004", "SM005", "SM007", "SM012"])
#: Below this many input bytes both sides are read here: a process takes ~0.3 s to start.
PARALLEL_BYTES: Final = 4 << 20
_SEQ: Final = 10  # hex digits of the sequence number: first occurrence of a loc wins
#: The record shape of ``Url.to_record`` with every field absent.
_EMPTY: Final[dict[str, Any]] = {
    "lastmod": None,
    "changefreq": None,
    "priority": None,
    "images": [],
    "videos": [],
    "news": None,
    "alternates": [],
}


@dataclass(frozen=True, slots=True)
class Change:
    """One URL that differs between the two sets.

    ``kind`` is ``"added"`` (only in the new set), ``"removed"`` (only in the old set) or
    ``"changed"`` (in both, with different fields, named in ``fields``). ``old`` and ``new``
    are the records in the shape ``Url.to_record()`` gives (``None`` on the side that lacks
    the URL); ``Url.from_record(change.new)`` turns one back into a ``Url``.
    """

    kind: ChangeKind
    loc: str
    old: dict[str, Any] | None
    new: dict[str, Any] | None
    fields: tuple[str, ...] = ()

    def to_record(self) -> dict[str, Any]:
        """``{"change": …, "loc": …, "fields": […], "old": {…}|null, "new": {…}|null}``."""
        return {
            "change": self.kind,
            "loc": self.loc,
            "fields": list(self.fields),
            "old": self.old,
            "new": self.new,
        }


@dataclass(slots=True)
class DiffSummary:
    """Counts of a diff; final once ``complete`` is true (the iterator is exhausted).

    ``old`` and ``new`` count distinct URLs on each side; ``*_duplicates`` count the
    repeated listings that were ignored.
    """

    old: int = 0
    new: int = 0
    added: int = 0
    removed: int = 0
    changed: int = 0
    unchanged: int = 0
    old_duplicates: int = 0
    new_duplicates: int = 0
    complete: bool = False

    @property
    def equal(self) -> bool:
        """True when no URL was added, removed or changed."""
        return not (self.added or self.removed or self.changed)

    def __str__(self) -> str:
        text = (
            f"{self.added:,} added, {self.removed:,} removed, {self.changed:,} changed, "
            f"{self.unchanged:,} unchanged (old {self.old:,} URLs, new {self.new:,} URLs)"
        )
        dups = [
            f"{n:,} repeated in the {side} set"
            for side, n in (("old", self.old_duplicates), ("new", self.new_duplicates))
            if n
        ]
        return text + (f"; {', '.join(dups)} (first listing used)" if dups else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class DiffOptions:
    """How a :class:`Diff` runs, built once from its keywords (:func:`diff` says what each
    means)."""

    tmpdir: str | Path | None = None
    max_memory: int = DEFAULT_MAX_BYTES
    strict: bool = False
    partial: bool = False
    parallel: bool = False
    parallel_bytes: int = PARALLEL_BYTES


class DiffKeywords(TypedDict, total=False):
    """The keywords of :func:`diff` and :class:`Diff`: the fields of :class:`DiffOptions`
    (a test keeps them the same)."""

    tmpdir: str | Path | None
    max_memory: int
    strict: bool
    partial: bool
    parallel: bool
    parallel_bytes: int


class Diff(Closeable):
    """The changes from one set of sitemaps to another, as an iterator, plus a summary.

    Created by :func:`diff`. Iterating yields :class:`Change` objects in ``loc`` order
    (byte order of the URI); ``summary`` fills in as it goes and is final when
    ``summary.complete``. ``old_report``/``new_report`` collect the reading findings.
    Temporary files live in a folder under ``tmpdir`` that is removed when the iterator
    ends or :meth:`close` is called (use ``with``).
    """

    def __init__(self, old: str, new: str, **options: Unpack[DiffKeywords]) -> None:
        self.old = old
        self.new = new
        self.summary = DiffSummary()
        self.old_report = ReadReport()
        self.new_report = ReadReport()
        self._options = DiffOptions(**options)
        self._gen = self._run()

    def __iter__(self) -> Diff:
        return self

    def __next__(self) -> Change:
        return next(self._gen)

    def run(self) -> DiffSummary:
        """Consume the remaining changes and return the final summary."""
        for _ in self._gen:
            pass
        return self.summary

    def close(self) -> None:
        """Stop early and remove the temporary files."""
        self._gen.close()

    def _run(self) -> Generator[Change, None, None]:
        opts = self._options
        work = Path(tempfile.mkdtemp(prefix="sitemapkit-diff-", dir=opts.tmpdir))
        child: _SideProcess | None = None
        try:
            if opts.parallel and _worth_a_process(self.old, self.new, opts.parallel_bytes):
                # the old side is read in a second process while this one reads the new
                child = _SideProcess(self.old, work, opts.max_memory, opts.strict)
                new = self._sort(work, self.new, self.new_report, "new")
                old_lines = child.result(self.old_report)
            else:
                old_lines = self._sort(work, self.old, self.old_report, "old").sorted()
                new = self._sort(work, self.new, self.new_report, "new")
            self._check_complete(self.old_report, "old")
            self._check_complete(self.new_report, "new")
            yield from self._join(old_lines, new.sorted())
            self.summary.complete = True
        finally:
            if child is not None:
                child.stop()
            shutil.rmtree(work, ignore_errors=True)

    def _sort(self, work: Path, target: str, report: ReadReport, side: str) -> ExternalSorter:
        opts = self._options
        sorter = ExternalSorter(work, max_bytes=opts.max_memory, prefix=side)
        sorter.extend(_lines(iter_urls(target, strict=opts.strict, report=report)))
        return sorter

    def _check_complete(self, report: ReadReport, side: str) -> None:
        lost = [
            f
            for f in report.findings
            if f.rule in _INCOMPLETE and (f.severity == "error" or f.rule == "SM012")
        ]
        if lost and not self._options.partial:
            first = lost[0]
            error: type[SitemapError] = FetchError if first.rule == "SM012" else ParseError
            raise error(
                f"the {side} set was not read completely ({first.rule}: {first.message}); "
                "a diff would report its unread URLs as changes",
                where=first.where,
                hint="fix the input, or diff what could be read with --partial",
            )

    def _join(self, old_lines: Iterator[bytes], new_lines: Iterator[bytes]) -> Iterator[Change]:
        s = self.summary
        olds = _unique(old_lines, s, "old")
        news = _unique(new_lines, s, "new")
        a = next(olds, None)
        b = next(news, None)
        while a is not None and b is not None:
            if a[0] < b[0]:
                s.removed += 1
                yield _change("removed", a, None)
                a = next(olds, None)
            elif a[0] > b[0]:
                s.added += 1
                yield _change("added", None, b)
                b = next(news, None)
            else:
                change = None if a[1] == b[1] else _change("changed", a, b)
                if change is None or not change.fields:
                    s.unchanged += 1
                else:
                    s.changed += 1
                    yield change
                a = next(olds, None)
                b = next(news, None)
        while a is not None:
            s.removed += 1
            yield _change("removed", a, None)
            a = next(olds, None)
        while b is not None:
            s.added += 1
            yield _change("added", None, b)
            b = next(news, None)


def diff(old: str, new: str, **options: Unpack[DiffKeywords]) -> Diff:
    """Compare two sets of sitemaps; return an iterator of :class:`Change` with a summary.

    ``old`` and ``new`` are each a sitemap file (an index's children are read from the
    files of the same names beside it), a folder of written sitemaps (its ``sitemap.xml``
    or, without one, every ``*.xml[.gz]``/``*.txt[.gz]`` file in it), a sitemap URL or a
    site (read through :func:`sitemapkit.read`). Memory is bounded by ``max_memory``
    bytes per side for the sort buffers; the rest goes to temporary files in ``tmpdir``
    (about 100 bytes per plain URL).

    Reading problems are collected in ``old_report``/``new_report``. When a sitemap could
    not be fetched or read to its end (SM012, SM004, SM005, SM007), iteration raises
    :class:`~sitemapkit.FetchError` or :class:`~sitemapkit.ParseError` before any change
    is yielded, since the unread URLs would look removed or added; ``partial=True`` diffs
    what could be read instead. ``strict=True`` stops at the first problem of any kind.

    With ``parallel=True`` and two local inputs of at least ``parallel_bytes`` together
    (4 MiB: below that, starting a process costs more than it saves), the old side is read
    and sorted in a second process (a fresh interpreter, started by
    :mod:`sitemapkit.io.child`; it does not import your main module again) while this one
    reads the new side; each process keeps its own ``max_memory`` budget.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> for name in ("x", "y"):
    ...     _ = open(os.path.join(d, name + ".txt"), "w").write(f"https://example.com/{name}\\n")
    >>> with diff(os.path.join(d, "x.txt"), os.path.join(d, "y.txt")) as changes:
    ...     [(c.kind, c.loc) for c in changes], changes.summary.removed
    ([('removed', 'https://example.com/x'), ('added', 'https://example.com/y')], 1)
    """
    return Diff(old, new, **options)


# -- the second process ----------------------------------------------------------------------


def _local_size(target: str) -> int | None:
    """Bytes of a local file or of the sitemap files of a folder; None if not local."""
    if target == "-":
        return None
    path = Path(target)
    try:
        if path.is_dir():
            return sum(
                p.stat().st_size
                for p in path.iterdir()
                if p.name.endswith(_SITEMAP_SUFFIXES) and p.is_file()
            )
        return path.stat().st_size if path.is_file() else None
    except OSError:
        return None


def _worth_a_process(old: str, new: str, least: int) -> bool:
    a, b = _local_size(old), _local_size(new)
    cpus = os.process_cpu_count() if hasattr(os, "process_cpu_count") else os.cpu_count()
    return a is not None and b is not None and a + b >= least and (cpus or 1) > 1


@dataclass(frozen=True, slots=True)
class _SortRequest:
    target: str
    work: str
    max_memory: int
    strict: bool


@dataclass(frozen=True, slots=True)
class _SortedSide:
    """The child's answer: its sorted runs, or the error that stopped it, and its report."""

    runs: list[str]
    findings: list[Finding]
    sitemaps: list[str]
    error: ErrorRecord | None = None


def _sort_side(request: object) -> _SortedSide:  # pragma: no cover - in the child process
    assert isinstance(request, _SortRequest)
    report = ReadReport()
    try:
        sorter = ExternalSorter(request.work, max_bytes=request.max_memory, prefix="old")
        sorter.extend(_lines(iter_urls(request.target, strict=request.strict, report=report)))
        runs = [str(p) for p in sorter.finish()]
    except SitemapError as exc:
        return _SortedSide([], report.findings, report.sitemaps, ErrorRecord.of(exc))
    return _SortedSide(runs, report.findings, report.sitemaps)


def _side_main() -> None:  # pragma: no cover - runs in the child process
    serve(_sort_side)


class _SideProcess:
    """Reads and sorts one side in a child process; :meth:`result` merges its runs."""

    def __init__(self, target: str, work: Path, max_memory: int, strict: bool) -> None:
        self._child = Child("sitemapkit.changes:_side_main", name="the diff's reader process")
        self._child.send(_SortRequest(target, str(work), max_memory, strict))

    def result(self, report: ReadReport) -> Iterator[bytes]:
        try:
            reply = self._child.receive()
        except ChildError as exc:
            raise RuntimeError(f"the diff's reader process failed: {exc}") from exc
        assert isinstance(reply, _SortedSide)
        report.findings.extend(reply.findings)
        report.sitemaps.extend(reply.sitemaps)
        if reply.error is not None:
            raise reply.error.exception()
        return merge_runs([Path(p) for p in reply.runs])

    def stop(self) -> None:
        self._child.kill()


# -- reading a side --------------------------------------------------------------------------


def iter_urls(
    target: str, *, strict: bool = False, report: ReadReport | None = None
) -> Iterator[Url]:
    """The ``Url`` records of a file, a folder of sitemaps, a sitemap URL or a site."""
    rep = report if report is not None else ReadReport()
    if target == "-":
        yield from _urls_of_file(Path("-"), strict, rep, set(), follow=False)
        return
    path = Path(target)
    if path.is_dir():
        entry = next((path / n for n in _ENTRY_NAMES if (path / n).is_file()), None)
        if entry is not None:
            yield from _urls_of_file(entry, strict, rep, set(), follow=True)
            return
        files = sorted(
            p for p in path.iterdir() if p.is_file() and p.name.endswith(_SITEMAP_SUFFIXES)
        )
        if not files:
            raise InputError(
                f"folder {target!r} holds no sitemap files (*.xml, *.xml.gz, *.txt, *.txt.gz)",
                where=target,
            )
        for f in files:
            # an index's children are files of this folder too: read each once
            yield from _urls_of_file(f, strict, rep, set(), follow=False)
        return
    if target.startswith(_URL_TARGET) and not path.exists():
        for item in read(target, strict=strict, report=rep):
            if isinstance(item.record, Url):
                yield item.record
        return
    yield from _urls_of_file(path, strict, rep, set(), follow=True)


def _urls_of_file(
    path: Path, strict: bool, report: ReadReport, seen: set[Path], *, follow: bool
) -> Iterator[Url]:
    if str(path) != "-":
        seen.add(path.resolve())
    for item in read_file(str(path), strict=strict, report=report):
        rec = item.record
        if isinstance(rec, Url):
            yield rec
        elif follow and isinstance(rec, SitemapRef):
            child = _local_child(path, rec)
            if child.resolve() not in seen:
                yield from _urls_of_file(child, strict, report, seen, follow=True)


def _local_child(index: Path, ref: SitemapRef) -> Path:
    child = local_child(index, ref.loc)
    if child is None:
        raise InputError(
            f"index {str(index)!r} lists {ref.loc!r}, which is not a file beside it",
            where=str(index),
            hint="give the index's URL instead to fetch its sitemaps",
        )
    return Path(child)


# -- lines and records -----------------------------------------------------------------------


def canonical_json(url: Url) -> str:
    """The fields of ``url`` except ``loc`` as compact JSON, keys sorted, empties left out."""
    if not (url.images or url.videos or url.news or url.alternates):
        # fast path, byte-identical to json.dumps below: these values need no escaping
        parts = []
        if url.changefreq is not None:
            parts.append(f'"changefreq":"{url.changefreq}"')
        if url.lastmod is not None:
            parts.append(f'"lastmod":"{url.lastmod}"')
        if url.priority is not None:
            parts.append(f'"priority":{url.priority!r}')
        return "{" + ",".join(parts) + "}"
    rec = url.to_record()
    del rec["kind"], rec["loc"]
    compact = {k: v for k, v in rec.items() if v is not None and v != []}
    return json.dumps(compact, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _lines(urls: Iterator[Url]) -> Iterator[bytes]:
    # Plain URLs share few (lastmod, changefreq, priority) values: their JSON is cached.
    cache: dict[tuple[object, ...], str] = {}
    for seq, url in enumerate(urls):
        loc = url.loc
        if "\t" in loc or "\n" in loc:  # never after iri_to_uri; keeps the line format safe
            loc = loc.replace("\t", "%09").replace("\n", "%0A")
        if url.images or url.videos or url.news or url.alternates:
            data = canonical_json(url)
        else:
            key = (url.lastmod, url.changefreq, url.priority)
            found = cache.get(key)
            if found is None:
                if len(cache) >= 4096:
                    cache.clear()
                found = cache[key] = canonical_json(url)
            data = found
        yield f"{loc}\t{seq:0{_SEQ}x}\t{data}\n".encode()


def _unique(lines: Iterator[bytes], s: DiffSummary, side: str) -> Iterator[tuple[bytes, bytes]]:
    """``(loc, json)`` of the first listing of each loc, counting URLs and repeats."""

    def count() -> None:
        setattr(s, side, distinct)
        setattr(s, f"{side}_duplicates", dups)

    prev = None
    distinct = dups = 0
    start = _SEQ + 1
    for line in lines:
        loc, _, rest = line.partition(b"\t")
        if loc == prev:
            dups += 1
            continue
        prev = loc
        distinct += 1
        if not distinct & 0xFFF:
            count()
        yield loc, rest[start:-1]
    count()


def _record(loc: str, data: bytes) -> dict[str, Any]:
    return {"kind": "url", "loc": loc, **_EMPTY, **json.loads(data)}


def _change(
    kind: ChangeKind, a: tuple[bytes, bytes] | None, b: tuple[bytes, bytes] | None
) -> Change:
    loc = (a or b or (b"", b""))[0].decode()
    old = None if a is None else _record(loc, a[1])
    new = None if b is None else _record(loc, b[1])
    fields: tuple[str, ...] = ()
    if old is not None and new is not None:
        fields = tuple(k for k in _EMPTY if old[k] != new[k])
        if "lastmod" in fields and _same_instant(old["lastmod"], new["lastmod"]):
            fields = tuple(k for k in fields if k != "lastmod")
    return Change(kind, loc, old, new, fields)


def _same_instant(a: object, b: object) -> bool:
    """Whether two lastmods are one instant written two ways (``12:00:00+02:00`` and
    ``10:00:00.000+00:00``): both times with a zone. Dates, and times without a zone,
    are the same only as the same text (``2024-05-01`` is not its day's first instant)."""
    if not (isinstance(a, str) and isinstance(b, str)):
        return False
    try:
        pa, pb = parse_usable(a), parse_usable(b)
    except ValueError:
        return False
    return (
        pa.offset_minutes is not None
        and pb.offset_minutes is not None
        and pa.granularity >= 4
        and pb.granularity >= 4
        and pa.to_datetime() == pb.to_datetime()
        and pa.fraction.rstrip("0") == pb.fraction.rstrip("0")  # beyond the microsecond
    )
