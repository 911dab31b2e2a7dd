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
    _latest_is_the_latest_instant(values)


def _latest_is_the_latest_instant(values: list[str]) -> None:
    """Latest, given the values in a block or one by one, holds one of the latest instant."""
    fast = Latest()
    fast.add_all([v.encode() for v in values])
    one_by_one = Latest()
    for v in values:
        one_by_one.add(v)
    best = max(_instant(v) for v in values)  # fromisoformat: to the microsecond
    assert fast.value is not None and _instant(fast.value) == best
    assert one_by_one.value is not None and _instant(one_by_one.value) == best


@st.composite
def kept_lastmod(draw: st.DrawFn) -> str:
    """A lastmod in the writer's form with a fraction of a second of any length, or not."""
    text = draw(lastmod())
    if len(text) > 10 and draw(st.booleans()):
        text = text[:19] + "." + draw(st.text(alphabet="0123456789", min_size=1, max_size=9))
        text += draw(lastmod().filter(lambda t: len(t) > 10))[-6:]
    return text


@given(st.lists(kept_lastmod(), min_size=1, max_size=60))
@example(["2024-05-01T10:00:00.5+00:00", "2024-05-01T10:00:00+00:00"])
@example(["2024-05-01T10:00:00.45+00:00", "2024-05-01T10:00:00.5+00:00"])
@example(["2024-05-01T10:00:00.999+00:00", "2024-05-01T10:00:01+00:00"])
def test_fractions_order_as_their_instants(values: list[str]) -> None:
    """Fractions are kept (issue #11 §3): the index's date is still the latest instant."""
    _latest_is_the_latest_instant(values)
