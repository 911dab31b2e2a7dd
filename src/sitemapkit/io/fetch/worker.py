"""io.fetch: parsing in worker processes, on :mod:`sitemapkit.io.child`.

Parsing is CPU-bound Python, so the documents of a tree with more than one sitemap are
parsed in worker processes fed with the raw (still compressed) chunks, while the runner does
the network I/O. Each worker holds any number of open documents; requests and replies are
the typed values below, pipelined, answered in order.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from ...core.finding import Finding
from ...core.model import Url
from ...core.parse import Kind, Record, SitemapParser
from ...core.trusted import trusted_url
from ...errors import ParseError, SitemapError
from ..child import AsyncChild, ErrorRecord, serve

__all__ = [
    "Abort",
    "Close",
    "Feed",
    "Open",
    "Parsed",
    "ParserArgs",
    "PlainUrls",
    "Pool",
    "Worker",
]

_HINT = "run with workers=0 to parse in this process"


# -- what travels -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ParserArgs:
    """What the parser of one fetched document is built from, here or in a worker."""

    url: str  # the final URL: it names the document and resolves its relative locs
    max_bytes: int
    strict: bool

    def parser(self) -> SitemapParser:
        return SitemapParser(
            source=self.url, base_url=self.url, max_bytes=self.max_bytes, strict=self.strict
        )


@dataclass(frozen=True, slots=True)
class Open:
    doc: int
    args: ParserArgs
    keep_urls: bool  # False: the Url records are dropped in the worker (nobody reads them)


@dataclass(frozen=True, slots=True)
class Feed:
    doc: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Close:
    doc: int


@dataclass(frozen=True, slots=True)
class Abort:
    doc: int


@dataclass(frozen=True, slots=True)
class Parsed:
    """A worker's answer about one document: the records of one request and the parser's
    counters; ``findings`` once the document ended, ``error`` when it ended in one."""

    records: Sequence[Record]
    kind: Kind | None
    bytes_in: int
    entries: int
    findings: list[Finding] | None = None
    error: ErrorRecord | None = None


def _plain_url(loc: str, lastmod: str, changefreq: str, priority: float | None) -> Url:
    """The empty string stands for an absent value (no such value is ever empty)."""
    return trusted_url(loc, lastmod or None, changefreq or None, priority)


class PlainUrls(Sequence[Url]):
    """A batch of plain Urls (loc, lastmod, changefreq and priority only) as a parser
    worker sends it: columns, built into :class:`~sitemapkit.Url` objects only when
    read. ``loc_text`` holds the locs joined by line breaks (no loc holds one), for
    consumers that need nothing else. Columns pickle about ten times faster than objects.
    """

    __slots__ = ("_changefreqs", "_columns", "_lastmods", "_priorities", "loc_text")

    def __init__(
        self, loc_text: str, lastmods: str, changefreqs: str, priorities: list[float | None]
    ) -> None:
        self.loc_text = loc_text
        self._lastmods = lastmods
        self._changefreqs = changefreqs
        self._priorities = priorities
        self._columns: tuple[list[str], list[str], list[str]] | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        return PlainUrls, (self.loc_text, self._lastmods, self._changefreqs, self._priorities)

    def __len__(self) -> int:
        return len(self._priorities)

    def _split(self) -> tuple[list[str], list[str], list[str]]:
        if self._columns is None:
            self._columns = (
                self.loc_text.split("\n"),
                self._lastmods.split("\n"),
                self._changefreqs.split("\n"),
            )
        return self._columns

    def __iter__(self) -> Iterator[Url]:
        return map(_plain_url, *self._split(), self._priorities)

    @overload
    def __getitem__(self, i: int) -> Url: ...
    @overload
    def __getitem__(self, i: slice) -> list[Url]: ...
    def __getitem__(self, i: int | slice) -> Url | list[Url]:
        locs, lastmods, changefreqs = self._split()
        if isinstance(i, slice):
            return list(map(_plain_url, locs[i], lastmods[i], changefreqs[i], self._priorities[i]))
        return _plain_url(locs[i], lastmods[i], changefreqs[i], self._priorities[i])

    @classmethod
    def pack(cls, records: list[Record]) -> Sequence[Record]:
        """``records`` as columns when every one is a plain Url, else the list itself."""
        plain = Url
        for r in records:
            if type(r) is not plain or r.images or r.videos or r.news is not None or r.alternates:
                return records
        if not records:
            return records
        urls: list[Url] = records  # type: ignore[assignment]
        # None never meets "": a loc, lastmod or changefreq is never empty, and no value
        # holds a line break. The parser normalised lastmod to str and priority to float
        # (the ignores: Url's fields are typed for what a caller may pass).
        return cls(
            "\n".join([u.loc for u in urls]),
            "\n".join([u.lastmod or "" for u in urls]),  # type: ignore[misc]
            "\n".join([u.changefreq or "" for u in urls]),
            [u.priority for u in urls],  # type: ignore[misc]
        )


# -- the worker process -------------------------------------------------------------------


class _Parsers:
    """The open documents of one worker process."""

    def __init__(self) -> None:
        self.parsers: dict[int, SitemapParser] = {}
        self.dropping: set[int] = set()  # documents whose Url records nobody reads

    def _records(self, doc: int, records: list[Record]) -> Sequence[Record]:
        if doc in self.dropping:
            records = [r for r in records if type(r) is not Url]
        return PlainUrls.pack(records)

    def handle(self, request: object) -> Parsed | None:
        if isinstance(request, Open):
            self.parsers[request.doc] = request.args.parser()
            if not request.keep_urls:
                self.dropping.add(request.doc)
            return Parsed([], None, 0, 0)
        assert isinstance(request, (Feed, Close, Abort))
        doc = request.doc
        parser = self.parsers.get(doc)
        if parser is None:
            return None
        try:
            if isinstance(request, Feed):
                records = self._records(doc, parser.feed(request.data))
                return Parsed(records, parser.kind, parser.bytes_in, parser.entries)
            self._end(doc)
            if isinstance(request, Abort):
                return None
            records = self._records(doc, parser.close())
            return Parsed(records, parser.kind, parser.bytes_in, parser.entries, parser.findings)
        except SitemapError as exc:
            self._end(doc)
            self.dropping.discard(doc)
            error = ErrorRecord.of(exc)
            return Parsed([], parser.kind, parser.bytes_in, parser.entries, parser.findings, error)
        finally:
            if not isinstance(request, Feed):
                self.dropping.discard(doc)

    def _end(self, doc: int) -> None:
        self.parsers.pop(doc, None)


def worker_main() -> None:  # pragma: no cover - runs in the worker process
    serve(_Parsers().handle)


# -- the parent's side --------------------------------------------------------------------


def _gone(code: int | None) -> ParseError:
    return ParseError(
        f"The parser worker process exited unexpectedly (exit code {code})", hint=_HINT
    )


class Worker:
    """One parser process; ``docs`` counts the documents it is parsing."""

    def __init__(self) -> None:
        self.child = AsyncChild(
            "sitemapkit.io.fetch.worker:worker_main", name="the parser worker", gone=_gone
        )
        self.docs = 0

    @property
    def dead(self) -> bool:
        return self.child.dead

    def send(self, request: Open | Feed | Close | Abort) -> asyncio.Future[object]:
        return self.child.send(request)


class Pool:
    """Parser workers, started when a crawl has more than one sitemap to read."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.workers: list[Worker] = []
        self._starting: asyncio.Task[None] | None = None
        self._ids = 0

    def start_soon(self) -> None:
        if self._starting is None:
            self._starting = asyncio.create_task(self._start())

    async def _start(self) -> None:
        for _ in range(self.size):
            worker = Worker()
            await worker.child.start()
            self.workers.append(worker)

    async def acquire(self) -> tuple[Worker, int]:
        """The least busy live worker and a new document number (OSError: none started)."""
        self.start_soon()
        assert self._starting is not None
        try:
            await asyncio.shield(self._starting)
        except (KeyboardInterrupt, SystemExit) as exc:
            # a Ctrl-C in the start (in fork_exec) left its task with it, and asyncio raised
            # it to the loop's caller: not once more from each document that waited for it
            raise OSError("the start of the parser workers was interrupted") from exc
        live = [w for w in self.workers if not w.dead]
        if not live:
            raise ParseError("No parser worker process is running", hint=_HINT)
        worker = min(live, key=lambda w: w.docs)
        worker.docs += 1
        self._ids += 1
        return worker, self._ids

    async def stop(self) -> None:
        starting = self._starting
        if starting is not None and starting.done():
            if not starting.cancelled():
                # a Ctrl-C that landed in the start (in fork_exec) was raised to the
                # caller already: taken here, not raised again from the clean-up
                starting.exception()
        elif starting is not None:
            # not cancelled: a process half started would be left behind
            with contextlib.suppress(OSError):
                await starting
        await asyncio.gather(*(w.child.close() for w in self.workers))
