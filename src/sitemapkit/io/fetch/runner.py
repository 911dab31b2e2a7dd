"""io.fetch: the runner that drives one :class:`~sitemapkit.core.discovery.DiscoveryFlow`.

The flow decides what to fetch; the runner fetches it with one ``httpx.AsyncClient``:

* **Bounded concurrency and politeness**: at most ``concurrency`` requests at once and
  ``per_host`` per host; the standard proxy variables are honoured (``trust_env``).
* **Retries** on 429, 5xx and connection errors, with exponential backoff or the server's
  ``Retry-After`` (capped at ``max_retry_after``), but only before the first body byte was
  parsed: records already handed out are never read twice.
* **Redirects** followed by hand (each hop reported to the flow, which ends loops and
  refuses non-http(s) targets); hosts checked by :mod:`.guard` with ``refuse_private``.
* **Streaming** every body through :mod:`.decode` into a :mod:`.document` (parsed here or
  in a :mod:`.worker`), with the :mod:`.cache` for conditional requests.
* **Document order**: records are handed out in the flow's document order (children in
  the order their index lists them) however the fetches overlap; the records of a
  document read ahead of its turn are held until then, in bounded memory (:mod:`.hold`).
* **Deadlines**: ``timeout`` bounds each wait for the network; ``max_document_time``
  bounds a whole document (redirects, retries and body: a server that trickles a byte at
  a time resets the first, never the second), the time spent waiting for the consumer of
  the records left out; ``max_time`` bounds the crawl. What a deadline cuts is said: the
  document's status has the error (SM012), and the sitemaps not requested are grouped
  into SM012 findings naming how many and which first (:class:`~sitemapkit.core.crawl.Unread`).

httpx exceptions are translated here into :class:`~sitemapkit.errors.FetchError`; every
failure of one sitemap ends up in its status, not as an exception of the crawl.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Iterable, Sequence
from typing import Final
from urllib.parse import urlsplit

import httpx

from ...core.discovery import DiscoveryFlow, FetchRequest, FetchResponse
from ...core.model import SitemapRef
from ...core.parse import Record
from ...errors import FetchError, SitemapError
from ..http import ACCEPT_ENCODING, describe, retry_after_seconds
from .cache import Cache, CacheEntry
from .decode import ContentDecoder
from .document import Document, Emit, LocalDocument, RemoteDocument, RobotsBody
from .guard import Guard, Unresolved
from .hold import Batch, Holder
from .options import FetchOptions, Progress
from .wire import Clients
from .worker import ParserArgs, PlainUrls, Pool

__all__ = ["Runner"]

_ACCEPT: Final = "application/xml, text/xml;q=0.9, text/plain;q=0.8, */*;q=0.5"
_REDIRECTS: Final = frozenset([301, 302, 303, 307, 308])
#: Bodies up to this size (Content-Length, before decoding) are parsed in this process:
#: at most a few milliseconds of parsing, less than the round trips to a worker cost.
_SMALL: Final = 32_768


class _NotSent(Exception):
    """A request whose turn came after the crawl's deadline: it is not sent."""


class _Retry(Exception):
    """An attempt failed in a way worth another try (if none of the body was parsed)."""

    def __init__(self, wait: float | None, status: int | None, error: SitemapError) -> None:
        super().__init__(error.message)
        self.wait = wait
        self.status = status
        self.error = error


def _host_key(url: str) -> str:
    return urlsplit(url).netloc.lower()


class Runner:
    """Drives one DiscoveryFlow with one httpx client (``opts.client``, or its own).

    Records go to ``out`` as ``(sitemap_url, records)`` batches; with ``out=None`` they
    are counted by the flow and dropped (``discover``).
    """

    def __init__(
        self,
        flow: DiscoveryFlow,
        opts: FetchOptions,
        out: asyncio.Queue[Batch | None] | None,
    ) -> None:
        self.flow = flow
        self.opts = opts
        self.out = out
        self.clients = Clients(
            opts.client,
            headers={
                "User-Agent": opts.user_agent,
                "Accept": _ACCEPT,
                "Accept-Encoding": ACCEPT_ENCODING,
            },
            timeout=opts.timeout,
            concurrency=opts.concurrency,
        )
        self.cache = Cache(opts.cache_path) if opts.cache_path is not None else None
        workers = opts.parser_workers
        self.pool = Pool(workers) if workers > 0 else None
        self._guard = Guard() if opts.refuse_private else None
        self._parse_here = False
        self._slots = asyncio.Semaphore(opts.concurrency)
        self._hosts: dict[str, asyncio.Semaphore] = {}
        self._wake = asyncio.Event()
        self.holder = Holder(out, flow.blocked) if out is not None else None
        self._fetching: dict[FetchRequest, FetchState] = {}  # requests being fetched
        self.deadlines = Deadlines(opts)
        self._stopped = False

    @property
    def client(self) -> httpx.AsyncClient:
        """The httpx client (the caller's, or our own, made when first needed)."""
        return self.clients.http

    async def aclose(self) -> None:
        try:
            if self.pool is not None:
                await self.pool.stop()
        finally:
            if self.holder is not None:
                self.holder.close()
            await self.clients.aclose()

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    # -- driving ----------------------------------------------------------------------

    async def run(self) -> None:
        flow = self.flow
        tasks: set[asyncio.Task[None]] = set()
        finished: list[asyncio.Task[None]] = []
        room = self.opts.concurrency * 4  # queued tasks beyond the semaphores stay cheap

        def done(task: asyncio.Task[None]) -> None:
            # told by each task as it ends: one wake-up a request, not a wait over all
            finished.append(task)
            self._wake.set()

        self.deadlines.start(self._now())
        # a progress line shows how long it has waited: wake up to say so
        tick = 0.25 if self.opts.progress is not None else None
        try:
            while True:
                if not self._stopped and self._now() >= self.deadlines.end:
                    self._stopped = True
                    flow.stop(self.deadlines.stop_reason())
                while finished:
                    task = finished.pop()
                    tasks.discard(task)
                    task.result()  # a bug in _fetch: let it out
                for req in flow.next_requests(max(room - len(tasks), 0)):
                    task = asyncio.create_task(self._fetch(req))
                    task.add_done_callback(done)
                    tasks.add(task)
                if self.opts.progress is not None:
                    self.opts.progress(_progress(flow, self._fetching.values(), self._now()))
                if not tasks:
                    break
                self._wake.clear()
                # wake up when a request ends, an index queued new children, the crawl's
                # deadline passes (the requests in flight end by their own), or to tell
                left = None if self._stopped else max(self.deadlines.end - self._now(), 0.0)
                if tick is not None:
                    left = tick if left is None else min(left, tick)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(left):
                        await self._wake.wait()
            if self.holder is not None:
                await self.holder.release()  # what a skipped request held back
            report = self.opts.report
            if report is not None:
                nothing = flow.nothing_found()
                # what was not read: said once, by nothing_found when nothing was
                report.findings.extend([nothing] if nothing else flow.tree.unread_findings())
        finally:
            for task in tasks:
                task.remove_done_callback(done)
                task.cancel()
            if tasks:
                await asyncio.gather(*tasks, return_exceptions=True)

    async def _emit_records(self, req: FetchRequest, records: Sequence[Record]) -> None:
        flow = self.flow
        if type(records) is PlainUrls:  # no index entries among them: nothing to follow
            if self.holder is not None:
                await self.holder.put(req.order, (req.url, records))
            return
        before = flow.pending
        flow.on_records(req, records)
        if flow.pending != before:
            self._wake.set()
        if self.holder is None:
            return
        if flow.limits.follow and type(records[0]) is SitemapRef:
            # The entries of an index are followed, not handed out (see RecordStream).
            records = [r for r in records if type(r) is not SitemapRef]
            if not records:
                return
        await self.holder.put(req.order, (req.url, records))

    async def _document(
        self, req: FetchRequest, final_url: str, emit: Emit, length: int | None
    ) -> Document:
        args = ParserArgs(final_url, req.max_bytes, self.opts.strict)
        # workers start with the first document that needs one (pool.acquire): a crawl of
        # small documents only starts none (each would import the package: ~0.3 s of CPU)
        small = length is not None and length <= _SMALL
        if (
            self.pool is not None
            and not self._parse_here
            and not small
            and self.flow.sitemap_count >= 2
        ):
            try:
                worker, doc = await self.pool.acquire()
            except OSError:
                self._parse_here = True  # no worker could be started
            else:
                return RemoteDocument(emit, worker, doc, args, self.out is not None)
        return LocalDocument(emit, args)

    # -- one request ------------------------------------------------------------------

    async def _fetch(self, req: FetchRequest) -> None:
        state = FetchState(req.url)
        self._fetching[req] = state
        try:
            await self._attempts(req, state)
        except _NotSent:
            self.flow.drop(req, self.deadlines.stop_reason())
            return
        finally:
            del self._fetching[req]
        await self._respond(req, state)

    async def _attempts(self, req: FetchRequest, state: FetchState) -> None:
        async def emit(records: Sequence[Record]) -> None:
            # the deadline of a document does not count the waits for the consumer
            start = self._now()
            try:
                await self._emit_records(req, records)
            finally:
                state.paused += self._now() - start

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
                if self._now() + wait >= self.deadlines.cutoff(state):
                    break  # no time for another try: the last one's error stands
                attempt += 1
                if state.doc is not None:
                    await state.doc.abort()
                    state.doc = None
                await asyncio.sleep(wait)
            except SitemapError as exc:
                state.error = exc
                break

    async def _respond(self, req: FetchRequest, state: FetchState) -> None:
        """Tell the flow (and the report) how ``req`` ended."""
        doc = state.doc
        if doc is not None and state.error is not None:
            with contextlib.suppress(SitemapError):
                await doc.abort()
        robots = isinstance(doc, RobotsBody)
        tree = self.flow.tree
        seen = len(tree.sitemaps)
        self.flow.on_response(
            FetchResponse(
                req,
                state.url,
                state.status,
                headers=state.headers,
                body=doc.body if isinstance(doc, RobotsBody) else b"",
                truncated=doc.truncated if isinstance(doc, RobotsBody) else False,
                kind=None if doc is None or robots else doc.kind,
                size=0 if doc is None else doc.bytes_in,
                transferred=state.transferred,
                entries=0 if doc is None or robots else doc.entries,
                findings=() if doc is None else tuple(doc.findings),
                error=state.error,
                elapsed=0.0 if state.started is None else self._now() - state.started,
                from_cache=state.from_cache,
            )
        )
        if self.flow.listed and self.holder is not None:
            await self.holder.put(req.order, (req.url, self.flow.listed))
            self.flow.listed = ()
        if self.holder is not None:
            await self.holder.release()
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

    async def _attempt(self, req: FetchRequest, state: FetchState, emit: Emit) -> None:
        """One try: follow redirects from ``state.url`` and read the final body."""
        flow = self.flow
        while True:
            url = state.url
            if self._guard is not None:
                try:
                    await self._guard.check(url)
                except Unresolved as exc:
                    raise _Retry(None, None, exc.error) from exc
            cached = self.cache.lookup(url) if self.cache is not None else None
            headers = {"Accept-Encoding": ACCEPT_ENCODING}
            if cached is not None:
                if cached.etag:
                    headers["If-None-Match"] = cached.etag
                if cached.last_modified:
                    headers["If-Modified-Since"] = cached.last_modified
            async with self._slots, self._host_slot(url):
                if state.started is None:  # elapsed counts from here, not the queue
                    if self._stopped:
                        raise _NotSent  # its turn came after the crawl's deadline
                    state.started = self._now()
                cutoff = self.deadlines.cutoff(state)
                try:
                    # the whole head within `timeout`: a trickle of it resets httpx's own
                    async with asyncio.timeout_at(min(self._now() + self.opts.timeout, cutoff)):
                        response = await self.clients.send(url, headers, self.opts.timeout)
                except (httpx.TimeoutException, TimeoutError) as exc:
                    if self._now() >= cutoff:
                        raise self.deadlines.late(state, self._now()) from exc
                    raise _Retry(
                        None,
                        None,
                        FetchError(f"No response within {self.opts.timeout:g} s", where=url),
                    ) from exc
                except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
                    raise FetchError(f"Cannot fetch {url!r}: {exc}", where=url) from exc
                except httpx.TransportError as exc:
                    raise _Retry(
                        None, None, FetchError(f"Connection failed: {describe(exc)}", where=url)
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

    async def _open(
        self, req: FetchRequest, state: FetchState, emit: Emit, length: int | None = None
    ) -> Document:
        doc: Document
        if req.purpose == "robots":
            doc = RobotsBody(req.max_bytes)
        else:
            doc = await self._document(req, state.url, emit, length)
        state.doc = doc
        return doc

    async def _arrivals(
        self, state: FetchState, response: httpx.Response
    ) -> AsyncGenerator[bytes, None]:
        """The raw chunks of the body as they arrive, each awaited within the document's
        deadline (httpx's read timeout is reset by every byte of a trickle)."""
        chunks = response.aiter_raw()
        while True:
            try:
                async with asyncio.timeout_at(self.deadlines.cutoff(state)):
                    raw = await anext(chunks)
            except StopAsyncIteration:
                return
            except TimeoutError as exc:
                raise self.deadlines.late(state, self._now()) from exc
            yield raw

    async def _read_body(
        self, req: FetchRequest, state: FetchState, response: httpx.Response, emit: Emit
    ) -> None:
        url = state.url
        decoder = ContentDecoder(response.headers.get("content-encoding", ""), url)
        doc = await self._open(req, state, emit, _length(response))
        writer = self.cache.writer(url, response.headers) if self.cache is not None else None
        try:
            try:
                async with contextlib.aclosing(self._arrivals(state, response)) as chunks:
                    async for raw in chunks:
                        state.transferred += len(raw)
                        if writer is not None:
                            writer.write(raw)
                        for piece in decoder.decode(raw):
                            await doc.feed(piece)
                        if isinstance(doc, RobotsBody) and doc.truncated:
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
                    message = f"Connection failed: {describe(exc)}"
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
        self, req: FetchRequest, state: FetchState, cached: CacheEntry, emit: Emit
    ) -> None:
        decoder = ContentDecoder(cached.content_encoding, state.url)
        doc = await self._open(req, state, emit)
        try:
            with cached.body.open("rb") as file:
                while chunk := file.read(65_536):
                    for piece in decoder.decode(chunk):
                        await doc.feed(piece)
                    if isinstance(doc, RobotsBody) and doc.truncated:
                        break
                else:
                    decoder.flush()
        except OSError as exc:
            raise FetchError(f"Cannot read the cached body: {exc}", where=state.url) from exc
        await doc.close()


def _length(response: httpx.Response) -> int | None:
    """The body's announced Content-Length, when it is a number."""
    value = response.headers.get("content-length", "")
    return int(value) if value.isdigit() else None


def _progress(flow: DiscoveryFlow, fetching: Iterable[FetchState], now: float) -> Progress:
    started = [(st.started, st.url) for st in fetching if st.started is not None]
    oldest = min(started) if started else None
    return Progress(
        done=len(flow.tree.sitemaps),
        pending=flow.pending,
        waiting=oldest[1] if oldest is not None else None,
        waited=now - oldest[0] if oldest is not None else 0.0,
    )


class Deadlines:
    """The deadlines of one crawl, on the event loop's clock: ``end`` for the crawl
    (``max_time`` from :meth:`start`), and one per document (``max_document_time`` from its
    first request, the waits for the consumer of its records added)."""

    def __init__(self, opts: FetchOptions) -> None:
        self.opts = opts
        self.end = float("inf")

    def start(self, now: float) -> None:
        self.end = now + self.opts.max_time

    def cutoff(self, state: FetchState) -> float:
        """When this document must be read by: its own deadline or the crawl's, whichever
        comes first."""
        if state.started is None:
            return self.end
        return min(state.started + self.opts.max_document_time + state.paused, self.end)

    def late(self, state: FetchState, now: float) -> FetchError:
        """The error of a document its deadline cut."""
        read = state.doc.entries if state.doc is not None else 0
        done = f"; {read:,} entries were read" if read else ""
        if now >= self.end:
            message = (
                f"The crawl's time budget (max_time={self.opts.max_time:g} s) was spent before "
                f"its end{done}; raise max_time (--max-time) to read it"
            )
        else:
            message = (
                f"The deadline per document ({self.opts.max_document_time:g} s) passed before "
                f"its end (a server that trickles its answer is cut there){done}; raise "
                "max_document_time (--max-document-time) to wait longer"
            )
        return FetchError(message, where=state.url)

    def stop_reason(self) -> str:
        """Why the sitemaps not requested by the crawl's end are not read."""
        return (
            f"the crawl's time budget (max_time={self.opts.max_time:g} s) is spent; raise "
            "max_time (--max-time) to read more"
        )


class FetchState:
    __slots__ = (
        "doc",
        "error",
        "from_cache",
        "headers",
        "paused",
        "started",
        "status",
        "transferred",
        "url",
    )

    def __init__(self, url: str) -> None:
        self.url = url
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.doc: Document | None = None
        self.error: SitemapError | None = None
        self.transferred = 0
        self.from_cache = False
        self.started: float | None = None
        self.paused = 0.0  # seconds spent waiting for the consumer of the records
