"""io: submit URLs to an IndexNow endpoint with httpx: batches, retries, the key check.

The protocol rules (key, host, batching, what each status means, how long to wait) are in
:mod:`sitemapkit.core.indexnow`; this module only sends. Each batch is one JSON POST
(``Content-Type: application/json; charset=utf-8``). 429 and 5xx answers and connection
errors are retried with exponential backoff, or after the ``Retry-After`` the server asks
for (up to ``max_retry_after`` seconds; a longer wait gives up). The first permanent
failure (400, 403, 422) stops the submission: the following batches would fail alike.

Urls are pulled from the caller's iterable in a worker thread, one batch at a time, so a
slow or blocking source (a diff of millions of URLs, a crawl with its own event loop) is
streamed without holding everything in memory.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import httpx

from ..core.finding import Finding
from ..core.indexnow import (
    DEFAULT_ENDPOINT,
    MAX_URLS_PER_REQUEST,
    check_host,
    check_key,
    check_key_location,
    interpret,
    iter_batches,
    key_file_url,
    request_body,
    retry_delay,
)
from ..errors import FetchError, InputError
from .http import check_retries, version

__all__ = [
    "BatchResult",
    "SubmitResult",
    "fetch_key",
    "submit_indexnow",
    "submit_indexnow_async",
]

_HEADERS: Final = {"Content-Type": "application/json; charset=utf-8"}
_MAX_KEY_FILE: Final = 4096


def _user_agent() -> str:
    return f"sitemapkit/{version()} (IndexNow client)"


@dataclass(frozen=True, slots=True)
class BatchResult:
    """One POST: its 1-based number, URL count, final status (``None``: no answer),
    whether it was received (``ok``), the message, and how many attempts it took."""

    number: int
    urls: int
    status: int | None
    ok: bool
    message: str
    attempts: int


@dataclass(slots=True)
class SubmitResult:
    """What a submission did: one :class:`BatchResult` per batch sent, the findings about
    URLs left out (IDX004 errors, IDX005 repeats), and whether it ``stopped`` early.

    ``submitted`` counts the URLs of batches the engine received.
    """

    endpoint: str
    batches: list[BatchResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    stopped: Literal["", "rejected", "unreachable"] = ""

    @property
    def submitted(self) -> int:
        return sum(b.urls for b in self.batches if b.ok)

    @property
    def ok(self) -> bool:
        """Every batch received and no URL left out for an error."""
        return not self.stopped and not any(f.severity == "error" for f in self.findings)


async def fetch_key(
    client: httpx.AsyncClient, url: str, key: str, *, timeout: float = 30.0
) -> None:
    """Check that the key file at ``url`` holds ``key``; raise if it does not.

    The engines fetch this file to verify ownership (indexnow.org: "a UTF-8 encoded key
    file … must return 200"); its content, without surrounding white space or a BOM, must
    be the key. :class:`InputError` when it is missing or different, :class:`FetchError`
    when it cannot be fetched at all.
    """
    try:
        async with client.stream("GET", url, follow_redirects=True, timeout=timeout) as resp:
            body = b""
            async for chunk in resp.aiter_bytes():
                body += chunk
                if len(body) > _MAX_KEY_FILE:
                    break
    except httpx.HTTPError as exc:
        raise FetchError(f"cannot fetch the key file: {exc}", where=url) from exc
    hint = f"publish a UTF-8 text file holding only the key at {url}"
    if resp.status_code != 200:
        raise InputError(
            f"the key file answered {resp.status_code}, not 200; the engines would answer "
            "403 Forbidden",
            where=url,
            hint=hint,
        )
    text = body[:_MAX_KEY_FILE].decode("utf-8", "replace").removeprefix("\ufeff").strip()
    if text != key:
        shown = text if len(text) <= 40 else text[:40] + "…"
        raise InputError(
            f"the key file holds {shown!r}, not the key {key!r}; the engines would answer "
            "403 Forbidden",
            where=url,
            hint=hint,
        )


async def submit_indexnow_async(
    urls: Iterable[str],
    *,
    host: str,
    key: str,
    key_location: str | None = None,
    endpoint: str = DEFAULT_ENDPOINT,
    check_key_file: bool = False,
    batch_size: int = MAX_URLS_PER_REQUEST,
    retries: int = 4,
    backoff: float = 1.0,
    max_retry_after: float = 120.0,
    timeout: float = 30.0,
    client: httpx.AsyncClient | None = None,
    on_batch: Callable[[BatchResult], None] | None = None,
) -> SubmitResult:
    """Submit ``urls`` for ``host`` to an IndexNow ``endpoint``; see the module docstring.

    ``host``, ``key`` and ``key_location`` are checked first (IDX001, IDX002:
    :class:`InputError`). ``check_key_file`` fetches the key file before anything is sent
    and refuses to submit when it does not hold the key. ``on_batch`` is called after
    each batch. ``client`` is your own ``httpx.AsyncClient`` (not closed here).
    """
    host = check_host(host)
    key = check_key(key)
    if key_location is not None:
        key_location = check_key_location(key_location, host)
    check_retries(retries, backoff, max_retry_after)
    result = SubmitResult(endpoint)
    own = client is None
    http = client or httpx.AsyncClient(headers={"User-Agent": _user_agent()}, timeout=timeout)
    try:
        if check_key_file:
            await fetch_key(http, key_file_url(host, key, key_location), key, timeout=timeout)
        batches = iter_batches(
            urls, host=host, key_location=key_location, size=batch_size, findings=result.findings
        )
        post = _Poster(
            http,
            endpoint,
            host=host,
            key_file=key_file_url(host, key, key_location),
            retries=retries,
            backoff=backoff,
            max_retry_after=max_retry_after,
            timeout=timeout,
        )
        number = 0
        while (batch := await asyncio.to_thread(_next, batches)) is not None:
            number += 1
            br = await post(number, batch, request_body(host, key, batch, key_location))
            result.batches.append(br)
            if on_batch is not None:
                on_batch(br)
            if not br.ok:
                temporary = br.status is None or br.status == 429 or br.status >= 500
                result.stopped = "unreachable" if temporary else "rejected"
                break
    finally:
        if own:
            await http.aclose()
    return result


def _next(batches: Iterator[list[str]]) -> list[str] | None:
    return next(batches, None)


@dataclass(frozen=True, slots=True)
class _Poster:
    """Sends one batch, retrying what IDX006 calls retryable."""

    http: httpx.AsyncClient
    endpoint: str
    host: str
    key_file: str
    retries: int
    backoff: float
    max_retry_after: float
    timeout: float

    async def __call__(self, number: int, batch: list[str], body: bytes) -> BatchResult:
        attempt = 0
        while True:
            attempt += 1
            retry_after: str | None = None
            try:
                resp = await self.http.post(
                    self.endpoint, content=body, headers=_HEADERS, timeout=self.timeout
                )
            except httpx.HTTPError as exc:
                status: int | None = None
                message = f"no answer from {self.endpoint}: {exc or type(exc).__name__}"
                verdict = "retry"
            else:
                await resp.aread()
                outcome = interpret(resp.status_code, host=self.host, key_file=self.key_file)
                status, message, verdict = resp.status_code, outcome.message, outcome.verdict
                retry_after = resp.headers.get("Retry-After")
            if verdict != "retry":
                return BatchResult(number, len(batch), status, verdict == "ok", message, attempt)
            if attempt > self.retries:
                message += f"; gave up after {attempt} attempts"
                return BatchResult(number, len(batch), status, False, message, attempt)
            now = dt.datetime.now(dt.UTC)
            wait = retry_delay(attempt, retry_after, backoff=self.backoff, now=now)
            if wait > self.max_retry_after:
                message += (
                    f"; the server asks to wait {wait:.0f} s, more than "
                    f"{self.max_retry_after:.0f} s: try again later"
                )
                return BatchResult(number, len(batch), status, False, message, attempt)
            await asyncio.sleep(wait)


def submit_indexnow(urls: Iterable[str], **options: Any) -> SubmitResult:
    """:func:`submit_indexnow_async` for synchronous code (same keyword arguments).

    >>> result = submit_indexnow(["https://www.example.com/new"], host="www.example.com",
    ...                          key="26ecd1ada8034912a62634cc4e3ddd7e")  # doctest: +SKIP
    >>> result.ok, [b.message for b in result.batches]  # doctest: +SKIP
    (True, ['200 OK: URLs received'])
    """
    return asyncio.run(submit_indexnow_async(urls, **options))
