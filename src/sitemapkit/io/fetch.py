"""io: the async HTTP runner of the discovery flow. The edge where sitemaps meet the network.

:class:`~sitemapkit.core.discovery.DiscoveryFlow` decides what to fetch; this module
fetches it with one ``httpx.AsyncClient`` and streams every body, chunk by chunk, through a
:class:`~sitemapkit.core.parse.SitemapParser`. Entry points:

* :func:`discover` → :class:`~sitemapkit.core.discovery.SitemapTree` (every sitemap with
  its status; URL records are counted, not kept);
* :func:`aiter_records` → an async iterator of ``(record, sitemap_url)`` pairs, with the
  tree filling in as it goes;
* :func:`read_url_records` and :func:`discover_sync`, the same for synchronous scripts.

What the runner adds to the flow's decisions:

* **Bounded concurrency and politeness**: at most ``concurrency`` requests at once and
  ``per_host`` per host; the standard proxy variables are honoured (``trust_env``).
* **Retries** on 429, 5xx and connection errors, with exponential backoff or the server's
  ``Retry-After`` (capped at ``max_retry_after``), but only before the first body byte was
  parsed: records already handed out are never read twice.
* **Budgets while streaming**: the parser raises ``LimitError`` when a document passes its
  decompressed-size cap and reading stops there; ``Content-Encoding`` is removed here with
  bounded steps too, so a "gzip bomb" costs a few megabytes and milliseconds.
* **Redirects** followed by hand (≤ 5, each hop reported to the flow, which ends loops and
  refuses non-http(s) targets). With ``refuse_private=True`` (for server-side use; off by
  default) every host is resolved and refused, before connecting, when any of its
  addresses is private, loopback, link-local or otherwise not global. The check and the
  connection resolve separately, so DNS rebinding within that gap is not prevented, and a
  proxy from the environment resolves on its own.
* **Conditional requests** when ``cache_dir`` is given: the body and its validators
  (``ETag``, ``Last-Modified``) are stored; a ``304 Not Modified`` replays the stored body.
* **Parallel parsing**: parsing is CPU-bound Python, so with ``workers`` > 0 (the default
  on a multi-core machine) the documents of a tree with more than one sitemap are parsed
  in worker processes fed with the raw (still compressed) chunks, while this process does
  the network I/O. Records come back in batches; order within a document is kept.

httpx exceptions are translated here into :class:`~sitemapkit.errors.FetchError`; every
failure of one sitemap ends up in its status, not as an exception of the crawl. Any other
exception escaping this module is a bug.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import email.utils
import functools
import hashlib
import importlib.metadata
import ipaddress
import itertools
import json
import os
import pickle
import socket
import struct
import sys
import time
import zlib
from collections import deque
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterator,
    Sequence,
)
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO, Final, NamedTuple, Protocol, overload
from urllib.parse import urlsplit

import httpx

from .. import errors
from ..core.discovery import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_SITEMAPS,
    DEFAULT_MAX_TOTAL_BYTES,
    MAX_REDIRECTS,
    DiscoveryFlow,
    FetchRequest,
    FetchResponse,
    SitemapStatus,
    SitemapTree,
    visit_key,
)
from ..core.finding import Finding
from ..core.model import SitemapRef, Url
from ..core.parse import DEFAULT_MAX_BYTES, Kind, Record, SitemapParser
from ..errors import FetchError, ParseError, SitemapError

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_PER_HOST",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "USER_AGENT",
    "ContentDecoder",
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


def _version() -> str:
    try:
        return importlib.metadata.version("sitemapkit")
    except importlib.metadata.PackageNotFoundError:  # running from a source tree
        return "0"


USER_AGENT: Final = f"sitemapkit/{_version()} (+https://github.com/sitemapkit)"
DEFAULT_CONCURRENCY: Final = 8
DEFAULT_PER_HOST: Final = 2
DEFAULT_TIMEOUT: Final = 30.0
DEFAULT_RETRIES: Final = 3
DEFAULT_BACKOFF: Final = 0.5
DEFAULT_MAX_RETRY_AFTER: Final = 60.0

_ACCEPT: Final = "application/xml, text/xml;q=0.9, text/plain;q=0.8, */*;q=0.5"
_REDIRECTS: Final = frozenset([301, 302, 303, 307, 308])
_STEP: Final = 262_144  # bytes out of one Content-Encoding decompress call
# Raw bytes per parser feed: gzip inflates at most ~1,032:1, so a slice can never grow
# past ~16 MiB in one call, and batches of records stay small.
_SLICE: Final = 16_384
_QUEUE: Final = 8  # record batches waiting for the consumer (backpressure beyond)
_WINDOW: Final = 4  # feeds in flight per document in a worker


def _default_workers() -> int:
    cpus = os.cpu_count() or 1
    return 0 if cpus < 2 or not sys.executable else min(cpus, 4)


# -- options ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Options:
    concurrency: int
    per_host: int
    timeout: float
    retries: int
    backoff: float
    max_retry_after: float
    refuse_private: bool
    cache_dir: Path | None
    workers: int
    strict: bool
    user_agent: str
    report: Report | None


def _options(
    *,
    concurrency: int,
    per_host: int,
    timeout: float,
    retries: int,
    backoff: float,
    max_retry_after: float,
    refuse_private: bool,
    cache_dir: str | os.PathLike[str] | None,
    workers: int | None,
    strict: bool,
    user_agent: str,
    report: Report | None,
) -> _Options:
    if concurrency < 1 or per_host < 1:
        raise ValueError("concurrency and per_host must be at least 1")
    if timeout <= 0:
        raise ValueError("timeout must be positive")
    if retries < 0 or backoff < 0 or max_retry_after < 0:
        raise ValueError("retries, backoff and max_retry_after must not be negative")
    if workers is not None and workers < 0:
        raise ValueError("workers must not be negative")
    return _Options(
        concurrency=concurrency,
        per_host=per_host,
        timeout=timeout,
        retries=retries,
        backoff=backoff,
        max_retry_after=max_retry_after,
        refuse_private=refuse_private,
        cache_dir=Path(cache_dir) if cache_dir is not None else None,
        workers=_default_workers() if workers is None else workers,
        strict=strict,
        user_agent=user_agent,
        report=report,
    )


# -- Content-Encoding ---------------------------------------------------------------------


class ContentDecoder:
    """Removes an HTTP ``Content-Encoding`` (gzip, deflate) in bounded steps.

    httpx's own decoder inflates a whole network chunk at once; a hostile 64 KiB chunk
    can become 64 MiB. Here every call returns at most ``_STEP`` bytes and the parser's
    size cap sees each piece. A sitemap that is itself gzip is left for the parser.
    """

    def __init__(self, encoding: str, where: str) -> None:
        self._where = where
        names = [e.strip().lower() for e in encoding.split(",") if e.strip()]
        names = [n for n in names if n != "identity"]
        if len(names) > 1 or (names and names[0] not in ("gzip", "x-gzip", "deflate")):
            raise FetchError(
                f"Unsupported Content-Encoding {encoding!r}; only gzip and deflate are accepted",
                where=where,
            )
        self._name = names[0] if names else ""
        self._d: Any = None
        self._raw_deflate = False
        self._ended = False
        self._any = False

    def _new(self) -> Any:
        if self._name == "deflate":
            return zlib.decompressobj(-zlib.MAX_WBITS if self._raw_deflate else zlib.MAX_WBITS)
        return zlib.decompressobj(16 + zlib.MAX_WBITS)

    def decode(self, data: bytes) -> Iterator[bytes]:
        if not self._name:
            if data:
                yield data
            return
        while True:
            if self._d is None:
                if self._ended:
                    data = data.lstrip(b"\x00")  # padding after the last gzip member
                if not data:
                    return
                self._d = self._new()
            d = self._d
            try:
                out = d.decompress(data, _STEP)
            except zlib.error as exc:
                if self._name == "deflate" and not self._raw_deflate and not self._any:
                    # RFC 9110 says zlib-wrapped; some servers send raw deflate.
                    self._raw_deflate = True
                    self._d = None
                    continue
                raise ParseError(
                    f"The response's Content-Encoding {self._name} data is corrupt ({exc}) [SM007]",
                    where=self._where,
                ) from exc
            if out:
                self._any = True
                yield out
            if d.eof:
                self._d = None
                self._ended = True
                data = d.unused_data
                continue
            data = d.unconsumed_tail
            if not data and len(out) < _STEP:
                return

    def flush(self) -> None:
        if self._d is not None and self._name:
            raise ParseError(
                f"The response's Content-Encoding {self._name} data ends early [SM007]",
                where=self._where,
            )


# -- cache --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _CacheEntry:
    body: Path
    etag: str | None
    last_modified: str | None
    content_encoding: str
    size: int


class _Cache:
    """Bodies and validators by URL, for conditional requests (RFC 9110 §13).

    Layout: ``<sha256 of the URL>.body`` (the bytes as received, Content-Encoding and
    all) and ``<…>.json`` (url, etag, last_modified, content_encoding, size). The body is
    written to a temporary name and renamed when complete, then the metadata.
    """

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root

    def _paths(self, url: str) -> tuple[Path, Path]:
        name = hashlib.sha256(visit_key(url).encode("utf-8")).hexdigest()
        return self.root / f"{name}.body", self.root / f"{name}.json"

    def lookup(self, url: str) -> _CacheEntry | None:
        body, meta = self._paths(url)
        try:
            info = json.loads(meta.read_text("utf-8"))
            if body.stat().st_size != info["size"] or info["url"] != visit_key(url):
                return None
            return _CacheEntry(
                body, info["etag"], info["last_modified"], info["content_encoding"], info["size"]
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def writer(self, url: str, headers: httpx.Headers) -> _CacheWriter | None:
        etag, modified = headers.get("etag"), headers.get("last-modified")
        if etag is None and modified is None:
            return None
        body, meta = self._paths(url)
        info = {
            "url": visit_key(url),
            "etag": etag,
            "last_modified": modified,
            "content_encoding": headers.get("content-encoding", ""),
        }
        return _CacheWriter(body, meta, info)


class _CacheWriter:
    def __init__(self, body: Path, meta: Path, info: dict[str, Any]) -> None:
        self._body, self._meta, self._info = body, meta, info
        self._tmp = body.with_name(f"{body.name}.{os.getpid()}.{id(self):x}.tmp")
        self._file: BinaryIO | None = self._tmp.open("wb")
        self._size = 0

    def write(self, data: bytes) -> None:
        if self._file is not None:
            self._file.write(data)
            self._size += len(data)

    def commit(self) -> None:
        if self._file is None:
            return
        self._file.close()
        self._file = None
        os.replace(self._tmp, self._body)
        self._info["size"] = self._size
        tmp_meta = self._meta.with_name(self._meta.name + ".tmp")
        tmp_meta.write_text(json.dumps(self._info), "utf-8")
        os.replace(tmp_meta, self._meta)

    def abort(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
            with contextlib.suppress(OSError):
                self._tmp.unlink()


# -- parsing in worker processes ----------------------------------------------------------

_URL_SETTERS: Final = tuple(
    Url.__dict__[name].__set__
    for name in (
        "loc",
        "lastmod",
        "changefreq",
        "priority",
        "images",
        "videos",
        "news",
        "alternates",
    )
)


def _plain_url(loc: str, lastmod: str, changefreq: str, priority: float | None) -> Url:
    """Rebuild a Url the worker's parser already validated (no second validation); the
    empty string stands for an absent value."""
    url = object.__new__(Url)
    s_loc, s_lastmod, s_cf, s_pr, s_img, s_vid, s_news, s_alt = _URL_SETTERS
    s_loc(url, loc)
    s_lastmod(url, lastmod or None)
    s_cf(url, changefreq or None)
    s_pr(url, priority)
    s_img(url, ())
    s_vid(url, ())
    s_news(url, None)
    s_alt(url, ())
    return url


def _pack(records: list[Record]) -> Any:
    """Records as a worker sends them. A batch of plain Urls (loc, lastmod, changefreq,
    priority only: nearly every sitemap) goes as four columns, which pickle about ten
    times faster than the objects; anything else goes as the list itself."""
    plain = Url
    for r in records:
        if type(r) is not plain or r.images or r.videos or r.news is not None or r.alternates:
            return records
    if not records:
        return records
    urls: list[Url] = records  # type: ignore[assignment]
    # None never meets "": a loc, lastmod or changefreq is never empty, and no value
    # holds a line break (the parser checked them).
    return (
        "\n".join([u.loc for u in urls]),
        "\n".join([u.lastmod or "" for u in urls]),  # type: ignore[misc]
        "\n".join([u.changefreq or "" for u in urls]),
        [u.priority for u in urls],
    )


class PlainUrls(Sequence[Url]):
    """A batch of plain Urls (loc, lastmod, changefreq and priority only) as a parser
    worker sends it: columns, built into :class:`~sitemapkit.Url` objects only when
    read. ``loc_text`` holds the locs joined by line breaks (no loc holds one), for
    consumers that need nothing else."""

    __slots__ = ("_changefreqs", "_columns", "_lastmods", "_priorities", "loc_text")

    def __init__(
        self, loc_text: str, lastmods: str, changefreqs: str, priorities: list[float | None]
    ) -> None:
        self.loc_text = loc_text
        self._lastmods = lastmods
        self._changefreqs = changefreqs
        self._priorities = priorities
        self._columns: tuple[list[str], list[str], list[str]] | None = None

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


def _unpack(data: Any) -> Sequence[Record]:
    if isinstance(data, list):
        return data
    return PlainUrls(*data)


def _keep(records: list[Record], urls: bool) -> list[Record]:
    """``records`` without the Urls when nobody reads them (the flow needs only the
    entries of indexes)."""
    return records if urls else [r for r in records if type(r) is not Url]


def _encode_error(exc: SitemapError) -> tuple[Any, ...]:
    return (type(exc).__name__, exc.message, exc.where, exc.line, exc.column, exc.hint)


def _decode_error(data: tuple[Any, ...]) -> SitemapError:
    name, message, where, line, column, hint = data
    cls = getattr(errors, name, SitemapError)
    if not (isinstance(cls, type) and issubclass(cls, SitemapError)):
        cls = SitemapError
    error: SitemapError = cls(message, where=where, line=line, column=column, hint=hint)
    return error


def _worker_main() -> None:  # pragma: no cover - runs in the worker process
    """A parser worker: length-prefixed pickles in on stdin, replies on stdout."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # nothing printed by accident can corrupt the channel
    inp = sys.stdin.buffer
    parsers: dict[int, SitemapParser] = {}
    dropping: set[int] = set()  # documents whose Url records nobody reads
    while True:
        head = inp.read(4)
        if len(head) < 4:
            return
        (size,) = struct.unpack("!I", head)
        op, doc, arg = pickle.loads(inp.read(size))
        reply: tuple[Any, ...]
        parser = parsers.get(doc)
        try:
            if op == "open":
                kwargs, keep_urls = arg
                parsers[doc] = SitemapParser(**kwargs)
                if not keep_urls:
                    dropping.add(doc)
                reply = ("ok", [], None, 0, 0)
            elif parser is None:
                reply = ("gone",)
            elif op == "feed":
                records = _keep(parser.feed(arg), doc not in dropping)
                reply = ("ok", _pack(records), parser.kind, parser.bytes_in, parser.entries)
            elif op == "close":
                del parsers[doc]
                records = _keep(parser.close(), doc not in dropping)
                dropping.discard(doc)
                reply = ("done", _pack(records), parser.kind, parser.bytes_in, parser.entries)
                reply += (parser.findings,)
            else:  # abort
                del parsers[doc]
                dropping.discard(doc)
                reply = ("gone",)
        except SitemapError as exc:
            parsers.pop(doc, None)
            dropping.discard(doc)
            assert parser is not None
            reply = ("error", _encode_error(exc), parser.kind, parser.bytes_in, parser.entries)
            reply += (parser.findings,)
        data = pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
        out.write(struct.pack("!I", len(data)))
        out.write(data)
        out.flush()


class _Worker:
    """One parser process and the FIFO of replies it owes.

    Started as ``python -c …`` rather than through ``multiprocessing``: a spawned child
    would re-import the caller's ``__main__`` (breaking scripts without a main guard), and
    forking a process that runs an event loop and resolver threads is unsafe.
    """

    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self.pending: deque[asyncio.Future[tuple[Any, ...]]] = deque()
        self.docs = 0
        self.dead = False
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])  # the folder holding sitemapkit/
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            "from sitemapkit.io.fetch import _worker_main; _worker_main()",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
        )
        self._reader = asyncio.create_task(self._read())

    def send(self, op: str, doc: int, arg: Any) -> asyncio.Future[tuple[Any, ...]]:
        fut: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()
        if self.dead or self.proc is None or self.proc.stdin is None:
            fut.set_exception(self._gone())
            return fut
        data = pickle.dumps((op, doc, arg), pickle.HIGHEST_PROTOCOL)
        self.pending.append(fut)
        self.proc.stdin.write(struct.pack("!I", len(data)) + data)
        return fut

    async def drain(self) -> None:
        if self.proc is not None and self.proc.stdin is not None and not self.dead:
            with contextlib.suppress(ConnectionError):
                await self.proc.stdin.drain()

    def _gone(self) -> ParseError:
        code = self.proc.returncode if self.proc is not None else None
        return ParseError(
            f"The parser worker process exited unexpectedly (exit code {code})",
            hint="run with workers=0 to parse in this process",
        )

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        stdout = self.proc.stdout
        try:
            while True:
                head = await stdout.readexactly(4)
                (size,) = struct.unpack("!I", head)
                reply = pickle.loads(await stdout.readexactly(size))
                fut = self.pending.popleft()
                if not fut.done():
                    fut.set_result(reply)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        self.dead = True
        with contextlib.suppress(ProcessLookupError, TimeoutError):
            await asyncio.wait_for(self.proc.wait(), 1.0)
        while self.pending:
            fut = self.pending.popleft()
            if not fut.done():
                fut.set_exception(self._gone())

    async def stop(self) -> None:
        proc = self.proc
        if proc is None:
            return
        self.dead = True
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 2.0)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader


class _Pool:
    """Parser workers, started when a crawl has more than one sitemap to read."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.workers: list[_Worker] = []
        self._starting: asyncio.Task[None] | None = None
        self._ids = 0

    def start_soon(self) -> None:
        if self._starting is None:
            self._starting = asyncio.create_task(self._start())

    async def _start(self) -> None:
        for _ in range(self.size):
            worker = _Worker()
            await worker.start()
            self.workers.append(worker)

    async def acquire(self) -> tuple[_Worker, int]:
        self.start_soon()
        assert self._starting is not None
        await asyncio.shield(self._starting)
        live = [w for w in self.workers if not w.dead]
        if not live:
            raise ParseError(
                "No parser worker process is running",
                hint="run with workers=0 to parse in this process",
            )
        worker = min(live, key=lambda w: w.docs)
        worker.docs += 1
        self._ids += 1
        return worker, self._ids

    async def stop(self) -> None:
        if self._starting is not None:
            # not cancelled: a process half started would be left behind
            with contextlib.suppress(OSError):
                await self._starting
        await asyncio.gather(*(w.stop() for w in self.workers))


# -- documents ----------------------------------------------------------------------------

Emit = Callable[[Sequence[Record]], Awaitable[None]]


class _Document:
    """A body being parsed; subclasses parse here or in a worker."""

    kind: Kind | None = None
    bytes_in = 0
    entries = 0
    findings: list[Finding]
    started = False

    def __init__(self) -> None:
        self.findings = []

    async def feed(self, data: bytes) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    async def abort(self) -> None:
        """Stop parsing after an error or a cancellation."""


def _slices(data: bytes) -> Iterator[bytes]:
    if len(data) <= _SLICE:
        yield data
        return
    view = memoryview(data)
    for i in range(0, len(data), _SLICE):
        yield bytes(view[i : i + _SLICE])


class _LocalDocument(_Document):
    def __init__(self, emit: Emit, **kwargs: Any) -> None:
        super().__init__()
        self._emit = emit
        self._parser = SitemapParser(**kwargs)
        self.findings = self._parser.findings

    def _sync(self) -> None:
        p = self._parser
        self.kind, self.bytes_in, self.entries = p.kind, p.bytes_in, p.entries

    async def feed(self, data: bytes) -> None:
        self.started = True
        parser = self._parser
        try:
            for piece in _slices(data):
                records = parser.feed(piece)
                if records:
                    self._sync()
                    await self._emit(records)
        finally:
            self._sync()

    async def close(self) -> None:
        try:
            records = self._parser.close()
        finally:
            self._sync()
        if records:
            await self._emit(records)


class _RemoteDocument(_Document):
    def __init__(
        self, emit: Emit, worker: _Worker, doc: int, kwargs: dict[str, Any], keep_urls: bool
    ) -> None:
        super().__init__()
        self._emit = emit
        self._worker = worker
        self._doc = doc
        self._inflight: deque[asyncio.Future[tuple[Any, ...]]] = deque()
        self._failed = False
        self._released = False
        self._inflight.append(worker.send("open", doc, (kwargs, keep_urls)))

    async def _settle(self, fut: asyncio.Future[tuple[Any, ...]]) -> None:
        reply = await fut
        status = reply[0]
        if status == "gone" or self._failed:
            return
        self.kind, self.bytes_in, self.entries = reply[2], reply[3], reply[4]
        if status == "error":
            self._failed = True
            self.findings = list(reply[5])
            raise _decode_error(reply[1])
        if status == "done":
            self.findings = list(reply[5])
        records = _unpack(reply[1])
        if records:
            await self._emit(records)

    async def feed(self, data: bytes) -> None:
        self.started = True
        for piece in _slices(data):
            self._inflight.append(self._worker.send("feed", self._doc, piece))
            await self._worker.drain()
            while len(self._inflight) > _WINDOW:
                await self._settle(self._inflight.popleft())

    async def close(self) -> None:
        self._inflight.append(self._worker.send("close", self._doc, None))
        await self._worker.drain()
        try:
            while self._inflight:
                await self._settle(self._inflight.popleft())
        finally:
            self._release()

    def _release(self) -> None:
        if not self._released:
            self._released = True
            self._worker.docs -= 1

    async def abort(self) -> None:
        self._failed = True
        if not self._released and not self._worker.dead:
            self._inflight.append(self._worker.send("abort", self._doc, None))
        self._release()
        with contextlib.suppress(SitemapError):
            while self._inflight:
                await self._inflight.popleft()


class _RobotsBody(_Document):
    """robots.txt, kept whole up to the size RFC 9309 obliges crawlers to read."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self._parts: list[bytes] = []
        self._limit = limit
        self.truncated = False

    async def feed(self, data: bytes) -> None:
        self.started = True
        room = self._limit - self.bytes_in
        if len(data) > room:
            data = data[:room]
            self.truncated = True
        self._parts.append(data)
        self.bytes_in += len(data)

    async def close(self) -> None:
        pass

    @property
    def body(self) -> bytes:
        return b"".join(self._parts)


# -- the runner ---------------------------------------------------------------------------


class _Retry(Exception):
    """An attempt failed in a way worth another try (if none of the body was parsed)."""

    def __init__(self, wait: float | None, status: int | None, error: SitemapError) -> None:
        super().__init__(error.message)
        self.wait = wait
        self.status = status
        self.error = error


def retry_after_seconds(value: str | None, cap: float) -> float | None:
    """Seconds from a ``Retry-After`` header (delay-seconds or HTTP-date), capped."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), cap)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return min(max((when - dt.datetime.now(dt.UTC)).total_seconds(), 0.0), cap)


def _is_public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def _host_key(url: str) -> str:
    parts = urlsplit(url)
    return parts.netloc.lower()


class _Runner:
    """Drives one DiscoveryFlow with one httpx client."""

    def __init__(
        self,
        flow: DiscoveryFlow,
        opts: _Options,
        out: asyncio.Queue[tuple[str, Sequence[Record]] | None] | None,
        client: httpx.AsyncClient | None,
    ) -> None:
        self.flow = flow
        self.opts = opts
        self.out = out
        self._own_client = client is None
        self.client = client or httpx.AsyncClient(
            headers={
                "User-Agent": opts.user_agent,
                "Accept": _ACCEPT,
                "Accept-Encoding": "gzip, deflate",
            },
            timeout=httpx.Timeout(opts.timeout, pool=None),
            limits=httpx.Limits(
                max_connections=opts.concurrency, max_keepalive_connections=opts.concurrency
            ),
            follow_redirects=False,
            trust_env=True,
        )
        self.cache = _Cache(opts.cache_dir) if opts.cache_dir is not None else None
        self.pool = _Pool(opts.workers) if opts.workers > 0 else None
        self._parse_here = False
        self._slots = asyncio.Semaphore(opts.concurrency)
        self._hosts: dict[str, asyncio.Semaphore] = {}
        self._resolved: dict[str, str | None] = {}
        self._wake = asyncio.Event()

    async def aclose(self) -> None:
        try:
            if self.pool is not None:
                await self.pool.stop()
        finally:
            if self._own_client:
                await self.client.aclose()

    # -- driving ----------------------------------------------------------------------

    async def run(self) -> None:
        flow = self.flow
        tasks: set[asyncio.Task[None]] = set()
        room = self.opts.concurrency * 4  # queued tasks beyond the semaphores stay cheap
        waiter: asyncio.Task[bool] | None = None
        try:
            while True:
                for req in flow.next_requests(max(room - len(tasks), 0)):
                    tasks.add(asyncio.create_task(self._fetch(req)))
                if self.pool is not None and flow.sitemap_count >= 2:
                    self.pool.start_soon()
                if not tasks:
                    break
                self._wake.clear()
                # wake up when a request ends or when an index queued new children
                waiter = asyncio.create_task(self._wake.wait())
                done, _ = await asyncio.wait([*tasks, waiter], return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                for task in done:
                    if task is not waiter:
                        tasks.discard(task)
                        task.result()  # a bug in _fetch: let it out
        finally:
            if waiter is not None:
                waiter.cancel()
            for task in tasks:
                task.cancel()
            pending = [*tasks, *([waiter] if waiter is not None else [])]
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)

    async def _emit_records(self, req: FetchRequest, records: Sequence[Record]) -> None:
        flow = self.flow
        if type(records) is PlainUrls:  # no index entries among them: nothing to follow
            if self.out is not None:
                await self.out.put((req.url, records))
            return
        before = flow.pending
        flow.on_records(req, records)
        if flow.pending != before:
            self._wake.set()
        if self.out is None:
            return
        if flow.follow and type(records[0]) is SitemapRef:
            # The entries of an index are followed, not handed out (see RecordStream).
            records = [r for r in records if type(r) is not SitemapRef]
            if not records:
                return
        await self.out.put((req.url, records))

    async def _document(self, req: FetchRequest, final_url: str, emit: Emit) -> _Document:
        kwargs: dict[str, Any] = {
            "source": final_url,
            "base_url": final_url,
            "max_bytes": req.max_bytes,
            "strict": self.opts.strict,
        }
        if self.pool is not None and not self._parse_here and self.flow.sitemap_count >= 2:
            try:
                worker, doc = await self.pool.acquire()
            except OSError:
                self._parse_here = True  # no worker could be started
            else:
                return _RemoteDocument(emit, worker, doc, kwargs, self.out is not None)
        return _LocalDocument(emit, **kwargs)

    # -- one request ------------------------------------------------------------------

    async def _fetch(self, req: FetchRequest) -> None:
        state = _FetchState(req.url)

        async def emit(records: Sequence[Record]) -> None:
            await self._emit_records(req, records)

        attempt = 0
        while True:
            try:
                await self._attempt(req, state, emit)
                break
            except _Retry as retry:
                state.status = retry.status
                state.error = retry.error
                if attempt >= self.opts.retries or (state.doc is not None and state.doc.started):
                    break
                wait = retry.wait
                if wait is None:
                    wait = self.opts.backoff * 2**attempt
                attempt += 1
                if state.doc is not None:
                    await state.doc.abort()
                    state.doc = None
                await asyncio.sleep(wait)
            except SitemapError as exc:
                state.error = exc
                break
        doc = state.doc
        if doc is not None and state.error is not None:
            with contextlib.suppress(SitemapError):
                await doc.abort()
        robots = isinstance(doc, _RobotsBody)
        tree = self.flow.tree
        seen = len(tree.sitemaps)
        self.flow.on_response(
            FetchResponse(
                req,
                state.url,
                state.status,
                headers=state.headers,
                body=doc.body if isinstance(doc, _RobotsBody) else b"",
                truncated=doc.truncated if isinstance(doc, _RobotsBody) else False,
                kind=None if doc is None or robots else doc.kind,
                size=0 if doc is None else doc.bytes_in,
                transferred=state.transferred,
                entries=0 if doc is None or robots else doc.entries,
                findings=() if doc is None else tuple(doc.findings),
                error=state.error,
                elapsed=0.0 if state.started is None else time.monotonic() - state.started,
                from_cache=state.from_cache,
            )
        )
        report = self.opts.report
        if report is not None:
            if req.purpose == "robots" and tree.robots is not None:
                report.findings.extend(tree.robots.findings)
            for status in tree.sitemaps[seen:]:
                report.sitemaps.append(status.url)
                report.findings.extend(status.findings)

    def _host_slot(self, url: str) -> asyncio.Semaphore:
        key = _host_key(url)
        slot = self._hosts.get(key)
        if slot is None:
            slot = self._hosts[key] = asyncio.Semaphore(self.opts.per_host)
        return slot

    async def _check_public(self, url: str) -> None:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if host in self._resolved:
            reason = self._resolved[host]
        else:
            reason = await self._resolve(host, parts.port or 0)
            self._resolved[host] = reason
        if reason is not None:
            raise FetchError(
                f"Refused to fetch {url!r}: {reason}",
                where=url,
                hint="refuse_private=True blocks private, loopback and link-local addresses",
            )

    async def _resolve(self, host: str, port: int) -> str | None:
        try:
            addresses = [ipaddress.ip_address(host)]
        except ValueError:
            try:
                infos = await asyncio.get_running_loop().getaddrinfo(
                    host, port, type=socket.SOCK_STREAM
                )
            except OSError as exc:
                raise _Retry(None, None, FetchError(f"Cannot resolve {host!r}: {exc}")) from exc
            addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
        for ip in addresses:
            if not _is_public(ip):
                return f"{host!r} resolves to the non-public address {str(ip)!r}"
        return None

    async def _attempt(self, req: FetchRequest, state: _FetchState, emit: Emit) -> None:
        """One try: follow redirects from ``state.url`` and read the final body."""
        flow = self.flow
        while True:
            url = state.url
            if self.opts.refuse_private:
                await self._check_public(url)
            cached = self.cache.lookup(url) if self.cache is not None else None
            headers = {"Accept-Encoding": "gzip, deflate"}
            if cached is not None:
                if cached.etag:
                    headers["If-None-Match"] = cached.etag
                if cached.last_modified:
                    headers["If-Modified-Since"] = cached.last_modified
            async with self._slots, self._host_slot(url):
                if state.started is None:  # elapsed counts from here, not the queue
                    state.started = time.monotonic()
                try:
                    request = self.client.build_request(
                        "GET", url, headers=headers, timeout=httpx.Timeout(self.opts.timeout)
                    )
                    async with asyncio.timeout(self.opts.timeout):
                        response = await self.client.send(
                            request, stream=True, follow_redirects=False
                        )
                except (httpx.TimeoutException, TimeoutError) as exc:
                    raise _Retry(
                        None,
                        None,
                        FetchError(f"No response within {self.opts.timeout:g} s", where=url),
                    ) from exc
                except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
                    raise FetchError(f"Cannot fetch {url!r}: {exc}", where=url) from exc
                except httpx.TransportError as exc:
                    raise _Retry(
                        None, None, FetchError(f"Connection failed: {_describe(exc)}", where=url)
                    ) from exc
                try:
                    status = response.status_code
                    state.status = status
                    state.headers = dict(response.headers)
                    if status in _REDIRECTS and "location" in response.headers:
                        target = flow.on_redirect(req, url, response.headers["location"])
                        if target is None:
                            return  # already read in this crawl (the flow records it)
                        state.url = target
                        continue
                    if status == 429 or (status >= 500 and status not in (501, 505)):
                        wait = retry_after_seconds(
                            response.headers.get("retry-after"), self.opts.max_retry_after
                        )
                        raise _Retry(wait, status, FetchError(f"HTTP status {status}", where=url))
                    if status == 304 and cached is not None:
                        state.from_cache = True
                        await self._read_cached(req, state, cached, emit)
                        return
                    if not 200 <= status < 300:
                        return  # the flow turns the status into an error
                    await self._read_body(req, state, response, emit)
                    return
                finally:
                    await response.aclose()

    async def _open(self, req: FetchRequest, state: _FetchState, emit: Emit) -> _Document:
        doc: _Document
        if req.purpose == "robots":
            doc = _RobotsBody(req.max_bytes)
        else:
            doc = await self._document(req, state.url, emit)
        state.doc = doc
        return doc

    async def _read_body(
        self, req: FetchRequest, state: _FetchState, response: httpx.Response, emit: Emit
    ) -> None:
        url = state.url
        decoder = ContentDecoder(response.headers.get("content-encoding", ""), url)
        doc = await self._open(req, state, emit)
        writer = self.cache.writer(url, response.headers) if self.cache is not None else None
        try:
            try:
                async for raw in response.aiter_raw():
                    state.transferred += len(raw)
                    if writer is not None:
                        writer.write(raw)
                    for piece in decoder.decode(raw):
                        await doc.feed(piece)
                    if isinstance(doc, _RobotsBody) and doc.truncated:
                        if writer is not None:
                            writer.abort()
                            writer = None
                        break
                else:
                    decoder.flush()
            except httpx.TransportError as exc:
                if isinstance(exc, httpx.TimeoutException):
                    message = f"The response stalled for more than {self.opts.timeout:g} s"
                else:
                    message = f"Connection failed: {_describe(exc)}"
                error = FetchError(message, where=url)
                if doc.started:  # records were handed out: reading again would repeat them
                    raise error from exc
                raise _Retry(None, None, error) from exc
            await doc.close()
        except BaseException:
            if writer is not None:
                writer.abort()
            raise
        if writer is not None:
            writer.commit()

    async def _read_cached(
        self, req: FetchRequest, state: _FetchState, cached: _CacheEntry, emit: Emit
    ) -> None:
        decoder = ContentDecoder(cached.content_encoding, state.url)
        doc = await self._open(req, state, emit)
        try:
            with cached.body.open("rb") as file:
                while chunk := file.read(65_536):
                    for piece in decoder.decode(chunk):
                        await doc.feed(piece)
                    if isinstance(doc, _RobotsBody) and doc.truncated:
                        break
                else:
                    decoder.flush()
        except OSError as exc:
            raise FetchError(f"Cannot read the cached body: {exc}", where=state.url) from exc
        await doc.close()


def _describe(exc: Exception) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _FetchState:
    __slots__ = (
        "doc",
        "error",
        "from_cache",
        "headers",
        "started",
        "status",
        "transferred",
        "url",
    )

    def __init__(self, url: str) -> None:
        self.url = url
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.doc: _Document | None = None
        self.error: SitemapError | None = None
        self.transferred = 0
        self.from_cache = False
        self.started: float | None = None


# -- public entry points ------------------------------------------------------------------


class Sourced(NamedTuple):
    """A record and the URL of the sitemap it was read from; unpacks as a pair."""

    record: Record
    source: str


_sourced = functools.partial(tuple.__new__, Sourced)


class Report(Protocol):
    """Where findings go as sitemaps finish (``sitemapkit.ReadReport`` is one)."""

    findings: list[Finding]
    sitemaps: list[str]


@dataclass(frozen=True, slots=True)
class _Settings:
    """The keyword arguments shared by every entry point."""

    concurrency: int = DEFAULT_CONCURRENCY
    per_host: int = DEFAULT_PER_HOST
    max_depth: int = DEFAULT_MAX_DEPTH
    max_sitemaps: int = DEFAULT_MAX_SITEMAPS
    max_bytes: int = DEFAULT_MAX_TOTAL_BYTES
    max_document_bytes: int = DEFAULT_MAX_BYTES
    max_redirects: int = MAX_REDIRECTS
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    backoff: float = DEFAULT_BACKOFF
    max_retry_after: float = DEFAULT_MAX_RETRY_AFTER
    refuse_private: bool = False
    cache_dir: str | os.PathLike[str] | None = None
    follow: bool = True
    strict: bool = False
    workers: int | None = None
    user_agent: str = USER_AGENT
    client: httpx.AsyncClient | None = None
    report: Report | None = None

    def start(self, target: str) -> tuple[DiscoveryFlow, _Options]:
        opts = _options(
            concurrency=self.concurrency,
            per_host=self.per_host,
            timeout=self.timeout,
            retries=self.retries,
            backoff=self.backoff,
            max_retry_after=self.max_retry_after,
            refuse_private=self.refuse_private,
            cache_dir=self.cache_dir,
            workers=self.workers,
            strict=self.strict,
            user_agent=self.user_agent,
            report=self.report,
        )
        flow = DiscoveryFlow(
            target,
            follow=self.follow,
            max_depth=self.max_depth,
            max_sitemaps=self.max_sitemaps,
            max_bytes=self.max_bytes,
            max_document_bytes=self.max_document_bytes,
            max_redirects=self.max_redirects,
            user_agent=self.user_agent.split("/", 1)[0],
        )
        return flow, opts


async def _batches(
    flow: DiscoveryFlow, opts: _Options, client: httpx.AsyncClient | None, keep: bool
) -> AsyncGenerator[tuple[str, Sequence[Record]], None]:
    """Run a crawl; yield ``(sitemap_url, records)`` batches as they are parsed."""
    out: asyncio.Queue[tuple[str, Sequence[Record]] | None] | None = (
        asyncio.Queue(_QUEUE) if keep else None
    )
    runner = _Runner(flow, opts, out, client)
    try:
        if out is None:
            await runner.run()
            return

        async def drive() -> None:
            try:
                await runner.run()
            except asyncio.CancelledError:
                raise  # the consumer stopped: nobody waits for the end mark (the queue may be full)
            except BaseException:
                await out.put(None)  # wake the consumer, which re-raises from `await driver`
                raise
            await out.put(None)

        driver = asyncio.create_task(drive())
        try:
            while True:
                item = await out.get()
                if item is None:
                    break
                yield item
            await driver
        finally:
            if not driver.done():
                driver.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await driver
    finally:
        await runner.aclose()


class RecordStream:
    """The records of a crawl, as an async iterator of ``(record, sitemap_url)``.

    Records are :class:`~sitemapkit.Url` objects (from sitemaps, feeds and text
    sitemaps) in document order per sitemap; sitemaps read concurrently interleave. The
    entries of an index are followed, not yielded; with ``follow=False`` they are yielded
    as :class:`~sitemapkit.SitemapRef`. ``tree`` fills in as sitemaps finish and is
    complete when the iteration ends. Use ``async with`` (or ``aclose()``) when you may
    stop early, so that connections and worker processes are released at once.

    >>> async def main():                                  # doctest: +SKIP
    ...     async with aiter_records("https://example.com/") as stream:
    ...         async for record, source in stream:
    ...             print(record.loc)
    ...     print(len(stream.tree.sitemaps), "sitemaps")
    """

    def __init__(self, target: str, settings: _Settings) -> None:
        flow, opts = settings.start(target)
        self.tree: SitemapTree = flow.tree
        self._batches = _batches(flow, opts, settings.client, keep=True)
        self._batch: Sequence[Record] = []
        self._source = ""
        self._index = 0

    def __aiter__(self) -> RecordStream:
        return self

    async def __anext__(self) -> Sourced:
        while self._index >= len(self._batch):
            self._source, self._batch = await self._batches.__anext__()
            self._index = 0
        record = self._batch[self._index]
        self._index += 1
        return _sourced((record, self._source))

    def batches(self) -> AsyncIterator[tuple[str, Sequence[Record]]]:
        """The same records as ``(sitemap_url, [record, …])`` batches (less overhead);
        use either this or the stream itself."""
        return self._batches

    async def aclose(self) -> None:
        await self._batches.aclose()

    async def __aenter__(self) -> RecordStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class RecordIterator:
    """:class:`RecordStream` for synchronous code: runs its own event loop.

    Iterate for ``(record, sitemap_url)``; ``tree`` is complete when the iteration ends.
    Must not be used from a thread that is running an event loop (use
    :func:`aiter_records` there). Close it (or use ``with``) when stopping early.
    """

    def __init__(self, target: str, settings: _Settings) -> None:
        flow, opts = settings.start(target)
        self.tree: SitemapTree = flow.tree
        self._batch_iter = self._batches(flow, opts)
        self._iter = self._records(self._batch_iter)

    def batches(self) -> Iterator[tuple[str, Sequence[Record]]]:
        """The same records as ``(sitemap_url, [record, …])`` batches (less overhead);
        use either this or the iterator itself."""
        return self._batch_iter

    @staticmethod
    def _records(
        batches: Iterator[tuple[str, Sequence[Record]]],
    ) -> Generator[Sourced, None, None]:
        for source, records in batches:
            yield from map(_sourced, zip(records, itertools.repeat(source)))

    @staticmethod
    def _batches(
        flow: DiscoveryFlow, opts: _Options
    ) -> Generator[tuple[str, Sequence[Record]], None, None]:
        loop = asyncio.new_event_loop()
        gen = _batches(flow, opts, None, keep=True)
        try:
            while True:
                try:
                    yield loop.run_until_complete(gen.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            try:
                loop.run_until_complete(gen.aclose())
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()

    def __iter__(self) -> RecordIterator:
        return self

    def __next__(self) -> Sourced:
        return next(self._iter)

    def close(self) -> None:
        self._iter.close()
        self._batch_iter.close()

    def __enter__(self) -> RecordIterator:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


async def discover(
    target: str,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    per_host: int = DEFAULT_PER_HOST,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_sitemaps: int = DEFAULT_MAX_SITEMAPS,
    max_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
    max_document_bytes: int = DEFAULT_MAX_BYTES,
    max_redirects: int = MAX_REDIRECTS,
    timeout: float = DEFAULT_TIMEOUT,
    retries: int = DEFAULT_RETRIES,
    backoff: float = DEFAULT_BACKOFF,
    max_retry_after: float = DEFAULT_MAX_RETRY_AFTER,
    refuse_private: bool = False,
    cache_dir: str | os.PathLike[str] | None = None,
    follow: bool = True,
    strict: bool = False,
    workers: int | None = None,
    user_agent: str = USER_AGENT,
    client: httpx.AsyncClient | None = None,
    report: Report | None = None,
) -> SitemapTree:
    """Find and read every sitemap of a site (or below a sitemap URL); return the tree.

    ``target``: a site (``https://example.com/``, any URL whose path ends with ``/``: its
    origin's ``/robots.txt`` is read, then the well-known paths of
    :data:`~sitemapkit.core.discovery.PROBE_PATHS` are tried if it lists no sitemap), a
    robots.txt URL, or a sitemap URL. Every sitemap is fetched and parsed to the end; URL
    records are counted, not kept (use :func:`aiter_records` for them). Each sitemap is in
    ``tree.sitemaps`` with its HTTP status, size, entry count, findings, time and error.

    Budgets: ``max_depth`` (index nesting), ``max_sitemaps``, ``max_bytes`` (decompressed
    bytes over the crawl), ``max_document_bytes`` (per sitemap, enforced while streaming),
    ``max_redirects`` (per request), ``timeout`` (seconds to connect, to receive the
    headers, and between two reads of the body). ``retries`` on 429, 5xx and connection
    errors, waiting ``backoff`` × 2ⁿ seconds or the ``Retry-After`` (at most
    ``max_retry_after``). ``refuse_private=True`` refuses hosts that resolve to private,
    loopback or link-local addresses, for server-side use; off by default. ``cache_dir``
    turns on conditional requests. ``follow=False`` reads the sitemaps found directly but
    not the children of indexes. ``strict`` makes the parser stop at the first error
    finding. ``workers``: parser processes (``None``: one per core, up to 4, none on a
    single core; ``0``: parse in this process). ``client``: your own
    ``httpx.AsyncClient`` (not closed here; redirects are still followed by hand).
    ``report`` receives each sitemap's URL and findings as it finishes.

    Raises :class:`~sitemapkit.errors.InputError` for a target that is not an http(s)
    URL, ``ValueError`` for bad options; failures to fetch or read a sitemap are reported
    in the tree, not raised.
    """
    settings = _Settings(
        concurrency=concurrency,
        per_host=per_host,
        max_depth=max_depth,
        max_sitemaps=max_sitemaps,
        max_bytes=max_bytes,
        max_document_bytes=max_document_bytes,
        max_redirects=max_redirects,
        timeout=timeout,
        retries=retries,
        backoff=backoff,
        max_retry_after=max_retry_after,
        refuse_private=refuse_private,
        cache_dir=cache_dir,
        follow=follow,
        strict=strict,
        workers=workers,
        user_agent=user_agent,
        client=client,
        report=report,
    )
    flow, opts = settings.start(target)
    async for _ in _batches(flow, opts, client, keep=False):
        pass  # pragma: no cover - nothing is kept
    return flow.tree


def aiter_records(target: str, **options: Any) -> RecordStream:
    """Stream ``(record, sitemap_url)`` pairs of a crawl as they are parsed.

    Takes the keyword arguments of :func:`discover`. Memory stays bounded whatever the
    size of the tree: bodies are streamed into the parsers, and when the consumer falls
    behind, reading from the network pauses.
    """
    return RecordStream(target, _Settings(**options))


def read_url_records(target: str, **options: Any) -> RecordIterator:
    """:func:`aiter_records` for synchronous scripts (no ``client`` option).

    >>> for record, source in read_url_records("https://example.com/"):  # doctest: +SKIP
    ...     print(record.loc)
    """
    if options.get("client") is not None:
        raise ValueError("read_url_records runs its own event loop; it cannot use a client")
    return RecordIterator(target, _Settings(**options))


def discover_sync(target: str, **options: Any) -> SitemapTree:
    """:func:`discover` for synchronous scripts (takes the same keyword arguments)."""
    return asyncio.run(discover(target, **options))
