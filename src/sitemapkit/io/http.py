"""io: what the HTTP clients of sitemapkit share (the reader, the online checks).

Both translate httpx's exceptions into text the same way and wait by the one reading of
``Retry-After`` (:func:`sitemapkit.core.retry.retry_after`), against this process's clock.
"""

from __future__ import annotations

import datetime as dt

from ..core.retry import retry_after

__all__ = ["describe", "retry_after_seconds"]


def describe(exc: Exception) -> str:
    """``Class: text`` of an exception (``Class`` alone when it has no text)."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def retry_after_seconds(value: str | None, cap: float) -> float | None:
    """Seconds from a ``Retry-After`` header (delay-seconds or HTTP-date), capped."""
    wait = retry_after(value, now=dt.datetime.now(dt.UTC))
    return None if wait is None else min(wait, cap)
