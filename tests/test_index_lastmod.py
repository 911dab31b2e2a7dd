"""The index's lastmod of a shard is the latest instant among its entries, however the
offsets mix; the fast filter of Latest.add_all never drops the winner."""

from __future__ import annotations

import datetime as dt

from hypothesis import example, given
from hypothesis import strategies as st

from sitemapkit.core.w3cdate import format_lastmod
from sitemapkit.writer.index import Latest

_OFFSETS = [
    dt.timedelta(hours=h, minutes=m) for h, m in ((-12, 0), (-5, 0), (0, 0), (5, 30), (14, 0))
]


@st.composite
def lastmod(draw: st.DrawFn) -> str:
    day = draw(st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2030, 12, 31)))
    if draw(st.booleans()):
        return day.isoformat()
    at = dt.datetime.combine(day, draw(st.times()).replace(microsecond=0))
    return format_lastmod(at.replace(tzinfo=dt.timezone(draw(st.sampled_from(_OFFSETS)))))


def _instant(text: str) -> dt.datetime:
    if len(text) == 10:
        return dt.datetime.fromisoformat(text + "T00:00:00+00:00")
    return dt.datetime.fromisoformat(text)


@given(st.lists(lastmod(), min_size=1, max_size=60))
# the textual maximum is a day ahead of the latest instant: far offsets, one day apart
@example(["2024-05-02T00:30:00+14:00", "2024-05-01T23:00:00-12:00"])
@example(["2024-05-03", "2024-05-02T13:00:00-12:00"])
def test_the_latest_instant_wins(values: list[str]) -> None:
    fast = Latest()
    fast.add_all([v.encode() for v in values])
    one_by_one = Latest()
    for v in values:
        one_by_one.add(v)
    best = max(_instant(v) for v in values)
    assert fast.value is not None and _instant(fast.value) == best
    assert one_by_one.value is not None and _instant(one_by_one.value) == best
