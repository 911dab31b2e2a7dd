"""lint.checks: lastmod dates that cannot be right. Pure.

Decides SM305 (a lastmod in the future, past ``Context.future_tolerance``) and SM307 (before
1994: a zero or epoch default), for <url>s and an index's children; dates are compared as
strings first and parsed only when close. :func:`instant_bounds` serves the other date
heuristics (SM306, VID711, NEWS806).
"""

from __future__ import annotations

import datetime as dt
from operator import attrgetter
from typing import Final, cast

from ...core.model import SitemapRef, Url
from ...core.w3cdate import parse_usable
from .context import CHECKED
from .state import Batch, EntryState, R

__all__ = ["instant_bounds", "ref_dates", "url_dates"]

_EPOCH_CUTOFF: Final = "1994-01-01"
_LASTMOD: Final = attrgetter("lastmod")


def instant_bounds(value: str) -> tuple[dt.datetime, dt.datetime] | None:
    """Earliest and latest instant a date a reader keeps can mean: a W3C Datetime, or a
    form off it such as a time without a zone (``w3cdate.parse_usable``); a bare date, or
    a time without a zone, spans all zones."""
    try:
        p = parse_usable(value)
    except ValueError:
        return None
    start = p.to_datetime()
    if p.offset_minutes is not None:
        return start, start
    # no zone: from the period's start at +14:00 to its end at -12:00
    if p.granularity == 1:
        end = dt.datetime(p.year + 1, 1, 1, tzinfo=dt.UTC)
    elif p.granularity == 2:
        end = dt.datetime(p.year + p.month // 12, p.month % 12 + 1, 1, tzinfo=dt.UTC)
    elif p.granularity == 3:
        end = start + dt.timedelta(days=1)
    else:
        end = start  # a local time, in a zone not given
    return start - dt.timedelta(hours=14), end + dt.timedelta(hours=12)


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
