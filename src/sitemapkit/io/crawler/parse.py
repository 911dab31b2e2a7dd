"""io.crawler: pages parsed in a child process, so that a crawl uses two cores.

The runner does the network I/O on its event loop; parsing a page (libxml2 and the walk
over its elements in :func:`~sitemapkit.core.page.read_page`) is CPU-bound Python, so it
goes to a child process on :mod:`sitemapkit.io.child` while the loop fetches the next
pages. When the child is busier than :data:`BACKLOG` pages, or cannot be started, a page
is parsed in this process: the outcome is the same either way.
"""

from __future__ import annotations

from typing import Final

from ...core.page import Page, read_page
from ..child import AsyncChild, ChildError, serve

__all__ = ["BACKLOG", "PageJob", "Parser", "parse_job", "serve_pages"]

#: Pages waiting in the child beyond which the next page is parsed here.
BACKLOG: Final = 6

#: What a page is parsed from: its bytes, URL, ``X-Robots-Tag`` values and charset.
PageJob = tuple[bytes, str, tuple[str, ...], str | None]


def parse_job(job: PageJob) -> Page:
    data, url, x_robots_tag, charset = job
    return read_page(data, url, x_robots_tag=x_robots_tag, charset=charset)


def serve_pages() -> None:  # pragma: no cover - runs in the child process
    """The child's loop."""
    serve(parse_job)


class Parser:
    """Parses pages in ``workers`` child processes (0: in this process), on a loop."""

    def __init__(self, workers: int) -> None:
        self._workers = workers
        self._children: list[AsyncChild] = []
        self._started = False

    async def _start(self) -> None:
        self._started = True
        for _ in range(self._workers):
            child = AsyncChild(f"{__name__}:serve_pages", name="a page parser process")
            try:
                await child.start()
            except OSError:
                break  # parse here
            self._children.append(child)

    async def parse(self, job: PageJob) -> Page:
        if not self._started:
            await self._start()
        live = [c for c in self._children if not c.dead]
        if live:
            child = min(live, key=lambda c: len(c.pending))
            if len(child.pending) < BACKLOG:
                try:
                    page = await child.request(job)
                except ChildError:
                    pass  # it died: this page, and the next ones, are parsed here
                else:
                    assert isinstance(page, Page)
                    return page
        return parse_job(job)

    async def close(self) -> None:
        for child in self._children:
            await child.close()
        self._children = []
