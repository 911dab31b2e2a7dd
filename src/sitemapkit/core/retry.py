"""core: the ``Retry-After`` header (RFC 9110 §10.2.3), read once for every client. Pure.

"Retry-After = HTTP-date / delay-seconds": a number of seconds, or a date compared with
``now`` (the caller reads the clock; this module never does). The fetch runner, the online
checks and the IndexNow client all wait by this one reading.
"""

from __future__ import annotations

import datetime as dt

__all__ = ["retry_after"]


def retry_after(value: str | None, *, now: dt.datetime) -> float | None:
    """Seconds to wait by a ``Retry-After`` value, or None when absent or unreadable.

    ``now`` must be aware; a date in the past means no wait.

    >>> t = dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.UTC)
    >>> retry_after(" 7 ", now=t), retry_after("Wed, 01 May 2024 12:00:30 GMT", now=t)
    (7.0, 30.0)
    >>> retry_after("soon", now=t), retry_after("-5", now=t), retry_after(None, now=t)
    (None, None, None)
    """
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # "²".isdigit() holds too, and float() refuses it
        return float(value)
    import email.utils  # here: only a date needs it, and most runs never read one

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max((when - now).total_seconds(), 0.0)
