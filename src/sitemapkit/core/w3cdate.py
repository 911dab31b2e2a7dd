"""core: W3C Datetime (https://www.w3.org/TR/NOTE-datetime), parsed and formatted.

Pure. :func:`parse_w3c` accepts the six granularities of the Note and nothing else;
:func:`parse_usable` also the ISO 8601 forms off the Note that still name a day or an
instant (a reader keeps them, with SM301); calendar and range checks follow
``spec/DATETIME.md`` for both. Formatting follows the writer contract: dates as
``YYYY-MM-DD``, times with seconds (and the fraction the value gave) and an explicit offset.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Final, NamedTuple

__all__ = [
    "GRAMMAR",
    "LASTMOD_RE",
    "USABLE",
    "WRITER_FORM",
    "W3CDate",
    "format_lastmod",
    "instant",
    "parse_usable",
    "parse_w3c",
    "written",
    "zulu",
]

#: The syntax of the Note, "YYYY-MM-DDThh:mm:ss.sTZD" (a time is always followed by a TZD):
#: the one date grammar. A value it does not match is not a W3C Datetime at all; one it
#: matches may still name no day or instant (``parse_w3c`` checks the calendar and ranges).
GRAMMAR: Final = re.compile(
    r"(?P<Y>[0-9]{4})(?:-(?P<M>[0-9]{2})(?:-(?P<D>[0-9]{2})"
    r"(?:T(?P<h>[0-9]{2}):(?P<m>[0-9]{2})(?::(?P<s>[0-9]{2})(?:\.(?P<f>[0-9]+))?)?"
    r"(?P<tz>Z|[+-][0-9]{2}:[0-9]{2}))?)?)?",
    re.ASCII,
)

_DAY = (
    r"(?!0000)(?:[0-9]{4}-(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    r"|[0-9]{4}-(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    r"|[0-9]{4}-02-(?:0[1-9]|1[0-9]|2[0-8])"
    r"|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)"
)
_TIME = (
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?"
    r"(?:Z|[+-](?:(?:0[0-9]|1[0-3]):[0-5][0-9]|14:00))"
)
#: The lastmod forms the writer emits unchanged (after ``Z`` → ``+00:00``): a
#: calendar-valid complete date, or date and time with seconds (and any fraction of a
#: second: the Note caps none, the XSD takes them) and an offset. A fast path:
#: it matches exactly the values of those two forms that ``parse_w3c`` accepts
#: (``tests/core/test_w3cdate.py`` proves it), so a match needs no further check.
LASTMOD_RE: Final = _DAY + "(?:" + _TIME + ")?"
WRITER_FORM: Final = re.compile(LASTMOD_RE, re.ASCII)

#: ISO 8601 forms off the Note that still say which day or instant they mean, as
#: generators write them (spec/DATETIME.md §2, all SM301): a complete date, then perhaps
#: a time after ``T``, ``t`` or one space (with or without seconds and fraction), then
#: perhaps a zone ``Z``, ``z``, ``±hh:mm``, ``±hhmm`` or ``±hh`` -- so a time without a
#: zone, and a date with one. Not dates (dropped by readers): anything else, such as
#: ``20240501``, ``2024/05/01``, ``May 1, 2024``, ``1714557600``, ``10:00:00 +02:00``.
USABLE: Final = re.compile(
    r"(?P<Y>[0-9]{4})-(?P<M>[0-9]{2})-(?P<D>[0-9]{2})"
    r"(?:[Tt ](?P<h>[0-9]{2}):(?P<m>[0-9]{2})(?::(?P<s>[0-9]{2})(?:\.(?P<f>[0-9]+))?)?)?"
    r"(?P<tz>[Zz]|[+-][0-9]{2}(?::?[0-9]{2})?)?",
    re.ASCII,
)


class W3CDate(NamedTuple):
    """A parsed W3C Datetime: its granularity (1–6, see the Note) and its parts."""

    granularity: int
    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int
    fraction: str
    offset_minutes: int | None

    def to_datetime(self) -> dt.datetime:
        """The earliest instant the value denotes, aware (UTC for date-only values and for
        a time without a zone); microseconds at most (finer fractions are cut)."""
        tz = dt.UTC
        if self.offset_minutes is not None:
            tz = dt.timezone(dt.timedelta(minutes=self.offset_minutes))
        micro = int((self.fraction + "000000")[:6]) if self.fraction else 0
        return dt.datetime(
            self.year, self.month, self.day, self.hour, self.minute, self.second, micro, tz
        )


def parse_w3c(text: str) -> W3CDate:
    """Parse a W3C Datetime strictly, raising ``ValueError`` that says what is wrong.

    >>> parse_w3c("2024-05-01T10:00:00+02:00").granularity
    5
    """
    m = GRAMMAR.fullmatch(text)
    if m is None:
        raise ValueError(
            f"{text!r} is not a W3C Datetime; use YYYY-MM-DD or YYYY-MM-DDThh:mm:ss+hh:mm"
        )
    return _checked(text, m)


def parse_usable(text: str) -> W3CDate:
    """Parse a W3C Datetime or one of the :data:`USABLE` forms off it (checked the same).

    A time without a zone has ``offset_minutes`` ``None`` (its instant is unknown; taken
    as UTC by :meth:`W3CDate.to_datetime`).

    >>> parse_usable("2024-05-17 10:30:00").granularity, parse_usable("2024-05").granularity
    (5, 2)
    """
    m = GRAMMAR.fullmatch(text) or USABLE.fullmatch(text)
    if m is None:
        raise ValueError(f"{text!r} is not a date; use YYYY-MM-DD or YYYY-MM-DDThh:mm:ss+hh:mm")
    return _checked(text, m)


def _checked(text: str, m: re.Match[str]) -> W3CDate:
    """The parts of a match of :data:`GRAMMAR` or :data:`USABLE`, range-checked."""
    g = m.groupdict()
    year = int(g["Y"])
    if year == 0:
        raise ValueError(f"{text!r} has year 0000, which does not exist")
    month = int(g["M"] or 1)
    day = int(g["D"] or 1)
    if not 1 <= month <= 12:
        raise ValueError(f"{text!r} has month {month:02d}; months run from 01 to 12")
    try:
        dt.date(year, month, day)
    except ValueError:
        raise ValueError(f"{text!r} names a day that does not exist") from None
    hour = int(g["h"] or 0)
    minute = int(g["m"] or 0)
    second = int(g["s"] or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError(f"{text!r} has a time out of range (hh 00-23, mm and ss 00-59)")
    offset: int | None = None
    tz = g["tz"]
    if tz is not None:
        if tz in ("Z", "z"):
            offset = 0
        else:
            digits = tz[1:].replace(":", "")
            oh, om = int(digits[:2]), int(digits[2:] or 0)
            if om > 59 or oh * 60 + om > 14 * 60:
                raise ValueError(f"{text!r} has a zone offset beyond ±14:00")
            offset = (oh * 60 + om) * (1 if tz[0] == "+" else -1)
    if g["M"] is None:
        gran = 1
    elif g["D"] is None:
        gran = 2
    elif g["h"] is None:
        gran = 3
    elif g["s"] is None:
        gran = 4
    elif g["f"] is None:
        gran = 5
    else:
        gran = 6
    return W3CDate(gran, year, month, day, hour, minute, second, g["f"] or "", offset)


def instant(text: str) -> dt.datetime | None:
    """The earliest instant of a date a reader keeps (see :func:`parse_usable`), or
    ``None`` if ``text`` is not one. Orders every kept form: ``2024`` from 2024-01-01
    (UTC), fractions to the microsecond.

    >>> instant("2024-05-01T10:00:00.5Z") > instant("2024-05-01T10:00:00+00:00")
    True
    """
    try:
        return parse_usable(text).to_datetime()
    except ValueError:
        return None


def _format_offset(minutes: int) -> str:
    sign = "-" if minutes < 0 else "+"
    hh, mm = divmod(abs(minutes), 60)
    return f"{sign}{hh:02d}:{mm:02d}"


def format_lastmod(value: str | dt.date | dt.datetime) -> str:
    """Format a date for the writer (``spec/DATETIME.md`` §4).

    - an aware ``datetime`` becomes UTC with seconds: ``2024-05-01T08:00:00+00:00``
      (microseconds dropped); a naive ``datetime`` is refused (its instant is unknown);
    - a ``date`` becomes ``2024-05-01``;
    - a string must be a W3C Datetime of at least a complete date, and loses nothing it
      said: it keeps its own offset (the same instant, no clock arithmetic) and its
      fraction of a second; ``Z`` is written ``+00:00`` and a time without seconds gains
      ``:00`` (the XSD needs seconds). ``YYYY`` and ``YYYY-MM`` are refused: the XSD
      rejects them and a day would be invented.

    >>> format_lastmod("2024-03-22T08:13:58.345Z"), format_lastmod("2024-05-17T10:30+02:00")
    ('2024-03-22T08:13:58.345+00:00', '2024-05-17T10:30:00+02:00')
    """
    if isinstance(value, dt.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(
                f"datetime {value.isoformat()!r} has no timezone; attach one, "
                "e.g. value.replace(tzinfo=datetime.timezone.utc)"
            )
        utc = value.astimezone(dt.UTC)
        # not strftime: "%Y" does not pad years before 1000 to four digits
        return (
            f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}"
            f"T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}+00:00"
        )
    if isinstance(value, dt.date):
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    if not isinstance(value, str):
        raise TypeError(f"a date must be a str, date or datetime, not {type(value).__name__}")
    text = value.strip()
    if WRITER_FORM.fullmatch(text):  # the common case: already as the writer emits it
        return zulu(text)
    p = parse_w3c(text)
    if p.granularity < 3:
        raise ValueError(
            f"{text!r} is coarser than a day; sitemaps need at least a complete date YYYY-MM-DD"
        )
    if p.granularity == 3:
        return text
    assert p.offset_minutes is not None
    # granularity 4 (the fast pattern takes every finer value): seconds added
    return (
        f"{p.year:04d}-{p.month:02d}-{p.day:02d}T{p.hour:02d}:{p.minute:02d}:00"
        + _format_offset(p.offset_minutes)
    )


def zulu(text: str) -> str:
    """A W3C Datetime with ``Z`` or ``-00:00`` (UTC) written ``+00:00``, the writer's one
    spelling of UTC; any other value unchanged."""
    if text[-1:] == "Z":
        return text[:-1] + "+00:00"
    if text.endswith("-00:00"):
        return text[:-6] + "+00:00"
    return text


def written(text: str) -> str:
    """``text`` as the writer emits it: unchanged when it is in the writer's form, else
    :func:`format_lastmod` of it (which refuses what the writer cannot emit).

    For the values a model object holds (the model's own, or a date a reader kept as the
    document wrote it): for those the cheap test of the shape is exact.

    >>> written("2024-05-01"), written("2024-05-17T10:30Z")
    ('2024-05-01', '2024-05-17T10:30:00+00:00')
    """
    n = len(text)
    if n == 10 or (n >= 25 and text[10] == "T" and text[-6] in "+-" and text[-3] == ":"):
        return text
    return format_lastmod(text)
