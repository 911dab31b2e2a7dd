"""lint.checks: lastmod dates that cannot be right. Pure.

Decides SM305 (a lastmod in the future, past ``Context.future_tolerance``) and SM307 (before
1994: a zero or epoch default), for <url>s and an index's children; dates are compared as
strings first and parsed only when close. :func:`instant_bounds` serves the other date
heuristics (SM306, VID711, NEWS806).
"""

from __future__ import annotations

import calendar
import datetime as dt
from operator import attrgetter
from typing import Final, cast

from ...core.model import SitemapRef, Url
from ...core.w3cdate import parse_usable
from .context import CHECKED
from .state import Batch, EntryState, R

__all__ = ["instant_bounds", "ref_dates", "url_dates"]

_EPOCH_CUTOFF: Final = "1994-01-01"
_EARLIEST_ZONE: Final = dt.timedelta(hours=14)  # UTC+14:00, the zone whose day starts first
_LATEST_ZONE: Final = dt.timedelta(hours=12)  # UTC-12:00, the zone whose day ends last
_FIRST: Final = dt.datetime.min.replace(tzinfo=dt.UTC)
_LAST: Final = dt.datetime.max.replace(tzinfo=dt.UTC)
_LASTMOD: Final = attrgetter("lastmod")


def instant_bounds(value: str) -> tuple[dt.datetime, dt.datetime] | None:
    """Earliest and latest instant a date a reader keeps can mean: a W3C Datetime, or a
    form off it such as a time without a zone (``w3cdate.parse_usable``); a bare date, or
    a time without a zone, spans all zones. At the ends of the calendar (0001-01-01,
    9999-12-31) a bound stops at the first or last instant Python has.

    >>> instant_bounds("9999-12-31")[1]
    datetime.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=datetime.timezone.utc)
    """
    try:
        p = parse_usable(value)
    except ValueError:
        return None
    start = p.to_datetime()
    if p.offset_minutes is not None:
        return start, start
    # no zone: from the period's start at +14:00 to its end at -12:00
    if p.granularity == 1:
        end = _shifted(start, dt.timedelta(days=366 if calendar.isleap(p.year) else 365))
    elif p.granularity == 2:
        end = _shifted(start, dt.timedelta(days=calendar.monthrange(p.year, p.month)[1]))
    elif p.granularity == 3:
        end = _shifted(start, dt.timedelta(days=1))
    else:
        end = start  # a local time, in a zone not given
    return _shifted(start, -_EARLIEST_ZONE), _shifted(end, _LATEST_ZONE)


def _shifted(instant: dt.datetime, delta: dt.timedelta) -> dt.datetime:
    """``instant + delta``, or the first or last instant there is when that is past it."""
    try:
        return instant + delta
    except OverflowError:
        return _LAST if delta > dt.timedelta(0) else _FIRST


def _date_checks(st: EntryState, batch: Batch[R], lastmods: list[str | None]) -> None:
    """SM305 future and SM307 epoch-like lastmods (strings compared first, parsed if close)."""
    future_day = st.future_day
    now = st.now
    for i, lastmod in enumerate(lastmods):
        if lastmod is None:
            continue
        day = lastmod[:10]
        if len(day) < 10:  # 1994 or 1994-05, kept as written: from its first day
            day += "-01-01"[len(day) - 4 :]
        if day < _EPOCH_CUTOFF:
            st.emit(
                "SM307",
                f"The lastmod {lastmod!r} is before 1994, probably a zero or epoch default; "
                "give the page's real modification date or omit lastmod",
                batch,
                i,
                element="lastmod",
            )
        elif now is not None and day >= future_day:
            bounds = instant_bounds(lastmod)
            if bounds is not None and bounds[0] > now + st.ctx.future_tolerance:
                st.emit(
                    "SM305",
                    f"The lastmod {lastmod!r} lies in the future; give the time the page last "
                    "changed (Bing reportedly rejects future dates)",
                    batch,
                    i,
                    element="lastmod",
                )


@CHECKED.decides("SM305", "SM307")
def url_dates(st: EntryState, batch: Batch[Url]) -> None:
    """SM305, SM307 for a batch of <url>s, and the lastmod tally (SM306, SM508)."""
    lastmods = cast("list[str | None]", list(map(_LASTMOD, batch.records)))
    present = cast("list[str]", list(filter(None, lastmods)))
    if not present:
        return
    st.tally.lastmods.update(present)
    st.tally.with_lastmod += len(present)
    top = max(present)[:10]
    if top > st.tally.max_day:
        st.tally.max_day = top
    if min(present) >= _EPOCH_CUTOFF and (st.now is None or top < st.future_day):
        return
    _date_checks(st, batch, lastmods)


@CHECKED.decides("SM305", "SM307")
def ref_dates(st: EntryState, batch: Batch[SitemapRef]) -> None:
    """SM305, SM307 for an index's children, which it keeps for the set (SM502-SM509)."""
    refs = batch.records
    lastmods = cast("list[str | None]", [r.lastmod for r in refs])
    for i, r in enumerate(refs):
        st.children.append((r.loc, lastmods[i], batch.occurrences[i]))
        if r.lastmod is None:
            st.tally.without_lastmod += 1
    _date_checks(st, batch, lastmods)
