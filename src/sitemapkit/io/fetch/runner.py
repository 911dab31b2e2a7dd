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
  document read ahead of its turn are held until then. The flow issues requests
  depth-first, so at most the documents in flight are held.

httpx exceptions are translated here into :class:`~sitemapkit.errors.FetchError`; every
failure of one sitemap ends up in its status, not as an exception of the crawl.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from typing import Final
from urllib.parse import urlsplit

import httpx

from ...core.discovery import DiscoveryFlow, FetchRequest, FetchResponse
from ...core.model import SitemapRef
from ...core.parse import Record
from ...errors import FetchError, SitemapError
from ..http import describe, new_client, retry_after_seconds
from .cache import Cache, CacheEntry
from .decode import ContentDecoder
from .document import Document, Emit, LocalDocument, RemoteDocument, RobotsBody
from .guard import Guard, Unresolved
from .options import FetchOptions
from .worker import ParserArgs, PlainUrls, Pool

__all__ = ["Runner"]

_ACCEPT: Final = "application/xml, text/xml;q=0.9, text/plain;q=0.8, */*;q=0.5"
_REDIRECTS: Final = frozenset([301, 302, 303, 307, 308])

Batch = tuple[str, Sequence[Record]]


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
        client = opts.client
        self._own_client = client is None
        self.client = client or new_client(
            headers={
                "User-Agent": opts.user_agent,
                "Accept": _ACCEPT,
                "Accept-Encoding": "gzip, deflate",
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
        # records of documents read ahead of their turn, by the document's order
        self._held: dict[tuple[int, ...], list[Batch]] = {}
        self._releasing = asyncio.Lock()

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
            await self._release()  # what a skipped request held back
            report = self.opts.report
            nothing = flow.nothing_found()
            if report is not None and nothing is not None:
                report.findings.append(nothing)
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
                await self._put(req, (req.url, records))
            return
        before = flow.pending
        flow.on_records(req, records)
        if flow.pending != before:
            self._wake.set()
        if self.out is None:
            return
        if flow.limits.follow and type(records[0]) is SitemapRef:
            # The entries of an index are followed, not handed out (see RecordStream).
            records = [r for r in records if type(r) is not SitemapRef]
            if not records:
                return
        await self._put(req, (req.url, records))

    async def _put(self, req: FetchRequest, batch: Batch) -> None:
        """Hand a batch out now, or hold it while a document before it is open or has
        batches held."""
        assert self.out is not None
        order = req.order
        if self.flow.blocked(order) or any(o <= order for o in self._held):
            self._held.setdefault(order, []).append(batch)
            return
        await self.out.put(batch)

    async def _release(self) -> None:
        """Hand out the held batches whose turn has come, in document order."""
        if self.out is None:
            return
        async with self._releasing:
            while self._held:
                order = min(self._held)
                if self.flow.blocked(order):
                    return
                held = self._held[order]
                while held:  # batches added meanwhile join this list
                    await self.out.put(held.pop(0))
                del self._held[order]

    async def _document(self, req: FetchRequest, final_url: str, emit: Emit) -> Document:
        args = ParserArgs(final_url, req.max_bytes, self.opts.strict)
        if self.pool is not None and not self._parse_here and self.flow.sitemap_count >= 2:
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
                elapsed=0.0 if state.started is None else time.monotonic() - state.started,
                from_cache=state.from_cache,
            )
        )
        if self.flow.listed and self.out is not None:
            await self._put(req, (req.url, self.flow.listed))
            self.flow.listed = ()
        await self._release()
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

    async def _open(self, req: FetchRequest, state: FetchState, emit: Emit) -> Document:
        doc: Document
        if req.purpose == "robots":
            doc = RobotsBody(req.max_bytes)
        else:
            doc = await self._document(req, state.url, emit)
        state.doc = doc
        return doc

    async def _read_body(
        self, req: FetchRequest, state: FetchState, response: httpx.Response, emit: Emit
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


class FetchState:
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
        self.doc: Document | None = None
        self.error: SitemapError | None = None
        self.transferred = 0
        self.from_cache = False
        self.started: float | None = None
