"""io.crawler: the runner that drives one :class:`~sitemapkit.core.crawler.CrawlFlow`.

The flow decides what to fetch and what each answer means; the runner fetches with one
``httpx.AsyncClient`` (:func:`sitemapkit.io.http.new_client`):

* **Politeness**: at most ``concurrency`` requests at once and ``per_host`` per host; with
  a robots.txt ``Crawl-delay``, one request at a time to the site, that many seconds
  apart. 429 and 503 are retried (``retries`` times) after the server's ``Retry-After``
  (capped at ``max_retry_after``) or an exponential backoff; so are connection errors.
* **No redirect followed**: a 3xx goes back to the flow, which judges it and queues its
  target (robots.txt's redirects are followed, as RFC 9309 asks).
* **Bounded bodies**: only the bodies the flow reads (HTML), at most
  :data:`~sitemapkit.core.page.MAX_PAGE_BYTES`, decoded in bounded steps
  (:mod:`sitemapkit.io.fetch.decode`); parsed in a child process (:mod:`.parse`).
* **Deadlines**: ``timeout`` bounds each wait for the network, ``max_page_time`` a whole
  page (retries and a body trickled a byte at a time included).

Every failure of a page ends in its outcome (``fetch failed``), not as an exception.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

import httpx

from ...core.crawler import CrawlFlow, PageAnswer, PageRequest
from ...core.outcome import PageOutcome
from ...core.page import MAX_PAGE_BYTES
from ...core.probe import retryable
from ...core.robotsfile import MAX_ROBOTS_BYTES
from ...errors import FetchError, SitemapError
from ..fetch.decode import ContentDecoder
from ..fetch.guard import Guard, Unresolved
from ..http import ACCEPT_ENCODING, describe, new_client, retry_after_seconds
from .options import CrawlOptions, CrawlProgress
from .parse import Parser

__all__ = ["CrawlRunner"]

_ACCEPT: Final = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"


class _Failed(Exception):
    """A page's request failed in a way worth another try."""

    def __init__(self, message: str, status: int | None = None, wait: float | None = None):
        super().__init__(message)
        self.status = status
        self.wait = wait


@dataclass(slots=True)
class _Head:
    status: int
    headers: httpx.Headers
    body: bytes


class CrawlRunner:
    """Drives ``flow`` with ``opts``; :meth:`outcomes` yields what it judges, in batches."""

    def __init__(self, flow: CrawlFlow, opts: CrawlOptions) -> None:
        self.flow = flow
        self.opts = opts
        self._own_client = opts.client is None
        self.client = opts.client or new_client(
            headers={
                "User-Agent": opts.user_agent,
                "Accept": _ACCEPT,
                "Accept-Encoding": ACCEPT_ENCODING,
            },
            timeout=opts.timeout,
            concurrency=opts.concurrency,
        )
        self.parser = Parser(opts.parser_workers)
        self._guard = Guard() if opts.refuse_private else None
        self._slots = asyncio.Semaphore(opts.concurrency)
        self._hosts: dict[tuple[str, bool], asyncio.Semaphore] = {}
        self._next_at: dict[str, float] = {}  # with a Crawl-delay: a host's next request

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    async def aclose(self) -> None:
        try:
            await self.parser.close()
        finally:
            if self._own_client:
                await self.client.aclose()

    async def outcomes(self) -> AsyncIterator[list[PageOutcome]]:
        """The outcomes as they are judged, in batches; the crawl ends with the iteration.

        Answers reach the flow in the order of their requests, however the fetches
        overlap: what the flow queues, and so the output, is the same from run to run.
        """
        flow = self.flow
        tasks: dict[asyncio.Task[PageAnswer], int] = {}
        answers: dict[int, PageAnswer] = {}  # answered ahead of their turn
        sent = turn = 0
        start = self._now()
        try:
            while True:
                room = self.opts.concurrency * 2 - len(tasks) - len(answers)
                for req in flow.next_requests(max(room, 0)):
                    tasks[asyncio.create_task(self._answer(req))] = sent
                    sent += 1
                batch = flow.take()
                if batch:
                    yield batch
                if self.opts.progress is not None:
                    s = flow.summary
                    queued = len(flow.frontier) + flow.in_flight
                    self.opts.progress(
                        CrawlProgress(s.fetched, queued, s.listed, self._now() - start)
                    )
                if not tasks:  # nothing in flight and nothing to ask: the flow is done
                    return
                done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    answers[tasks.pop(task)] = task.result()  # an exception: a bug, let out
                while turn in answers:
                    flow.on_answer(answers.pop(turn))
                    turn += 1
        finally:
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.gather(*tasks, return_exceptions=True)

    async def _answer(self, req: PageRequest) -> PageAnswer:
        """How ``req`` ended: its answer, or a failed fetch's."""
        try:
            return await self._answer_within(req)
        except FetchError as exc:
            return PageAnswer(req, None, error=exc.message)

    async def _answer_within(self, req: PageRequest) -> PageAnswer:
        deadline = self._now() + self.opts.max_page_time
        attempt = 0
        while True:
            try:
                async with asyncio.timeout_at(deadline):
                    return await self._attempt(req)
            except TimeoutError:
                raise FetchError(
                    f"The deadline per page ({self.opts.max_page_time:g} s) passed before its "
                    "end (a server that trickles its answer is cut there); raise "
                    "max_page_time to wait longer",
                    where=req.url,
                ) from None
            except _Failed as failed:
                wait = failed.wait
                if wait is None:
                    wait = self.opts.backoff * 2**attempt
                if attempt >= self.opts.retries or self._now() + wait >= deadline:
                    if failed.status is not None:  # the last answer stands
                        return PageAnswer(req, failed.status, error=str(failed))
                    raise FetchError(str(failed), where=req.url) from None
                attempt += 1
                await asyncio.sleep(wait)

    def _host_slot(self, url: str) -> asyncio.Semaphore:
        # a Crawl-delay (known once robots.txt is read) asks for one request at a time
        one = bool(self.flow.crawl_delay)
        key = (urlsplit(url).netloc.lower(), one)
        slot = self._hosts.get(key)
        if slot is None:
            slot = self._hosts[key] = asyncio.Semaphore(1 if one else self.opts.per_host)
        return slot

    async def _polite(self, url: str) -> None:
        """Wait for the host's Crawl-delay since its last request (inside its slot)."""
        delay = self.flow.crawl_delay
        if not delay:
            return
        key = urlsplit(url).netloc.lower()
        wait = self._next_at.get(key, 0.0) - self._now()
        if wait > 0:
            await asyncio.sleep(wait)

    def _rested(self, url: str) -> None:
        """The next request to the host waits the Crawl-delay from the end of this one."""
        delay = self.flow.crawl_delay
        if delay:
            key = urlsplit(url).netloc.lower()
            self._next_at[key] = self._now() + min(delay, self.opts.max_retry_after)

    async def _attempt(self, req: PageRequest) -> PageAnswer:
        url = req.url
        if self._guard is not None:
            try:
                await self._guard.check(url)
            except Unresolved as exc:
                raise _Failed(exc.error.message) from exc
        async with self._slots, self._host_slot(url):
            await self._polite(url)
            try:
                head = await self._get(req)
            finally:
                self._rested(url)
        status, headers = head.status, head.headers
        if retryable(status):
            wait = retry_after_seconds(headers.get("retry-after"), self.opts.max_retry_after)
            raise _Failed(f"HTTP status {status}", status, wait)
        if req.robots:
            return PageAnswer(req, status, body=head.body)
        answer = PageAnswer(
            req,
            status,
            content_type=headers.get("content-type"),
            location=headers.get("location"),
            x_robots_tag=tuple(headers.get_list("x-robots-tag")),
            last_modified=headers.get("last-modified"),
        )
        if status == 200 and self.flow.reads(answer.content_type):
            charset = _charset(answer.content_type)
            page = await self.parser.parse((head.body, url, answer.x_robots_tag, charset))
            answer = PageAnswer(
                req,
                status,
                answer.content_type,
                answer.location,
                answer.x_robots_tag,
                answer.last_modified,
                page,
            )
        return answer

    async def _get(self, req: PageRequest) -> _Head:
        """One GET: the status, the headers and the body if the flow reads it."""
        url = req.url
        try:
            request = self.client.build_request("GET", url)
            # the whole head within `timeout`: a trickle of it resets httpx's own
            async with asyncio.timeout(self.opts.timeout):
                response = await self.client.send(request, stream=True, follow_redirects=req.robots)
        except (httpx.TimeoutException, TimeoutError) as exc:
            raise _Failed(f"No response within {self.opts.timeout:g} s") from exc
        except (httpx.UnsupportedProtocol, httpx.InvalidURL, httpx.TooManyRedirects) as exc:
            raise FetchError(f"Cannot fetch {url!r}: {exc}", where=url) from exc
        except httpx.TransportError as exc:
            raise _Failed(f"Connection failed: {describe(exc)}") from exc
        try:
            status = response.status_code
            body = b""
            wanted = req.robots or (
                status == 200 and self.flow.reads(response.headers.get("content-type"))
            )
            if wanted:
                limit = MAX_ROBOTS_BYTES if req.robots else MAX_PAGE_BYTES
                body = await self._body(response, url, limit)
            return _Head(status, response.headers, body)
        finally:
            await response.aclose()

    async def _body(self, response: httpx.Response, url: str, limit: int) -> bytes:
        """The decoded body, cut at ``limit`` bytes (what lies beyond is not read)."""
        decoder = ContentDecoder(response.headers.get("content-encoding", ""), url)
        parts: list[bytes] = []
        size = 0
        try:
            async for raw in response.aiter_raw():
                for piece in decoder.decode(raw):
                    parts.append(piece)
                    size += len(piece)
                if size >= limit:
                    break
            else:
                decoder.flush()
        except httpx.TimeoutException as exc:
            raise _Failed(f"The response stalled for more than {self.opts.timeout:g} s") from exc
        except httpx.TransportError as exc:
            raise _Failed(f"Connection failed: {describe(exc)}") from exc
        except SitemapError as exc:  # a broken compression
            raise FetchError(exc.message, where=url) from exc
        return b"".join(parts)[:limit]


def _charset(content_type: str | None) -> str | None:
    for param in (content_type or "").split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip(" \"'"):
            return value.strip(" \"'")
    return None
