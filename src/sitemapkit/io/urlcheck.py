"""io: the online checks of ``validate``: robots.txt, sitemap URLs and the URLs they list.

This module only makes requests; what an answer means is decided in
:mod:`sitemapkit.core.probe` (reading headers, heads of pages, image sizes) and
:mod:`sitemapkit.lint.online` (findings). :class:`UrlChecker` checks one URL at a time
(:meth:`~UrlChecker.check`) or a stream of them (:meth:`~UrlChecker.iter_checks`);
:class:`BlockingUrlChecker` runs it on a private event loop for synchronous callers.

How a URL is checked:

* **robots.txt first.** The robots.txt of each origin is fetched once (at most 5
  redirects, at most :data:`~sitemapkit.core.robots.MAX_ROBOTS_BYTES` read) and matched
  with Protego for the robots agent (``Googlebot`` by default). A disallowed URL is not
  requested. 4xx means no rules; 429, 5xx or no answer means "unreachable": RFC 9309 tells
  crawlers to assume complete disallow, which the caller reports once per site, and the
  URLs are then checked as if everything were allowed.
* **HEAD, then GET when needed.** A HEAD answer of 405 or 501 (the method is refused) or
  any other 4xx/5xx (some servers route only GET) is repeated with GET; after three
  405/501 answers, the host gets GET directly. An HTML page that answers 200 costs a
  second request: a GET that reads the page only up to the end of its ``<head>`` (at most
  :data:`~sitemapkit.core.probe.HEAD_BYTES`) and then closes the connection. A thumbnail
  is one GET with ``Range: bytes=0-131071`` that stops as soon as the size is known.
  Video content and player URLs are checked by status only (HEAD).
* **Redirects by hand**, at most 5 hops, loops detected, so the chain can be reported.
* **Politeness and bounds.** At most ``concurrency`` requests in flight (default 8) and
  :data:`PER_HOST` (4) per host; per-request timeout (default 10 s, for the headers and
  again for reading a head or image); 429 and 503 are retried at most twice, after
  ``Retry-After`` (capped at 30 s) or 1 s, 2 s. Requests say ``User-Agent:``
  :data:`~sitemapkit.io.fetch.USER_AGENT`; robots.txt is evaluated for the robots agent.
  Only http(s) URLs are requested.
* **Constant memory.** :meth:`UrlChecker.iter_checks` pulls jobs from an iterator only
  while fewer than ``4 × concurrency`` are in flight. Each URL is requested once while it
  is remembered: the answers of the last :data:`REMEMBERED` URLs (about 30 MB with
  80-character URLs) and the robots.txt rules of the last :data:`ROBOTS_REMEMBERED`
  origins are kept.

httpx errors never escape: no answer is a :class:`~sitemapkit.core.probe.Probe` with a
``failure``. Any other exception escaping this module is a bug.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Generic, Literal, TypeVar, cast
from urllib.parse import urlsplit

import httpx
from protego import Protego

from ..core.discovery import MAX_REDIRECTS
from ..core.probe import (
    HEAD_BYTES,
    IMAGE_BYTES,
    Failure,
    HeadScanner,
    ImageSize,
    Probe,
    Purpose,
    RobotsAnswer,
    head_refused,
    is_html,
    is_http,
    is_noindex,
    link_canonical,
    redirect_target,
    retryable,
    robots_directives,
    sniff_image,
)
from ..core.robots import MAX_ROBOTS_BYTES, robots_url
from ..errors import SitemapError
from .fetch import USER_AGENT, ContentDecoder
from .http import (
    ACCEPT_ENCODING,
    check_requests,
    check_retries,
    describe,
    new_client,
    retry_after_seconds,
)
from .resource import AsyncCloseable, Closeable

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_TIMEOUT",
    "PER_HOST",
    "REMEMBERED",
    "ROBOTS_REMEMBERED",
    "BlockingUrlChecker",
    "CheckOptions",
    "LoopThread",
    "UrlChecker",
]

DEFAULT_CONCURRENCY: Final = 8
#: Requests in flight per host (scheme-less ``host:port``). Twice the reader's 2: the
#: checks are HEADs and short partial GETs, not whole documents.
PER_HOST: Final = 4
DEFAULT_TIMEOUT: Final = 10.0
DEFAULT_RETRIES: Final = 2
DEFAULT_MAX_RETRY_AFTER: Final = 30.0
DEFAULT_BACKOFF: Final = 1.0
#: URLs whose answers are remembered (about 600 bytes each), so an alternate or a
#: thumbnail listed by many entries, or a loc that is also an alternate, is requested once.
REMEMBERED: Final = 50_000
#: Origins whose robots.txt rules are remembered (a parsed file can be a few MB).
ROBOTS_REMEMBERED: Final = 64
_HOSTS_REMEMBERED: Final = 10_000
_REFUSALS: Final = 3  # HEADs refused with 405/501 before a host gets GET directly
_WINDOW: Final = 4  # jobs in flight per unit of concurrency (waiting for a slot is cheap)

_ACCEPT: Final = {
    "page": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8",
    "thumbnail": "image/*,*/*;q=0.5",
    "robots": "text/plain,*/*;q=0.5",
}
_CHARSET: Final = re.compile(r";\s*charset\s*=\s*\"?([A-Za-z0-9._:-]+)", re.IGNORECASE)

Read = Literal["head", "image", "robots"]
_K = TypeVar("_K")
_V = TypeVar("_V")
_T = TypeVar("_T")
_R = TypeVar("_R")


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """How the online checks behave; every number is a bound (see the module doc).

    ``check_limit`` caps the URLs requested by :meth:`UrlChecker.check` (answers that
    are remembered do not count); ``None`` is no cap.
    """

    robots_agent: str = "Googlebot"
    concurrency: int = DEFAULT_CONCURRENCY
    per_host: int = PER_HOST
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    max_retry_after: float = DEFAULT_MAX_RETRY_AFTER
    backoff: float = DEFAULT_BACKOFF
    check_limit: int | None = None
    user_agent: str = USER_AGENT

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_-]+", self.robots_agent):
            raise ValueError(
                f"robots agent {self.robots_agent!r} is not a product token (letters, digits, "
                "'-' and '_', e.g. Googlebot)"
            )
        check_requests(self.concurrency, self.per_host, self.timeout)
        check_retries(self.retries, self.backoff, self.max_retry_after)
        if self.check_limit is not None and self.check_limit < 0:
            raise ValueError("check_limit must not be negative")


class _Lru(Generic[_K, _V]):
    """A dict that forgets its least recently used items beyond ``size``."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[_K, _V] = OrderedDict()

    def get(self, key: _K) -> _V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: _K, value: _V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def pop(self, key: _K) -> None:
        self._items.pop(key, None)


@dataclass(slots=True)
class _Answer:
    """One request's answer (no redirects followed), or why there is none."""

    status: int | None = None
    headers: httpx.Headers = field(default_factory=httpx.Headers)
    failure: Failure | None = None
    detail: str = ""
    body: bytes = b""
    head: HeadScanner | None = None
    image: ImageSize | None = None


@dataclass(frozen=True, slots=True)
class _Robots:
    answer: RobotsAnswer
    rules: Protego | None


def _host(url: str) -> str:
    return urlsplit(url).netloc.lower()


class UrlChecker(AsyncCloseable):
    """Checks URLs the way a search engine's crawler meets them (see the module doc).

    Use it as an async context manager (it owns an ``httpx.AsyncClient`` unless one is
    given). ``started`` counts the URLs requested, ``remembered`` the checks answered
    from memory, ``skipped`` the checks refused by ``check_limit``; ``unreachable``
    holds every robots.txt that could not be read (for the caller's notes).
    """

    def __init__(self, options: CheckOptions, *, client: httpx.AsyncClient | None = None) -> None:
        self.options = options
        self._own_client = client is None
        self.client = client or new_client(
            headers={"User-Agent": options.user_agent},
            timeout=options.timeout,
            concurrency=options.concurrency,
        )
        self.started = 0
        self.remembered = 0
        self.skipped = 0
        self.unreachable: dict[str, RobotsAnswer] = {}
        self._slots = asyncio.Semaphore(options.concurrency)
        self._per_host = min(options.per_host, options.concurrency)
        self._hosts: dict[str, asyncio.Semaphore] = {}
        self._host_users: Counter[str] = Counter()
        self._no_head: set[str] = set()
        self._refusals: Counter[str] = Counter()
        self._results: _Lru[tuple[Purpose, str], asyncio.Future[Probe]] = _Lru(REMEMBERED)
        self._robots: _Lru[str, asyncio.Task[_Robots]] = _Lru(ROBOTS_REMEMBERED)

    async def aclose(self) -> None:
        if self._own_client:
            await self.client.aclose()

    # -- streams of checks --------------------------------------------------------------

    async def iter_checks(
        self, jobs: Iterable[tuple[_T, str, Purpose]]
    ) -> AsyncIterator[tuple[_T, Probe | None]]:
        """Check ``(tag, url, purpose)`` jobs; yield ``(tag, probe)`` as each finishes.

        Jobs are pulled from the iterable only while fewer than ``4 × concurrency`` are
        in flight, so a generator of millions of jobs costs constant memory (and may do
        work, such as parsing, between jobs). ``probe`` is None for a job that
        ``check_limit`` refused.
        """
        source = iter(jobs)
        window = self.options.concurrency * _WINDOW
        running: dict[asyncio.Task[Probe | None], _T] = {}
        more = True
        try:
            while True:
                while more and len(running) < window:
                    job = next(source, None)
                    if job is None:
                        more = False
                        break
                    tag, url, purpose = job
                    running[asyncio.ensure_future(self.check(url, purpose))] = tag
                if not running:
                    return
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    yield running.pop(task), task.result()
        finally:
            for task in running:
                task.cancel()
            if running:
                await asyncio.gather(*running, return_exceptions=True)

    async def check(self, url: str, purpose: Purpose) -> Probe | None:
        """:meth:`probe` a URL once: a URL checked recently for the same purpose gets the
        remembered answer; None when ``check_limit`` URLs were requested already."""
        key = (purpose, url)
        known = self._results.get(key)
        if known is not None:
            self.remembered += 1
            return await asyncio.shield(known)
        limit = self.options.check_limit
        if limit is not None and self.started >= limit:
            self.skipped += 1
            return None
        self.started += 1
        future: asyncio.Future[Probe] = asyncio.get_running_loop().create_future()
        self._results.put(key, future)
        try:
            probe = await self.probe(url, purpose)
        except BaseException:
            self._results.pop(key)
            future.cancel()
            raise
        future.set_result(probe)
        return probe

    # -- one URL ------------------------------------------------------------------------

    async def robots_verdict(self, url: str) -> Probe:
        """What robots.txt says about ``url``, without requesting it: a probe whose
        ``failure`` is ``"blocked"`` when disallowed, and whose ``robots`` says how the
        robots.txt answered."""
        allowed, answer = await self.allowed(url)
        if allowed:
            return Probe(url, "sitemap", robots=answer)
        return Probe(url, "sitemap", failure="blocked", detail=answer.url, robots=answer)

    async def allowed(self, url: str) -> tuple[bool, RobotsAnswer]:
        """Whether robots.txt lets the robots agent fetch ``url``, and how it answered."""
        robots = await self._robots_of(url)
        if robots.rules is None:
            return True, robots.answer
        return robots.rules.can_fetch(url, self.options.robots_agent), robots.answer

    async def probe(self, url: str, purpose: Purpose) -> Probe:
        """Check one URL for ``purpose`` (see the module doc); never raises for a failing
        server."""
        if not is_http(url):
            return Probe(url, purpose, failure="connection", detail="not an http(s) URL")
        allowed, robots = await self.allowed(url)
        if not allowed:
            return Probe(url, purpose, failure="blocked", detail=robots.url, robots=robots)
        read: Read | None = (
            "head" if purpose == "page" else "image" if purpose == "thumbnail" else None
        )
        current = url
        redirects: list[tuple[int, str]] = []
        seen = {url}
        while True:
            answer, method = await self._request(current, purpose, read)
            if answer.failure is not None or answer.status is None:
                return Probe(
                    url,
                    purpose,
                    final_url=current,
                    redirects=tuple(redirects),
                    failure=answer.failure or "connection",
                    detail=answer.detail,
                    robots=robots,
                    method=method,
                )
            status = answer.status
            location = answer.headers.get("location")
            target = redirect_target(status, location, current)
            if target is None:
                break
            redirects.append((status, target or (location or "")))
            failure: Failure | None = None
            if not target or not is_http(target):
                failure = "bad-redirect"
            elif target in seen:
                failure = "loop"
            elif len(redirects) > MAX_REDIRECTS:
                failure = "too-many-redirects"
            if failure is not None:
                return Probe(
                    url,
                    purpose,
                    status=status,
                    final_url=current,
                    redirects=tuple(redirects),
                    failure=failure,
                    detail=location or "",
                    robots=robots,
                    method=method,
                )
            seen.add(target)
            current = target
        headers = [answer.headers]
        content_type = answer.headers.get("content-type")
        if read == "head" and method == "HEAD" and answer.status == 200 and is_html(content_type):
            page = await self._exchange("GET", current, read="head")
            if page.failure is None and page.status == 200:
                answer.head = page.head
                headers.append(page.headers)
                method = "GET"
        return self._result(url, purpose, current, redirects, answer, headers, robots, method)

    def _result(
        self,
        url: str,
        purpose: Purpose,
        final: str,
        redirects: list[tuple[int, str]],
        answer: _Answer,
        headers: list[httpx.Headers],
        robots: RobotsAnswer,
        method: str,
    ) -> Probe:
        agent = self.options.robots_agent
        noindex: str | None = None
        for value in (v for h in headers for v in h.get_list("x-robots-tag")):
            if is_noindex(robots_directives([value], agent)):
                noindex = f"X-Robots-Tag: {value.strip()}"
                break
        head = answer.head
        if noindex is None and head is not None:
            noindex = head.noindex()
        canonical = link_canonical([v for h in headers for v in h.get_list("link")], final)
        source = "Link header"
        if canonical is None and head is not None:
            canonical = head.canonical(final)
            source = '<link rel="canonical">'
        return Probe(
            url,
            purpose,
            status=answer.status,
            final_url=final,
            redirects=tuple(redirects),
            robots=robots,
            noindex=noindex,
            canonical=canonical,
            canonical_source=source if canonical is not None else "",
            image=answer.image,
            method=method,
            content_type=answer.headers.get("content-type"),
        )

    async def _request(self, url: str, purpose: Purpose, read: Read | None) -> tuple[_Answer, str]:
        """One hop: HEAD (or GET where HEAD is no use), confirmed with GET when refused."""
        host = _host(url)
        if purpose == "thumbnail":
            answer = await self._exchange("GET", url, read="image", ranged=True)
            if answer.status == 416:  # an empty file, or a server that cannot do ranges
                answer = await self._exchange("GET", url, read="image")
            return answer, "GET"
        if host not in self._no_head:
            answer = await self._exchange("HEAD", url)
            if answer.status is None or not head_refused(answer.status):
                return answer, "HEAD"
            if answer.status in (405, 501) and len(self._refusals) < _HOSTS_REMEMBERED:
                self._refusals[host] += 1
                if self._refusals[host] >= _REFUSALS and len(self._no_head) < _HOSTS_REMEMBERED:
                    self._no_head.add(host)
        return await self._exchange("GET", url, read=read), "GET"

    # -- robots.txt ---------------------------------------------------------------------

    async def _robots_of(self, url: str) -> _Robots:
        where = robots_url(url)
        task = self._robots.get(where)
        if task is None:
            task = asyncio.ensure_future(self._fetch_robots(where))
            self._robots.put(where, task)
        return await asyncio.shield(task)

    async def _fetch_robots(self, where: str) -> _Robots:
        url = where
        hops = 0
        while True:
            answer = await self._exchange("GET", url, read="robots")
            if answer.status is None:
                result = _Robots(RobotsAnswer(where, None, answer.detail or "no answer"), None)
                break
            target = redirect_target(answer.status, answer.headers.get("location"), url)
            if target is not None and target and is_http(target) and hops < MAX_REDIRECTS:
                hops += 1
                url = target
                continue
            # RFC 9309 §2.3.1.2: past five redirects, robots.txt MAY be taken as unavailable.
            robots = RobotsAnswer(where, answer.status)
            rules = None
            if robots.state == "parse":
                text = answer.body.decode("utf-8", "replace").removeprefix("\ufeff")
                rules = Protego.parse(text)
            result = _Robots(robots, rules)
            break
        if result.answer.state == "unreachable":
            self.unreachable[where] = result.answer
        return result

    # -- one request --------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _slot(self, url: str) -> AsyncIterator[None]:
        """A place among the requests to this host, then among all requests."""
        host = _host(url)
        gate = self._hosts.get(host)
        if gate is None:
            gate = self._hosts[host] = asyncio.Semaphore(self._per_host)
        self._host_users[host] += 1
        try:
            async with gate, self._slots:
                yield
        finally:
            self._host_users[host] -= 1
            if not self._host_users[host]:
                del self._host_users[host]
                del self._hosts[host]

    async def _exchange(
        self, method: str, url: str, *, read: Read | None = None, ranged: bool = False
    ) -> _Answer:
        """One request, retried on 429/503 (after ``Retry-After``, bounded)."""
        opts = self.options
        attempt = 0
        while True:
            answer = await self._attempt(method, url, read, ranged)
            if answer.status is None or not retryable(answer.status) or attempt >= opts.retries:
                return answer
            wait = retry_after_seconds(answer.headers.get("retry-after"), opts.max_retry_after)
            if wait is None:
                wait = min(opts.backoff * 2**attempt, opts.max_retry_after)
            attempt += 1
            await asyncio.sleep(wait)

    async def _attempt(self, method: str, url: str, read: Read | None, ranged: bool) -> _Answer:
        timeout = self.options.timeout
        headers = {"Accept": _ACCEPT.get(read or "", "*/*")}
        if read == "image":
            headers["Accept-Encoding"] = "identity"
            if ranged:
                headers["Range"] = f"bytes=0-{IMAGE_BYTES - 1}"
        else:
            headers["Accept-Encoding"] = ACCEPT_ENCODING
        async with self._slot(url):
            try:
                request = self.client.build_request(method, url, headers=headers)
                async with asyncio.timeout(timeout):
                    response = await self.client.send(request, stream=True)
            except (TimeoutError, httpx.TimeoutException):
                return _Answer(failure="timeout", detail=f"no answer within {timeout:g} s")
            except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
                return _Answer(failure="connection", detail=describe(exc))
            except httpx.TransportError as exc:
                return _Answer(failure="connection", detail=describe(exc))
            try:
                answer = _Answer(response.status_code, response.headers)
                if read is not None and method == "GET" and response.status_code in (200, 206):
                    # What was read before a stall or a broken connection still counts.
                    with contextlib.suppress(TimeoutError, httpx.TransportError, SitemapError):
                        async with asyncio.timeout(timeout):
                            await self._read(response, read, answer)
                return answer
            finally:
                await response.aclose()

    async def _read(self, response: httpx.Response, read: Read, answer: _Answer) -> None:
        """Read as much of the body as ``read`` needs, no more."""
        content_type = response.headers.get("content-type")
        if read == "head":
            if not is_html(content_type):
                return
            m = _CHARSET.search(content_type or "")
            answer.head = HeadScanner(
                agent=self.options.robots_agent, charset=m.group(1) if m else None
            )
            limit = HEAD_BYTES
        elif read == "image":
            limit = IMAGE_BYTES
        else:
            limit = MAX_ROBOTS_BYTES
        decoder = ContentDecoder(response.headers.get("content-encoding", ""), str(response.url))
        head = answer.head
        kept = bytearray()
        # An async generator (httpx types it as an iterator): closed here, not by the GC.
        raw_chunks = cast("AsyncGenerator[bytes, None]", response.aiter_raw())
        async with contextlib.aclosing(raw_chunks) as chunks:
            async for raw in chunks:
                for piece in decoder.decode(raw):
                    if head is not None:
                        if head.feed(piece):
                            return
                        continue
                    kept += piece[: limit - len(kept)]
                    if read == "image":
                        found = sniff_image(bytes(kept))
                        if found != "more":
                            answer.image = found if isinstance(found, ImageSize) else None
                            return
                    if len(kept) >= limit:
                        answer.body = bytes(kept)
                        return
        answer.body = bytes(kept)


class LoopThread(Closeable):
    """A private event loop in a daemon thread, for synchronous code: :meth:`run` runs a
    coroutine on it and waits. Works whether or not the caller runs an event loop of its
    own. One loop can serve several async clients (the validator's fetcher and its online
    checks share one, so they share one ``httpx.AsyncClient`` and its connection pool).
    """

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, _R]) -> _R:
        """Run ``coro`` on the loop and wait for its result (cancelled if the wait fails)."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def close(self) -> None:
        """Stop the loop and its thread; the loop cannot be used afterwards."""
        try:
            self.run(self.loop.shutdown_asyncgens())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join()
            self.loop.close()


class BlockingUrlChecker(Closeable):
    """A :class:`UrlChecker` on a private event loop in a thread, for synchronous code.

    :meth:`call` runs a coroutine function with the checker and returns its result; the
    calling thread waits. Works whether or not the caller runs an event loop of its own.
    Close it (or use it as a context manager) to stop the loop and the client. With
    ``client`` and ``loop`` (the client's :class:`LoopThread`), it shares both and closes
    neither.

    >>> with BlockingUrlChecker(CheckOptions()) as checker:
    ...     checker.call(lambda c: c.probe("ftp://example.com/a", "page")).failure
    'connection'
    """

    def __init__(
        self,
        options: CheckOptions,
        *,
        client: httpx.AsyncClient | None = None,
        loop: LoopThread | None = None,
    ) -> None:
        if (client is None) != (loop is None):
            raise ValueError("a shared client needs its loop, and a shared loop its client")
        self.checker = UrlChecker(options, client=client)
        self._own_loop = loop is None
        self._loop = loop or LoopThread("sitemapkit-urlcheck")

    def call(self, fn: Callable[[UrlChecker], Coroutine[Any, Any, _R]]) -> _R:
        """Run ``fn(checker)`` on the checker's loop and wait for its result."""
        return self._loop.run(fn(self.checker))

    def close(self) -> None:
        """Close the client and stop the loop (unless shared); the checker cannot be used
        afterwards."""
        try:
            self.call(lambda c: c.aclose())
        finally:
            if self._own_loop:
                self._loop.close()
