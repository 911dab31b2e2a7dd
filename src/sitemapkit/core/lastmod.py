"""core: the lastmods of a whole block of lines at once, a fast path of :mod:`.w3cdate`. Pure.

The block formatter (``core.serialize.BlockFormatter``) takes a block of rows only when
every lastmod is already in the writer's form, or becomes it by the one rewrite
``format_lastmod`` makes of such values (``Z`` and ``-00:00`` written ``+00:00``). The
lines are matched by :data:`LINES`, built from the one grammar's ``LASTMOD_RE``; a
column-by-column byte check (:func:`in_range`) decides most blocks of datetimes
faster, and may only say "not shown" where the pattern takes a value (tested). A block
either takes the fast path whole or goes to the row path, which says what is wrong.
:func:`block_lastmods` also takes a block whose rows mix dates, datetimes and empty
fields (no lastmod), each kind checked as a block of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from .w3cdate import LASTMOD_RE

__all__ = ["LINES", "block_lastmods", "in_range"]

#: Lines (each ending in a newline) of lastmods as the writer emits them unchanged: a
#: complete date, or a date and time with seconds (perhaps a fraction) and an offset (not
#: ``Z``). Blocks of fractions are rare: their widths differ, so they take this pattern
#: (or the row path), never the column check.
LINES: Final = re.compile(rb"(?:" + LASTMOD_RE.encode() + rb"\n)*+")

# in_range: the datetimes of a block checked column by column. Every value has the
# same width, so each two-digit field of all the lines is one extended slice; its
# digits become byte values, and two slices make one byte per line (tens*10 + units:
# at most 99, so the big-integer arithmetic never carries from one line to the next).
_WIDTH: Final = 26  # len("2024-05-01T10:00:00+02:00\n")
_SHAPE: Final = bytes.maketrans(b"0123456789+", b"0000000000-")
_LAYOUT: Final = b"0000-00-00T00:00:00-00:00\n"
_DIGIT_VALUES: Final = bytes.maketrans(b"0123456789", bytes(range(10)))
_MONTHS: Final = bytes(range(1, 13))
_DAYS: Final = bytes(range(1, 32))
_HOURS: Final = bytes(range(24))
_SIXTY: Final = bytes(range(60))
_ZONE_HOURS: Final = bytes(range(14))  # +14:00 is valid but only with :00: the pattern
# 128 + the last day of each month (February 29: the leap-year check below), so that
# 128 + last day - day is >= 128 exactly for a day that fits, with no borrow
_LAST_DAY: Final = bytes(
    [128 + d for d in (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)] + [128] * 243
)
_FITS: Final = bytes(range(128, 256))
_IS_FEB: Final = bytes(v == 2 for v in range(256))
_IS_29: Final = bytes(v == 29 for v in range(256))
_LEAP_YY: Final = bytes(v % 4 == 0 and v > 0 for v in range(256))  # 2024, not 2100
_ZERO_YY: Final = bytes(v == 0 for v in range(256))
_LEAP_CC: Final = bytes(v % 4 == 0 for v in range(256))  # 2000, not 1900


def in_range(lm: bytes, n: int) -> bool:
    """``True`` if all ``n`` lines of ``lm`` are datetimes that :data:`LINES` takes.

    ``False`` means "not shown here": the caller asks the regular expression, which
    decides (so a +14:00 offset only costs time). Lines are
    ``YYYY-MM-DDThh:mm:ss±hh:mm`` (``Z`` already replaced); ``len(lm) == 26 * n``.
    """
    # the shape maps both signs to "-", so a "+" must stand in the offsets' column only
    if lm.translate(_SHAPE) != _LAYOUT * n or lm.count(b"+") != lm[19::_WIDTH].count(b"+"):
        return False

    def field(pos: int) -> int:
        tens = lm[pos::_WIDTH].translate(_DIGIT_VALUES)
        units = lm[pos + 1 :: _WIDTH].translate(_DIGIT_VALUES)
        return int.from_bytes(tens) * 10 + int.from_bytes(units)

    def only(value: int, allowed: bytes) -> bool:
        return not value.to_bytes(n).translate(None, allowed)

    cc, yy, month, day = field(0), field(2), field(5), field(8)
    if (
        b"\0" in (cc | yy).to_bytes(n)  # year 0000
        or not only(month, _MONTHS)
        or not only(day, _DAYS)
        or not only(field(11), _HOURS)
        or not only(field(14), _SIXTY)
        or not only(field(17), _SIXTY)
        or not only(field(20), _ZONE_HOURS)
        or not only(field(23), _SIXTY)
    ):
        return False
    months = month.to_bytes(n)
    if not only(int.from_bytes(months.translate(_LAST_DAY)) - day, _FITS):
        return False
    feb29 = int.from_bytes(months.translate(_IS_FEB)) & int.from_bytes(
        day.to_bytes(n).translate(_IS_29)
    )
    if feb29:
        centuries, years = cc.to_bytes(n), yy.to_bytes(n)
        leap = int.from_bytes(years.translate(_LEAP_YY)) | (
            int.from_bytes(years.translate(_ZERO_YY))
            & int.from_bytes(centuries.translate(_LEAP_CC))
        )
        if feb29 & ~leap:
            return False
    return True


def block_lastmods(vals: list[bytes]) -> list[bytes] | None:
    """The lastmods of a block as the writer emits them, if all are plain; else ``None``.

    Plain means complete dates, or dates and times with seconds and an offset (``Z`` is
    written ``+00:00``), or empty (the row has none: it stays ``b""``), checked on the
    whole block: column by column (:func:`in_range`), else by one calendar-exact regular
    expression; a block that mixes them is checked kind by kind.

    >>> block_lastmods([b"2024-05-01", b"", b"2024-05-01T10:00:00Z"])
    [b'2024-05-01', b'', b'2024-05-01T10:00:00+00:00']
    >>> block_lastmods([b"2024-05-01", b"2024-02-30"]) is None
    True
    """
    got = _uniform(vals)
    if got is not None:
        return got
    empty = vals.count(b"")
    dates = [v for v in vals if len(v) == 10]
    times = [v for v in vals if len(v) > 10]
    if len(dates) + len(times) + empty != len(vals):
        return None  # a value of 1-9 bytes: none the writer takes
    if not empty and not (dates and times):
        return None  # one kind, which its check refused
    taken: dict[bool, Iterator[bytes]] = {}
    for kind in (dates, times):
        if kind:
            got = _uniform(kind)
            if got is None:
                return None
            taken[kind is dates] = iter(got)
    return [v and next(taken[len(v) == 10]) for v in vals]


def _uniform(vals: list[bytes]) -> list[bytes] | None:
    """:func:`block_lastmods` for a block of one kind (all dates or all datetimes)."""
    given = b"\n".join(vals) + b"\n"
    if len(given) == 11 * len(vals):
        return vals if LINES.fullmatch(given) else None
    # a Z anywhere but at the end of a valid value leaves an offset where the pattern
    # refuses one, so all of them can be replaced, by the single-byte (memchr) search
    lm = given.replace(b"Z", b"+00:00").replace(b"-00:00\n", b"+00:00\n")
    n = len(vals)
    if len(lm) != _WIDTH * n or not (in_range(lm, n) or LINES.fullmatch(lm)):
        return None
    return vals if lm == given else lm.split(b"\n")[:-1]
