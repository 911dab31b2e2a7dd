"""io.crawler: :func:`crawl`, the public entry point: a site's pages, judged one by one."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Literal

from ...core.crawler import DEFAULT_MAX_PAGES, CrawlFlow, CrawlSummary
from ...core.outcome import PageOutcome
from ..fetch.options import USER_AGENT
from .options import CrawlOptions, CrawlProgress
from .runner import CrawlRunner
from .store import FRONTIER_LIMIT, SeenSet, SpillFrontier

if TYPE_CHECKING:
    from collections.abc import Callable

    import httpx

__all__ = ["Crawl", "crawl"]


class Crawl:
    """One crawl of a site: iterate it (``for`` or ``async for``, once) for a
    :class:`~sitemapkit.core.outcome.PageOutcome` per page judged, listed or left out;
    :attr:`summary` counts them by reason (complete when the iteration ends).

    Built by :func:`crawl`; nothing is requested before the iteration starts.
    """

    def __init__(self, flow: CrawlFlow, options: CrawlOptions, frontier: SpillFrontier) -> None:
        self._flow = flow
        self._options = options
        self._frontier = frontier
        self._started = False

    @property
    def summary(self) -> CrawlSummary:
        """Requests answered, pages listed, pages left out by reason with an example."""
        return self._flow.summary

    def _start(self) -> None:
        if self._started:
            raise RuntimeError("a Crawl is iterated once; call crawl() again for a new one")
        self._started = True

    async def _batches(self) -> AsyncGenerator[list[PageOutcome], None]:
        runner = CrawlRunner(self._flow, self._options)
        try:
            async for batch in runner.outcomes():
                yield batch
        finally:
            try:
                await runner.aclose()
            finally:
                self._frontier.close()

    async def __aiter__(self) -> AsyncIterator[PageOutcome]:
        self._start()
        batches = self._batches()
        try:
            async for batch in batches:
                for outcome in batch:
                    yield outcome
        finally:
            await batches.aclose()

    def __iter__(self) -> Iterator[PageOutcome]:
        """The outcomes, on an event loop of its own (from code that runs none)."""
        self._start()
        loop = asyncio.new_event_loop()
        batches = self._batches()
        try:
            while True:
                try:
                    batch = loop.run_until_complete(anext(batches))
                except StopAsyncIteration:
                    return
                yield from batch
        finally:
            with contextlib.suppress(RuntimeError):  # already closed by its end
                loop.run_until_complete(batches.aclose())
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()


def crawl(
    url: str,
    *,
    extra: Iterable[str] = (),
    scope: Literal["host", "prefix"] = "host",
    max_pages: int = DEFAULT_MAX_PAGES,
    max_depth: int | None = None,
    include_types: Iterable[str] = (),
    concurrency: int = 8,
    per_host: int = 4,
    timeout: float = 30.0,
    max_page_time: float = 60.0,
    retries: int = 3,
    backoff: float = 0.5,
    max_retry_after: float = 60.0,
    refuse_private: bool = False,
    workers: int | None = None,
    frontier_limit: int | None = None,
    user_agent: str | None = None,
    client: httpx.AsyncClient | None = None,
    progress: Callable[[CrawlProgress], None] | None = None,
) -> Crawl:
    """Crawl the site at ``url``: every page its links reach within ``scope``.

    ``scope="host"`` keeps to the start URL's scheme, host and port; ``"prefix"`` also to
    the folder of its path. robots.txt is obeyed for the agent ``sitemapkit`` and ``*``
    (its ``Crawl-delay`` too); at most ``max_pages`` pages found by links are requested,
    none more than ``max_depth`` links from the start. ``include_types`` lists media types
    other than HTML to list (``"application/pdf"``). ``extra`` are URLs to request as well
    (once, after the pages links reach, their own links not followed: their ``depth`` is
    ``None``), such as the URLs a site's sitemaps list; the page budget does not count them.

    At most ``concurrency`` requests at once, ``per_host`` to one host; ``timeout`` bounds
    each network wait, ``max_page_time`` a whole page; 429 and 503 are retried ``retries``
    times after ``Retry-After`` (at most ``max_retry_after`` seconds) or a ``backoff`` that
    doubles. Pages are parsed in ``workers`` child processes (``None``: one given two
    cores; ``0``: none). ``frontier_limit`` queued URLs are held in memory, the rest in a
    temporary file. ``progress`` is called as the crawl goes. Raises ``ValueError`` for a
    bad option; a page that cannot be fetched is an outcome (``fetch failed``), not an
    error. Iterate the result with ``for`` from code that runs no event loop, else with
    ``async for``.

    >>> import sitemapkit as sk
    >>> c = sk.crawl("https://example.com/", max_pages=500)
    >>> c.summary.fetched  # nothing is requested before the iteration starts
    0
    >>> listed = [o.loc for o in c if o.listed]  # doctest: +SKIP
    >>> c.summary.note("https://example.com/")  # doctest: +SKIP
    'https://example.com/: 512 requests, 480 pages listed; left out: 12 noindex (e.g. …'
    """
    options = CrawlOptions(
        concurrency=concurrency,
        per_host=per_host,
        timeout=timeout,
        max_page_time=max_page_time,
        retries=retries,
        backoff=backoff,
        max_retry_after=max_retry_after,
        refuse_private=refuse_private,
        workers=workers,
        frontier_limit=frontier_limit or FRONTIER_LIMIT,
        user_agent=user_agent or USER_AGENT,
        client=client,
        progress=progress,
    )
    frontier = SpillFrontier(options.frontier_limit)
    flow = CrawlFlow(
        url,
        extra=extra,
        scope=scope,
        max_pages=max_pages,
        max_depth=max_depth,
        include_types=include_types,
        seen=SeenSet(),
        frontier=frontier,
    )
    return Crawl(flow, options, frontier)
