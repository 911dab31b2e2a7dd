"""io.crawler: the options of a crawl, written once as :class:`CrawlOptions`.

The budgets that decide what is crawled (pages, depth, scope, included types) belong to
the flow (:class:`~sitemapkit.core.crawler.CrawlFlow`); these say how the runner
fetches: how many requests at once, how long it waits, how it retries, who it says it is.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ..fetch.options import (
    DEFAULT_BACKOFF,
    DEFAULT_MAX_DOCUMENT_TIME,
    DEFAULT_MAX_RETRY_AFTER,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    USER_AGENT,
)
from ..http import check_requests, check_retries
from .store import FRONTIER_LIMIT

if TYPE_CHECKING:
    import httpx

__all__ = ["DEFAULT_CONCURRENCY", "DEFAULT_PER_HOST", "CrawlOptions", "CrawlProgress"]

DEFAULT_CONCURRENCY: Final = 8
#: Requests at once to one host (the issue's politeness bound).
DEFAULT_PER_HOST: Final = 4


@dataclass(frozen=True, slots=True)
class CrawlProgress:
    """Where a crawl stands: requests answered, pages queued or in flight, pages listed,
    seconds since it started."""

    fetched: int
    queued: int
    listed: int
    elapsed: float


def _default_workers() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return 1 if cpus >= 2 else 0


@dataclass(frozen=True, slots=True)
class CrawlOptions:
    """How a crawl fetches; see :func:`sitemapkit.crawl`. ``ValueError`` for values out
    of range when built."""

    concurrency: int = DEFAULT_CONCURRENCY
    per_host: int = DEFAULT_PER_HOST
    timeout: float = DEFAULT_TIMEOUT
    max_page_time: float = DEFAULT_MAX_DOCUMENT_TIME
    retries: int = DEFAULT_RETRIES
    backoff: float = DEFAULT_BACKOFF
    max_retry_after: float = DEFAULT_MAX_RETRY_AFTER
    refuse_private: bool = False
    workers: int | None = None
    frontier_limit: int = FRONTIER_LIMIT
    user_agent: str = USER_AGENT
    client: httpx.AsyncClient | None = None
    progress: Callable[[CrawlProgress], None] | None = None

    def __post_init__(self) -> None:
        check_requests(self.concurrency, self.per_host, self.timeout)
        if not (self.max_page_time > 0 and math.isfinite(self.max_page_time)):
            raise ValueError("max_page_time must be a positive number of seconds")
        check_retries(self.retries, self.backoff, self.max_retry_after)
        if self.workers is not None and self.workers < 0:
            raise ValueError("workers must not be negative")
        if self.frontier_limit < 1:
            raise ValueError("frontier_limit must be at least 1")

    @property
    def parser_workers(self) -> int:
        """``workers``, with ``None`` resolved: one child on two cores or more, else none."""
        return _default_workers() if self.workers is None else self.workers
