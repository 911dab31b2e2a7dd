"""io: what the HTTP clients of sitemapkit share (the reader, the online checks).

Both build their ``httpx.AsyncClient`` the same way (redirects followed by hand, proxies
from the environment, a pool as large as the concurrency), translate httpx's exceptions
into text the same way, check their request and retry bounds the same way (IndexNow's
submitter too), and wait by the one reading of ``Retry-After``
(:func:`sitemapkit.core.retry.retry_after`), against this process's clock.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import sys
from typing import TYPE_CHECKING, Final

from ..core.retry import retry_after

if TYPE_CHECKING:
    import httpx

__all__ = [
    "ACCEPT_ENCODING",
    "check_requests",
    "check_retries",
    "describe",
    "new_client",
    "retry_after_seconds",
    "version",
]


#: The content codings every client here asks for: those ``io.fetch.decode`` removes.
ACCEPT_ENCODING: Final = "gzip, deflate"


def version() -> str:
    """The installed version of sitemapkit, for ``User-Agent`` headers."""
    import importlib.metadata  # here: only User-Agent headers need it

    try:
        return importlib.metadata.version("sitemapkit")
    except importlib.metadata.PackageNotFoundError:  # running from a source tree
        return "0"


def describe(exc: Exception) -> str:
    """``Class: text`` of an exception (``Class`` alone when it has no text)."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def check_requests(concurrency: int, per_host: int, timeout: float) -> None:
    """``ValueError`` unless every client's request bounds are usable (the one check)."""
    if concurrency < 1 or per_host < 1:
        raise ValueError("concurrency and per_host must be at least 1")
    if not timeout > 0:  # also refuses NaN
        raise ValueError("timeout must be positive")


def check_retries(retries: int, backoff: float, max_retry_after: float) -> None:
    """``ValueError`` unless every client's retry budget is usable (the one check)."""
    if retries < 0 or backoff < 0 or max_retry_after < 0:
        raise ValueError("retries, backoff and max_retry_after must not be negative")


def retry_after_seconds(value: str | None, cap: float) -> float | None:
    """Seconds from a ``Retry-After`` header (delay-seconds or HTTP-date), capped."""
    wait = retry_after(value, now=dt.datetime.now(dt.UTC))
    return None if wait is None else min(wait, cap)


def _remember_missing_sniffio() -> None:
    """httpcore runs ``import sniffio`` at every request and falls back to asyncio when it
    fails; a failed import is not cached, so without sniffio each request searched
    ``sys.path`` again (about a sixth of the time of a crawl of small sitemaps). A ``None``
    in ``sys.modules`` makes the import fail at once, with the same outcome."""
    if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
        sys.modules["sniffio"] = None  # type: ignore[assignment]


def new_client(*, headers: dict[str, str], timeout: float, concurrency: int) -> httpx.AsyncClient:
    """A client that follows no redirect itself (the callers count and report each hop)
    and waits for a pooled connection as long as it takes (the callers bound requests)."""
    import httpx  # here: a run that fetches nothing does not pay for its import

    _remember_missing_sniffio()
    return httpx.AsyncClient(
        headers=headers,
        timeout=httpx.Timeout(timeout, pool=None),
        limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        follow_redirects=False,
        trust_env=True,
    )
