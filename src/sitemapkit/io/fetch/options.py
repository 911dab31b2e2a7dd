"""io.fetch: the options of a crawl, written once as :class:`FetchOptions`.

Every entry point (``discover``, ``aiter_records``, ``read_url_records``,
``discover_sync``) takes the same keyword arguments, typed by :class:`FetchKeywords`, and
turns them into one frozen :class:`FetchOptions`, checked when it is built. The runner
reads its settings from it and :meth:`FetchOptions.flow` builds the discovery flow.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol, TypedDict

from ...core.discovery import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_DOCUMENT_TIME,
    DEFAULT_MAX_SITEMAPS,
    DEFAULT_MAX_TIME,
    DEFAULT_MAX_TOTAL_BYTES,
    MAX_REDIRECTS,
    DiscoveryFlow,
)
from ...core.finding import Finding
from ...core.parse import DEFAULT_MAX_BYTES
from ..http import check_requests, check_retries, version

if TYPE_CHECKING:
    import httpx

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_MAX_DOCUMENT_TIME",
    "DEFAULT_MAX_RETRY_AFTER",
    "DEFAULT_MAX_TIME",
    "DEFAULT_PER_HOST",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "USER_AGENT",
    "FetchKeywords",
    "FetchOptions",
    "Progress",
    "Report",
]


USER_AGENT: Final = f"sitemapkit/{version()} (+https://github.com/sitemapkit)"
DEFAULT_CONCURRENCY: Final = 8
DEFAULT_PER_HOST: Final = 2
DEFAULT_TIMEOUT: Final = 30.0
DEFAULT_RETRIES: Final = 3
DEFAULT_BACKOFF: Final = 0.5
DEFAULT_MAX_RETRY_AFTER: Final = 60.0


class Report(Protocol):
    """Where findings go as sitemaps finish (``sitemapkit.ReadReport`` is one)."""

    findings: list[Finding]
    sitemaps: list[str]


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a crawl stands, for a progress line: sitemaps answered, requests queued or in
    flight, and the request in flight the longest (``waiting``, for ``waited`` seconds)."""

    done: int
    pending: int
    waiting: str | None
    waited: float


def _default_workers() -> int:
    cpus = os.cpu_count() or 1
    return 0 if cpus < 2 or not sys.executable else min(cpus, 4)


@dataclass(frozen=True, slots=True)
class FetchOptions:
    """How a crawl runs; the meaning of each field is in :func:`~sitemapkit.io.fetch.discover`.

    Raises ``ValueError`` for values out of range when built.
    """

    concurrency: int = DEFAULT_CONCURRENCY
    per_host: int = DEFAULT_PER_HOST
    max_depth: int = DEFAULT_MAX_DEPTH
    max_sitemaps: int = DEFAULT_MAX_SITEMAPS
    max_bytes: int = DEFAULT_MAX_TOTAL_BYTES
    max_document_bytes: int = DEFAULT_MAX_BYTES
    max_redirects: int = MAX_REDIRECTS
    timeout: float = DEFAULT_TIMEOUT
    max_document_time: float = DEFAULT_MAX_DOCUMENT_TIME
    max_time: float = DEFAULT_MAX_TIME
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
    progress: Callable[[Progress], None] | None = None

    def __post_init__(self) -> None:
        check_requests(self.concurrency, self.per_host, self.timeout)
        for name in ("max_document_time", "max_time"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):  # also refuses NaN
                raise ValueError(f"{name} must be a positive number of seconds")
        check_retries(self.retries, self.backoff, self.max_retry_after)
        if self.workers is not None and self.workers < 0:
            raise ValueError("workers must not be negative")

    @property
    def parser_workers(self) -> int:
        """``workers``, with ``None`` resolved: one per core, up to 4, none on one core."""
        return _default_workers() if self.workers is None else self.workers

    @property
    def cache_path(self) -> Path | None:
        return Path(self.cache_dir) if self.cache_dir is not None else None

    def flow(self, target: str) -> DiscoveryFlow:
        """The discovery flow of ``target`` under these budgets."""
        return DiscoveryFlow(
            target,
            follow=self.follow,
            max_depth=self.max_depth,
            max_sitemaps=self.max_sitemaps,
            max_bytes=self.max_bytes,
            max_document_bytes=self.max_document_bytes,
            max_redirects=self.max_redirects,
            user_agent=self.user_agent.split("/", 1)[0],
        )


class FetchKeywords(TypedDict, total=False):
    """The keyword arguments of the entry points: the fields of :class:`FetchOptions`
    (a test keeps the two the same)."""

    concurrency: int
    per_host: int
    max_depth: int
    max_sitemaps: int
    max_bytes: int
    max_document_bytes: int
    max_redirects: int
    timeout: float
    max_document_time: float
    max_time: float
    retries: int
    backoff: float
    max_retry_after: float
    refuse_private: bool
    cache_dir: str | os.PathLike[str] | None
    follow: bool
    strict: bool
    workers: int | None
    user_agent: str
    client: httpx.AsyncClient | None
    report: Report | None
    progress: Callable[[Progress], None] | None


#: The field names, for the test that keeps FetchKeywords and FetchOptions together.
FIELDS: Final = tuple(f.name for f in dataclasses.fields(FetchOptions))
