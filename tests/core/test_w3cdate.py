import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapkit.core.w3cdate import GRAMMAR, WRITER_FORM, W3CDate, format_lastmod, parse_w3c

VALID = {
    "1997": 1,
    "1997-07": 2,
    "1997-07-16": 3,
    "1997-07-16T19:20+01:00": 4,
    "1997-07-16T19:20:30+01:00": 5,
    "1997-07-16T19:20:30.45+01:00": 6,
    "1997-07-16T19:20:30Z": 5,
    "2024-02-29": 3,
    "2024-05-01T10:00:00-07:00": 5,
    "2024-05-01T10:00:00.123456+02:00": 6,
}
INVALID = [
    "1997-07-16T19:20:30",
    "1997-07-16T19:20",
    "1997-07-16Z",
    "1997-07-16T24:00:00Z",
    "1997-07-16T19:20:60Z",
    "2023-02-29",
    "0000-01-01",
    "-0001-01-01",
    "12024-01-01",
    "1997-07-16t19:20:30z",
    "1997-07-16 19:20:30Z",
    "1997-07-16T19:20:30+0100",
    "1997-07-16T19:20:30+01",
    "19970716",
    "1997-7-16",
    "97-07-16",
    "2024-13-01",
    "2024-04-31",
    "2024-05-01T10:00:00.+02:00",
    "2024-05-01T1:00:00Z",
    "2024-05-01T10:00:00 +02:00",
    "May 1, 2024",
    "2024/05/01",
    "1714557600",
    "2024-05-01T10:00:00GMT",
    "2024-05-01T10:00:00+2:00",
    "",
    "2024-05-01T10:00:00+15:00",
    "２０２４-05-01",
]


@pytest.mark.parametrize(("text", "granularity"), VALID.items())
def test_valid_granularities(text: str, granularity: int) -> None:
    assert parse_w3c(text).granularity == granularity


@pytest.mark.parametrize("text", INVALID)
def test_invalid_values_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_w3c(text)


def test_writer_forms() -> None:
    assert format_lastmod("2024-05-01") == "2024-05-01"
    assert format_lastmod("2024-05-01T10:00Z") == "2024-05-01T10:00:00+00:00"
    # the fraction is what the value said: kept (issue #11 §3)
    assert format_lastmod("2024-05-01T10:00:00.999-05:00") == "2024-05-01T10:00:00.999-05:00"
    assert format_lastmod("2024-03-22T08:13:58.345Z") == "2024-03-22T08:13:58.345+00:00"
    assert format_lastmod("2024-05-01T10:00:00.000Z") == "2024-05-01T10:00:00.000+00:00"
    assert format_lastmod("2024-05-01T10:00-02:00") == "2024-05-01T10:00:00-02:00"
    assert format_lastmod(" 2024-05-01T10:00:00-00:00 ") == "2024-05-01T10:00:00+00:00"
    tz = dt.timezone(dt.timedelta(hours=2))
    assert format_lastmod(dt.datetime(2024, 5, 1, 10, 0, 0, 5, tz)) == "2024-05-01T08:00:00+00:00"
    assert format_lastmod(dt.date(2024, 5, 1)) == "2024-05-01"


@pytest.mark.parametrize("value", ["2024", "2024-05", dt.datetime(2024, 5, 1)])
def test_writer_refuses_coarse_or_naive(value: object) -> None:
    with pytest.raises(ValueError, match=r"coarser than a day|no timezone"):
        format_lastmod(value)  # type: ignore[arg-type]


_OFFSETS = st.integers(-14 * 60, 14 * 60).map(lambda m: dt.timezone(dt.timedelta(minutes=m)))


@given(
    st.datetimes(
        min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30), timezones=_OFFSETS
    )
)
def test_format_then_parse_is_the_same_instant(value: dt.datetime) -> None:
    text = format_lastmod(value)
    parsed = parse_w3c(text)
    assert parsed.granularity == 5
    assert parsed.to_datetime() == value.replace(microsecond=0)


@given(
    st.datetimes(
        min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30), timezones=_OFFSETS
    ),
    st.sampled_from(["seconds", "minutes", "fraction", "date"]),
    st.booleans(),
)
def test_strings_keep_their_instant_and_offset(value: dt.datetime, form: str, zulu: bool) -> None:
    """Strings already in the writer's form take a shortcut; all must agree with parsing."""
    if form == "date":
        text = value.date().isoformat()
    else:
        text = value.isoformat(timespec={"fraction": "microseconds"}.get(form, form))
    if form != "date" and zulu and value.utcoffset() == dt.timedelta(0):
        text = text[:-6] + "Z"
    out = format_lastmod(text)
    if form == "date":
        assert out == text
        return
    parsed, given_ = parse_w3c(out), parse_w3c(text)
    assert parsed.granularity == (6 if form == "fraction" else 5) and out.endswith(
        text[-6:] if not text.endswith("Z") else "+00:00"
    )
    assert parsed.to_datetime() == given_.to_datetime()
    assert parsed.fraction == given_.fraction  # nothing the value said is lost
    assert not out.endswith("-00:00")
    # the only rewrites: Z as +00:00, and seconds added to hh:mm
    assert out == (text[:-1] + "+00:00" if text.endswith("Z") else text) or form == "minutes"


# -- the fast patterns are the grammar --------------------------------------------------------
#
# WRITER_FORM is a shortcut the reader and the writer take before (instead of) parse_w3c; it
# claims the complete dates and the date-times with seconds (and a fraction, if any) and an
# offset, calendar-exact. The
# strategy builds values of every shape the grammar has, with digits that reach past each range
# (month 13, day 31 in April, Feb 29 off leap years, hour 24, offset +14:01), and arbitrary text.

_DIGITS = st.text(alphabet="0123456789", min_size=1, max_size=5)


def _field(low: int, high: int, width: int = 2) -> st.SearchStrategy[str]:
    """A field of ``width`` digits from ``low`` to ``high`` (one past its range on each side;
    the text strategies below bring the wrong widths)."""
    return st.integers(low, high).map(lambda n: f"{n:0{width}d}")


_OFFSET = st.one_of(
    st.sampled_from(["Z", "+00:00", "-00:00", "+14:00", "-14:00", "+14:01", "z", ""]),
    st.builds(
        lambda sign, h, m: f"{sign}{h}:{m}", st.sampled_from("+-"), _field(0, 15), _field(0, 60)
    ),
)
_SHAPES = st.builds(
    lambda y, mo, d, h, mi, s, frac, tz, cut: (
        f"{y}-{mo}-{d}T{h}:{mi}" + (f":{s}" + (f".{frac}" if frac else "")) + tz
    )[: cut if cut else None],
    st.one_of(_field(0, 9999, 4), st.sampled_from(["0000", "1900", "2000", "2024", "2023"])),
    _field(0, 13),
    _field(0, 32),
    _field(0, 24),
    _field(0, 60),
    _field(0, 60),
    st.one_of(st.just(""), _DIGITS),
    _OFFSET,
    st.sampled_from([0, 0, 0, 0, 0, 4, 7, 10, 16]),
)
_DATES = st.one_of(
    _SHAPES,
    _SHAPES.map(lambda t: t[:10]),
    _SHAPES.map(lambda t: t[:16] + t[19:]),  # without seconds
    st.text(alphabet="0123456789-:+TZ. ", max_size=30),
    st.text(max_size=30),
)


def _parsed(text: str) -> W3CDate | None:
    try:
        return parse_w3c(text)
    except ValueError:
        return None


@settings(max_examples=1000, deadline=None)
@given(_DATES)
def test_writer_form_accepts_exactly_what_parse_w3c_accepts_in_its_forms(text: str) -> None:
    parsed = _parsed(text)
    claimed = parsed is not None and parsed.granularity in (3, 5, 6)
    assert (WRITER_FORM.fullmatch(text) is not None) == claimed, (text, parsed)


@settings(max_examples=1000, deadline=None)
@given(_DATES)
def test_grammar_is_the_syntax_parse_w3c_reads(text: str) -> None:
    """A value outside GRAMMAR is never a date; inside it, only ranges can refuse it."""
    parsed = _parsed(text)
    if GRAMMAR.fullmatch(text) is None:
        assert parsed is None
    elif parsed is None:
        with pytest.raises(ValueError, match=r"year 0000|month|day that does not|out of range|±14"):
            parse_w3c(text)


def test_the_fast_forms_reach_every_calendar_edge() -> None:
    for text in (
        "2024-02-29",
        "2000-02-29",
        "2023-02-28",
        "2024-04-30",
        "2024-12-31",
        "2024-05-01T23:59:59+14:00",
        "2024-05-01T00:00:00-00:00",
    ):
        assert WRITER_FORM.fullmatch(text) and parse_w3c(text), text
    for text in (
        "2023-02-29",
        "1900-02-29",
        "2024-04-31",
        "0000-01-01",
        "2024-13-01",
        "2024-05-01T24:00:00Z",
        "2024-05-01T10:00:00+14:01",
        "2024-05-01T10:00Z",
    ):
        assert WRITER_FORM.fullmatch(text) is None, text
