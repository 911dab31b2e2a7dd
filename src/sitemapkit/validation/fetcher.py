"""validation: the network seen by the validator — one URL's body within a byte budget.

An edge: :class:`Fetcher` is the pluggable protocol (tests and users pass their own), and
:class:`HttpFetcher` the default, on the async machinery of :mod:`sitemapkit.io`: one
``httpx.AsyncClient`` (:func:`sitemapkit.io.http.new_client`, one connection pool) on a
private event loop (:class:`sitemapkit.io.urlcheck.LoopThread`), the options of a crawl
(:class:`~sitemapkit.io.fetch.FetchOptions`: timeout, redirects, retries, user agent,
``refuse_private``), bodies decoded in bounded steps
(:class:`~sitemapkit.io.fetch.ContentDecoder`) and ``Retry-After`` read by the one parser
(:func:`sitemapkit.io.http.retry_after_seconds`). The online checks of the same
validation share its client and its loop (:meth:`HttpFetcher.url_checker`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol, cast
from urllib.parse import urljoin

from ..core.probe import retryable
from ..errors import FetchError, ParseError
from ..io.http import ACCEPT_ENCODING
from ..io.resource import Closeable

if TYPE_CHECKING:  # imported when used: httpx costs startup time
    import httpx

    from ..io.fetch import FetchOptions
    from ..io.urlcheck import BlockingUrlChecker, CheckOptions, LoopThread

__all__ = ["Fetched", "Fetcher", "HttpFetcher"]

_REDIRECTS: Final = frozenset([301, 302, 303, 307, 308])
_ACCEPT: Final = "application/xml, text/xml;q=0.9, text/plain;q=0.8, */*;q=0.5"


@dataclass(frozen=True, slots=True)
class Fetched:
    """A fetched document: final URL (after redirects), status, body as served (a gzip file
    stays gzip; ``Content-Encoding`` removed) and its ``Last-Modified`` time, if any."""

    url: str
    status: int
    body: bytes
    modified: dt.datetime | None = None


class Fetcher(Protocol):
    """What the validator needs from the network: one URL's body, within a byte budget.

    Implementations raise :class:`~sitemapkit.errors.FetchError` when there is no answer
    at all (DNS, connection, timeout); an HTTP error status is an answer.
    """

    def fetch(self, url: str, *, max_bytes: int) -> Fetched: ...


class HttpFetcher(Closeable):
    """The default :class:`Fetcher`: one async client and one connection pool for every
    URL of a validation, driven from synchronous code.

    ``options`` (a :class:`~sitemapkit.io.fetch.FetchOptions`) supplies ``timeout`` (per
    request: connecting, the headers, each read of the body), ``max_redirects`` (followed
    by hand, http(s) only), ``retries``/``backoff``/``max_retry_after`` (429 and 503 are
    retried after ``Retry-After`` or a backoff, a refused or broken connection after the
    backoff; a timeout is not retried: it already cost the whole ``timeout``),
    ``refuse_private``, ``user_agent`` and ``client`` (an ``httpx.AsyncClient`` made with
    :func:`sitemapkit.io.http.new_client`, which follows no redirect itself; it is then
    not closed here). ``timeout`` and ``user_agent`` override the options' fields;
    ``concurrency`` sizes the pool (the online checks use it too). A ``Content-Encoding``
    is removed in bounded steps, so a compressed "bomb" costs at most ``max_bytes`` and a
    step. Close it (or use it as a context manager) to close the client and its loop.

    This is the class of the same name of earlier versions (then synchronous httpx, 30 s
    timeout): the constructor's keywords are the same.
    """

    def __init__(
        self,
        options: FetchOptions | None = None,
        *,
        timeout: float | None = None,
        user_agent: str | None = None,
        concurrency: int | None = None,
    ) -> None:
        from ..io.fetch import DEFAULT_CONCURRENCY, FetchOptions
        from ..io.fetch.guard import Guard
        from ..io.http import new_client
        from ..io.urlcheck import LoopThread

        opts = options or FetchOptions()
        if timeout is not None:
            opts = dataclasses.replace(opts, timeout=timeout)
        if user_agent is not None:
            opts = dataclasses.replace(opts, user_agent=user_agent)
        self.options = opts
        self.timeout = opts.timeout
        self.user_agent = opts.user_agent
        self._own_client = opts.client is None
        self.client: httpx.AsyncClient = opts.client or new_client(
            headers={"User-Agent": opts.user_agent},
            timeout=opts.timeout,
            concurrency=concurrency or DEFAULT_CONCURRENCY,
        )
        self._guard = Guard() if opts.refuse_private else None
        self.loop: LoopThread = LoopThread("sitemapkit-fetch")

    def fetch(self, url: str, *, max_bytes: int) -> Fetched:
        """``url``'s body (at most about ``max_bytes`` after ``Content-Encoding``), after
        redirects; :class:`~sitemapkit.errors.FetchError` when there is no answer."""
        return self.loop.run(self.afetch(url, max_bytes=max_bytes))

    def url_checker(self, options: CheckOptions) -> BlockingUrlChecker:
        """The online checks of the same validation, on this fetcher's client and loop."""
        from ..io.urlcheck import BlockingUrlChecker

        return BlockingUrlChecker(options, client=self.client, loop=self.loop)

    def close(self) -> None:
        """Close the client (unless it was given) and stop the loop."""
        try:
            if self._own_client:
                self.loop.run(self.client.aclose())
        finally:
            self.loop.close()

    async def afetch(self, url: str, *, max_bytes: int) -> Fetched:
        """:meth:`fetch` on the fetcher's loop."""
        opts = self.options
        current = url
        for _ in range(opts.max_redirects + 1):
            got = await self._retrying(current, max_bytes)
            if isinstance(got, Fetched):
                return got
            current = got
        raise FetchError(
            f"Fetching {url!r} was redirected more than {opts.max_redirects} times",
            where=url,
            hint="crawlers stop after 5 redirects; point the sitemap's URL at its final place",
        )

    async def _retrying(self, url: str, max_bytes: int) -> Fetched | str:
        """One URL's answer (or where it redirects), with the retries of the options."""
        import asyncio

        opts = self.options
        attempt = 0
        while True:
            wait: float | None = None
            try:
                got = await self._once(url, max_bytes)
            except _Broken as exc:
                if attempt >= opts.retries:
                    raise exc.error from exc
            else:
                if isinstance(got, str):
                    return got
                answer, retry_after = got
                if not retryable(answer.status) or attempt >= opts.retries:
                    return answer
                from ..io.http import retry_after_seconds

                wait = retry_after_seconds(retry_after, opts.max_retry_after)
            if wait is None:
                wait = min(opts.backoff * 2**attempt, opts.max_retry_after)
            attempt += 1
            await asyncio.sleep(wait)

    async def _once(self, url: str, max_bytes: int) -> tuple[Fetched, str | None] | str:
        import httpx

        from ..io.fetch import ContentDecoder
        from ..io.fetch.guard import Unresolved
        from ..io.http import describe

        if not url.lower().startswith(("http://", "https://")):
            raise FetchError(
                f"Cannot fetch {url!r}: only http and https URLs are fetched", where=url
            )
        if self._guard is not None:
            try:
                await self._guard.check(url)
            except Unresolved as exc:
                raise _Broken(exc.error) from exc
        timeout = self.options.timeout
        try:
            request = self.client.build_request(
                "GET", url, headers={"Accept": _ACCEPT, "Accept-Encoding": ACCEPT_ENCODING}
            )
            response = await self.client.send(request, stream=True)
            try:
                status = response.status_code
                location: str | None = response.headers.get("location")
                if status in _REDIRECTS and location:
                    return urljoin(url, location)
                decoder = ContentDecoder(response.headers.get("content-encoding", ""), url)
                parts: list[bytes] = []
                size = 0
                raw_chunks = cast("AsyncGenerator[bytes, None]", response.aiter_raw())
                async with contextlib.aclosing(raw_chunks) as chunks:
                    async for raw in chunks:
                        for piece in decoder.decode(raw):
                            parts.append(piece)
                            size += len(piece)
                            if size > max_bytes:
                                break
                        if size > max_bytes:
                            break
                if size <= max_bytes:
                    decoder.flush()
                modified = _last_modified(response.headers.get("last-modified"))
                answer = Fetched(str(response.url), status, b"".join(parts), modified)
                return answer, response.headers.get("retry-after")
            finally:
                await response.aclose()
        except httpx.TimeoutException as exc:
            raise FetchError(
                f"Cannot fetch {url!r}: no answer within {timeout:g} s ({describe(exc)})",
                where=url,
                hint="raise --timeout (the timeout option) if the server is slow but working",
            ) from exc
        except ParseError as exc:  # a corrupt Content-Encoding
            raise FetchError(f"Cannot fetch {url!r}: {exc.message}", where=url) from exc
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            raise FetchError(f"Cannot fetch {url!r}: {describe(exc)}", where=url) from exc
        except httpx.TransportError as exc:
            raise _Broken(FetchError(f"Cannot fetch {url!r}: {describe(exc)}", where=url)) from exc


class _Broken(Exception):
    """No answer, worth another try (a refused or broken connection, an unknown host)."""

    def __init__(self, error: FetchError) -> None:
        super().__init__(error.message)
        self.error = error


def _last_modified(header: str | None) -> dt.datetime | None:
    if not header:
        return None
    import email.utils  # here: a run that fetches nothing does not import it

    try:
        return email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
