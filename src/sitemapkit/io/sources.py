"""io: input sources for the writer: .txt, .csv, .jsonl, sitemaps (.xml, .xml.gz), stdin.

Each source pushes its records into a :class:`~sitemapkit.SitemapWriter` (a :class:`Sink`). Bad
input raises :class:`~sitemapkit.InputError` naming the file, the line and the
field. CSV and text files take a fast path when a block of lines holds only
plain, already-canonical values (checked with string operations over the whole
block); any block that does not is processed row by row, which gives
byte-identical output and exact error positions. One big plain input file is
written shard by shard in two forked processes (see :func:`_write_parallel`).
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import io
import itertools
import json
import multiprocessing as mp
import os
import re
import signal
import stat
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, BinaryIO, Final, Protocol, cast
from urllib.parse import urlsplit

from ..core.model import CHANGEFREQS, Alternate, Image, InvalidValue, News, Url, Video
from ..core.urls import XML_SPACE
from ..errors import InputError, ParseError, SitemapError
from .files import ShardFile, open_input

__all__ = ["CSV_COLUMNS", "Progress", "Sink", "detect_format", "write_inputs"]


class Sink(Protocol):
    """Where sources put records: :class:`sitemapkit.SitemapWriter` is one."""

    @property
    def base_url(self) -> str: ...

    @property
    def format(self) -> str: ...

    @property
    def incremental(self) -> bool: ...

    def add(self, url: Url | str, *, content_hash: str | None = None) -> None: ...

    def resolve(self, loc: str) -> str: ...

    def _add_block(self, data: bytes, count: int, hashes: array[int]) -> None: ...


Progress = Callable[[int], None]

_BASIC: Final = ("loc", "lastmod", "changefreq", "priority")
_VIDEO_COLUMNS: Final = (
    "video_thumbnail_loc",
    "video_title",
    "video_description",
    "video_content_loc",
    "video_player_loc",
    "video_duration",
    "video_expiration_date",
    "video_rating",
    "video_view_count",
    "video_publication_date",
    "video_family_friendly",
    "video_requires_subscription",
    "video_uploader",
    "video_uploader_info",
    "video_live",
    "video_tags",
    "video_restriction_allow",
    "video_restriction_deny",
    "video_platform_allow",
    "video_platform_deny",
)
_VIDEO_SET: Final = frozenset(_VIDEO_COLUMNS)
_NEWS_COLUMNS: Final = ("news_name", "news_language", "news_publication_date", "news_title")
#: Every column a CSV input may have; ``loc`` is required.
CSV_COLUMNS: Final = (
    *_BASIC,
    "content_hash",
    "images",
    "alternates",
    "news_name",
    "news_language",
    "news_publication_date",
    "news_title",
    *_VIDEO_COLUMNS,
)
_BLOCK: Final = 1 << 19
#: Inputs bigger than this are formatted in forked processes (when there are 2+ cores).
_PARALLEL_MIN = 16 << 20
_URI_BYTES: Final = (
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%\n"
)
_HIGH_BYTES: Final = bytes(range(128, 256))
_BAD_PCT: Final = re.compile(rb"%(?![0-9A-Fa-f]{2})")
_PRIORITIES: Final = frozenset(f"{i / 10:.1f}".encode() for i in range(11))
_CHANGEFREQS: Final = frozenset(c.encode() for c in CHANGEFREQS)
# The lastmods the fast path takes, one per line: a complete date, or a date and time
# with seconds and an offset within ±14:00 (DATETIME.md), every field in range and the
# day existing in its month (leap years by the Gregorian rule; year 0000 refused, as
# format_lastmod refuses it). Anything else takes the row path, which says what is wrong.
_YEAR: Final = rb"(?!0000)\d{4}"
_LEAP_DAY: Final = (
    rb"(?:(?!0000)\d\d(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
    rb"-02-29"
)
_DATE: Final = (
    rb"(?:" + _YEAR + rb"-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])"
    rb"|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)|" + _LEAP_DAY + rb")"
)
_TIME: Final = rb"T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d[+-](?:(?:0\d|1[0-3]):[0-5]\d|14:00)"
_DATETIMES: Final = re.compile(rb"(?:" + _DATE + _TIME + rb"\n)*+")
_DATES: Final = re.compile(rb"(?:" + _DATE + rb"\n)*+")
_OPEN: Final = {
    "loc": "<loc>",
    "lastmod": "<lastmod>",
    "changefreq": "<changefreq>",
    "priority": "<priority>",
}


# _in_range: the datetimes of a block checked column by column. Every value has the
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


def _in_range(lm: bytes, n: int) -> bool:
    """``True`` if all ``n`` lines of ``lm`` are datetimes that :data:`_DATETIMES` takes.

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


def _fast_lastmods(vals: list[bytes]) -> list[bytes] | None:
    """The lastmods of a block as the writer emits them, if all are plain; else ``None``.

    Plain means all complete dates, or all dates and times with seconds and an offset
    (``Z`` is written ``+00:00``), checked on the whole block: column by column
    (:func:`_in_range`), else by one calendar-exact regular expression.
    """
    given = b"\n".join(vals) + b"\n"
    if len(given) == 11 * len(vals):
        return vals if _DATES.fullmatch(given) else None
    # a Z anywhere but at the end of a valid value leaves an offset where the pattern
    # refuses one, so all of them can be replaced, by the single-byte (memchr) search
    lm = given.replace(b"Z", b"+00:00").replace(b"-00:00\n", b"+00:00\n")
    n = len(vals)
    if len(lm) != _WIDTH * n or not (_in_range(lm, n) or _DATETIMES.fullmatch(lm)):
        return None
    return vals if lm == given else lm.split(b"\n")[:-1]


def detect_format(name: str, head: bytes) -> str:
    """``csv``, ``jsonl``, ``txt`` or ``xml`` from the file name, else from the content."""
    lower = name.lower()
    for ext, kind in (
        (".csv", "csv"),
        (".jsonl", "jsonl"),
        (".ndjson", "jsonl"),
        (".json", "jsonl"),
        (".txt", "txt"),
        (".xml", "xml"),
        (".gz", "xml"),
        (".rss", "xml"),
        (".atom", "xml"),
    ):
        if lower.endswith(ext):
            return kind
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:2] == b"\x1f\x8b" or text.startswith(b"<"):
        return "xml"
    if text.startswith(b"{"):
        return "jsonl"
    first = text.split(b"\n", 1)[0].lower()
    if b"," in first and first.split(b",", 1)[0].strip(b'" ') == b"loc":
        return "csv"
    return "txt"


class _Fast:
    """The block fast path for plain rows (loc, lastmod, changefreq, priority).

    :meth:`format` is pure, so it also runs in forked worker processes.
    """

    def __init__(self, writer: Sink, columns: list[str]) -> None:
        self.columns = columns
        self.txt = writer.format == "txt"
        # Every line must start with the base URL (lowercase scheme and host, so the
        # slow path would not change it) whether or not locations are checked:
        # anything else takes the slow path.
        self.base = writer.base_url.encode()
        self.prefix = b"\n" + self.base
        # Dot segments ("/./", "/../") may climb out of a base folder, which the row
        # path's location check finds; under a root base every path stays inside.
        self.dots = urlsplit(writer.base_url).path != "/"
        order = [c for c in _BASIC if c in columns]
        self.order = order
        width = 2 * len(order) + 1
        # [<url><loc>, LOC, </loc><lastmod>, LASTMOD, ..., </priority></url>\n]
        merged: list[str] = ["<url><loc>"]
        for i, c in enumerate(order):
            merged.append("")
            nxt = order[i + 1] if i + 1 < len(order) else None
            merged.append(f"</{c}>" + (_OPEN[nxt] if nxt else "</url>\n"))
        assert len(merged) == width
        self.template = [part.encode() for part in merged]
        self.width = width

    def format(self, data: bytes) -> tuple[bytes, int, array[int]] | None:
        """Entry lines, their count and loc hashes for a block of whole input lines.

        ``None`` when a value is not plain: the caller then takes the row path (which
        also reports what is wrong, with its line).

        Works on the UTF-8 bytes. URL checks, percent-encoding and escaping run on the
        whole block at once: the other columns may only hold characters that none of
        these steps touch, and they are checked to hold exactly that afterwards.
        """
        n = data.count(b"\n")
        # blank lines fail the check that every line starts with the base URL, below
        if not n or data[0] == 10 or b"\r" in data or data[-1] != 10:
            return None
        # only escapes of the input can be broken: the ones made here are whole
        escapes = b"%" in data
        # what is not a URI character must be the UTF-8 of non-ASCII characters
        other = data.translate(None, _URI_BYTES)
        if other:
            if other.translate(None, _HIGH_BYTES):
                return None
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                return None
            # IRI -> URI: each byte of a non-ASCII character's UTF-8 is percent-encoded
            for byte in set(other):
                data = data.replace(bytes((byte,)), b"%%%02X" % byte)
        if (
            (escapes and _BAD_PCT.search(data) is not None)
            or (self.dots and b"/." in data)
            or not data.startswith(self.base)
            or data.count(self.prefix) != n - 1
        ):
            return None
        if not self.txt and (b"&" in data or b"'" in data):
            data = data.replace(b"&", b"&amp;").replace(b"'", b"&apos;")
        ncol = len(self.columns)
        fields = data.split(b"\n") if ncol == 1 else data.replace(b"\n", b",").split(b",")
        if len(fields) != n * ncol + 1:
            return None
        fields.pop()  # after the last newline
        cols = {c: fields[i::ncol] for i, c in enumerate(self.columns)}
        loc_list = cols["loc"]
        # escaped lengths are an upper bound of the real ones: exact checks on the row path;
        # every loc starts with the base URL, so none is shorter than it
        if max(map(len, loc_list)) > 2047 or (len(self.base) < 12 and min(map(len, loc_list)) < 12):
            return None
        hashes = array("q", map(hash, loc_list))
        if self.txt:
            return data if ncol == 1 else b"\n".join(loc_list) + b"\n", n, hashes
        values: dict[str, list[bytes]] = {"loc": loc_list}
        if "lastmod" in cols:
            lm = _fast_lastmods(cols["lastmod"])
            if lm is None:
                return None
            values["lastmod"] = lm
        if "changefreq" in cols:
            if not set(cols["changefreq"]) <= _CHANGEFREQS:
                return None
            values["changefreq"] = cols["changefreq"]
        if "priority" in cols:
            if not set(cols["priority"]) <= _PRIORITIES:
                return None
            values["priority"] = cols["priority"]
        out = self.template * n
        w = self.width
        for i, c in enumerate(self.order):
            out[2 * i + 1 :: w] = values[c]
        return b"".join(out), n, hashes


def _split_ws(text: str) -> list[str]:
    return text.split()


def _csv_url(w: Sink, row: dict[str, str]) -> Url:
    def get(k: str) -> str | None:
        v = row.get(k)
        return v if v not in (None, "") and v.strip() else None

    images = tuple(Image(w.resolve(i)) for i in _split_ws(row.get("images") or ""))
    alternates: list[Alternate] = []
    for tok in _split_ws(row.get("alternates") or ""):
        lang, sep, href = tok.partition("=")
        if not sep:
            raise InvalidValue("alternates", f"{tok!r} is not hreflang=URL")
        alternates.append(Alternate(lang, w.resolve(href)))
    news = None
    if row.keys() & _NEWS_COLUMNS and any(get(k) for k in _NEWS_COLUMNS):
        news = News(
            get("news_name") or "",
            get("news_language") or "",
            get("news_publication_date") or "",
            get("news_title") or "",
        )
    videos = []
    if row.keys() & _VIDEO_SET and any(get(k) for k in _VIDEO_COLUMNS):
        kw: dict[str, Any] = {}
        for k in _VIDEO_COLUMNS:
            v = get(k)
            if v is None:
                continue
            key = k[6:]
            if key == "tags":
                kw["tags"] = [t.strip() for t in v.split(",") if t.strip()]
            elif key.startswith(("restriction_", "platform_")):
                what, rel = key.split("_")
                kw[what] = {
                    "relationship": rel,
                    "countries" if what == "restriction" else "platforms": v.split(),
                }
            elif key in ("thumbnail_loc", "content_loc", "player_loc", "uploader_info"):
                kw[key] = w.resolve(v)
            else:
                kw[key] = v
        videos.append(Video(**{"thumbnail_loc": "", "title": "", "description": "", **kw}))
    loc = get("loc")
    if loc is None:
        raise InvalidValue("loc", "is empty")
    return Url(
        w.resolve(loc),
        lastmod=get("lastmod"),
        changefreq=get("changefreq"),
        priority=get("priority"),
        images=images,
        videos=tuple(videos),
        news=news,
        alternates=tuple(alternates),
    )


def _fail(exc: Exception, where: str, line: int, field: str | None = None) -> InputError:
    if isinstance(exc, InvalidValue):
        return InputError(exc.detail, where=where, line=line, field=field or exc.field)
    if isinstance(exc, SitemapError):
        return InputError(
            exc.message, where=where, line=line, field=exc.field or field, hint=exc.hint
        )
    return InputError(str(exc), where=where, line=line, field=field)


def _add(
    w: Sink, build: Callable[[], Url], where: str, line: int, content_hash: str | None = None
) -> None:
    try:
        if content_hash:
            w.add(build(), content_hash=content_hash)
        else:
            w.add(build())
    except (ValueError, SitemapError) as exc:
        raise _fail(exc, where, line) from None


def _read_text_blocks(stream: BinaryIO) -> Iterator[tuple[int, str]]:
    """(first line number, text of whole lines) in blocks of about 4 MiB, UTF-8 decoded."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    rest = ""
    line = 1
    while True:
        raw = stream.read(_BLOCK)
        try:
            text = rest + decoder.decode(raw, final=not raw)
        except UnicodeDecodeError as exc:
            raise InputError(
                f"input is not valid UTF-8: {exc.reason}",
                line=line,
                hint="convert the file to UTF-8",
            ) from None
        if not raw:
            if text:
                yield line, text if text.endswith("\n") else text + "\n"
            return
        cut = text.rfind("\n") + 1
        if cut:
            block, rest = text[:cut], text[cut:]
            yield line, block
            line += block.count("\n")
        else:
            rest = text


class _NotPlain(Exception):
    """The input cannot be cut at newlines into shards (see :func:`_iter_ranges`)."""


def _iter_ranges(path: str, body_start: int, per_shard: int) -> Iterator[tuple[int, int, int]]:
    """Byte ranges of ``per_shard`` lines each after ``body_start``, with first line numbers.

    Raises :class:`_NotPlain` when the file does not end with a newline. Reads the file
    once, a MiB at a time (not mmap: mapped pages would count as resident memory), and
    only counts newlines: whether a range can be cut there (no quotes, CR or blank
    lines) is checked by the worker that writes it (:func:`_range_job`).
    """
    start = body_start
    need = per_shard
    line = 1
    prev = b"\n"
    with open(path, "rb") as fh:
        fh.seek(body_start)
        offset = body_start
        while chunk := fh.read(1 << 20):
            c = chunk.count(b"\n")
            if c < need:
                need -= c
            else:
                pos = 0
                while c >= need:
                    # the need-th newline from pos, found in C
                    pos = len(chunk) - len(chunk[pos:].split(b"\n", need)[need])
                    yield start, offset + pos, line
                    start = offset + pos
                    line += per_shard
                    c -= need
                    need = per_shard
                need -= c
            prev = chunk[-1:]
            offset += len(chunk)
    if prev != b"\n" or offset <= body_start:
        raise _NotPlain
    if start != offset:
        yield start, offset, line


_RANGE_CTX: tuple[Any, ...] | None = None


def _range_worker(conn: Connection) -> None:
    """A shard writer process: jobs in, results out, until ``None`` or the pipe ends.

    Ctrl-C reaches the whole process group: the main process alone handles it (it sets
    the cancel event and ends the workers).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        conn.send(_range_job(job))


def _range_job(job: tuple[int, int, int, int, str]) -> tuple[Any, ...]:
    """Write one whole shard from a byte range of the input (runs in a forked process).

    Returns ``("ok", count, raw bytes, stored bytes, hashes)``, ``("error", message,
    line, field, hint)``, ``("too-big",)`` when the byte limit would cut the range, or
    ``("not-plain",)`` when the range holds quotes, CR or blank lines; ``("cancelled",)``
    once the main process has set the cancel event (it stops between blocks).
    """
    assert _RANGE_CTX is not None
    w, fast, columns, src, where, cancel = _RANGE_CTX
    _, start, end, first_line, target = job
    if cancel.is_set():
        return ("cancelled",)
    with open(src, "rb") as fh:
        fh.seek(start)
        data = fh.read(end - start)
    out = ShardFile(Path(target), gzip=w.gzip, level=w.gzip_level)
    out._do_open()
    out._do_write(w._header(0).encode())
    hashes = array("q")
    count = 0
    line = first_line
    pos = 0
    ncol = len(columns)
    while pos < len(data):
        if cancel.is_set():
            out._do_close()
            return ("cancelled",)
        cut = data.find(b"\n", min(len(data), pos + _BLOCK)) + 1 or len(data)
        block = data[pos:cut]
        pos = cut
        res = fast.format(block)
        if res is not None:
            out._do_write(res[0])
            hashes.extend(res[2])
            count += res[1]
            line += res[1]
            continue
        if b'"' in block or b"\r" in block or b"\n\n" in block or block[:1] == b"\n":
            # a quoted field may hold a newline, a blank line is not a row: the ranges
            # may be cut wrongly, so the input is written by the sequential path
            return ("not-plain",)
        try:
            part = block.decode("utf-8")
        except UnicodeDecodeError as exc:
            return (
                "error",
                f"input is not valid UTF-8: {exc.reason}",
                line + block[: exc.start].count(b"\n"),
                None,
                "convert the file to UTF-8",
            )
        chunk: list[bytes] = []
        for raw in part.split("\n")[:-1]:
            try:
                if fast.txt:
                    url: Url | str = w.resolve(raw.strip(XML_SPACE))
                else:
                    row = raw.split(",")
                    if len(row) != ncol:
                        return (
                            "error",
                            f"row has {len(row)} fields, the header names {ncol}",
                            line,
                            None,
                            "quote values that contain commas",
                        )
                    url = _csv_url(w, dict(zip(columns, row, strict=True)))
                entry, _, _, key = w.entry(url)
            except (ValueError, SitemapError) as exc:
                err = _fail(exc, where, line)
                return ("error", err.message, line, err.field, err.hint)
            chunk.append(entry.encode())
            hashes.append(hash(key))
            count += 1
            line += 1
        out._do_write(b"".join(chunk))
    out._do_write(w._footer.encode())
    out._do_close()
    if out.raw_bytes > w.max_bytes:
        return ("too-big",)
    return ("ok", count, out.raw_bytes, out.stored_bytes, w.hash_run(hashes))


class _WorkerDied(Exception):
    """A shard writer process ended without a result (killed, out of memory, a crash)."""


#: Results that may wait for an earlier shard to be adopted (each holds a hash run).
_AHEAD: Final = 4


def _write_parallel(
    w: Sink,
    fast: _Fast,
    columns: list[str],
    path: str,
    where: str,
    body_start: int,
    progress: Progress | None,
) -> bool:
    """Write whole shards in two forked processes; ``False`` if this input does not suit.

    Used for one big, plain input file into a fresh writer with count-bound shards:
    then shard k holds exactly lines k*max_urls+1 ..., as the sequential path would
    write them, so the output is byte-identical to it. Each worker has a pipe of its
    own and one job at a time: a worker that dies is seen (end of its pipe) and the
    input is written by the sequential path instead; nothing waits for ever.
    """
    global _RANGE_CTX
    writer: Any = w
    if not (writer.fresh and (os.cpu_count() or 1) >= 2 and "fork" in mp.get_all_start_methods()):
        return False
    forking = mp.get_context("fork")
    cancel = forking.Event()
    _RANGE_CTX = (writer, fast, columns, path, where, cancel)  # inherited by the fork
    workers: list[tuple[Any, Connection]] = []
    jobs: list[tuple[int, int, int, int, str]] = []
    ranges = _iter_ranges(path, body_start, writer.max_urls)
    planned: deque[tuple[int, int, int]] = deque()
    exhausted = False
    busy: dict[Connection, int] = {}
    idle: list[Connection] = []
    results: dict[int, tuple[Any, ...]] = {}
    adopted = done = 0

    def plan() -> None:
        """Find the next range (reads the file up to its end)."""
        nonlocal exhausted
        found = next(ranges, None)
        if found is None:
            exhausted = True
        else:
            planned.append(found)

    def hand(conn: Connection) -> None:
        """Give ``conn`` the next range, if any."""
        if len(results) >= _AHEAD:
            idle.append(conn)
            return
        if not planned and not exhausted:
            plan()
        if not planned:
            return
        s, e, line = planned.popleft()
        k = len(jobs)
        job = (k, s, e, line + (body_start > 0), str(writer.stage_shard(k + 1)))
        jobs.append(job)
        conn.send(job)
        busy[conn] = k

    try:
        for _ in range(2):
            mine, theirs = forking.Pipe()
            proc = forking.Process(target=_range_worker, args=(theirs,), daemon=True)
            proc.start()
            theirs.close()
            workers.append((proc, mine))
        for _, conn in workers:
            hand(conn)
        if len(jobs) < 2:
            raise _NotPlain
        while busy:
            # while the workers are busy, the ranges ahead are found
            ready_now = wait(list(busy), None if exhausted else 0)
            if not ready_now:
                plan()
                continue
            for ready in ready_now:
                conn = cast(Connection, ready)
                k = busy.pop(conn)
                try:
                    res = conn.recv()
                except EOFError:
                    raise _WorkerDied from None
                if res[0] == "error":
                    raise InputError(res[1], where=where, line=res[2], field=res[3], hint=res[4])
                if res[0] != "ok":  # too-big, not-plain
                    raise _NotPlain
                results[k] = res
                hand(conn)
            # Shards are adopted in order as they come in, so that their hash runs go to
            # disk at once (10M URLs hold 80 MB of them).
            while adopted in results:
                res = results.pop(adopted)
                writer.adopt_shard(Path(jobs[adopted][4]), res[1], res[2], res[3], res[4])
                adopted += 1
                done += res[1]
                if progress:
                    progress(done)
            while idle and len(results) < _AHEAD:
                hand(idle.pop())
    except (_NotPlain, _WorkerDied):
        _end(workers, cancel)
        writer.drop_adopted()
        for job in jobs:
            Path(job[4]).unlink(missing_ok=True)
        return False
    finally:
        _end(workers, cancel)
        _RANGE_CTX = None
    return True


def _end(workers: list[tuple[Any, Connection]], cancel: Any) -> None:
    """End the shard writers: an idle one at once, a busy one at its next block."""
    cancel.set()
    for _, conn in workers:
        if not conn.closed:
            with contextlib.suppress(OSError):
                conn.send(None)
    deadline = time.monotonic() + 10
    for proc, conn in workers:
        # a result it is sending (a hash run: more than a pipe holds) is read and dropped
        while proc.is_alive() and not conn.closed and time.monotonic() < deadline:
            try:
                if conn.poll(0.05):
                    conn.recv()
            except (EOFError, OSError):
                break
        proc.join(timeout=max(0.0, deadline - time.monotonic()))
        if proc.is_alive():  # its own pipe and no shared lock: safe to kill
            proc.kill()
            proc.join()
        conn.close()


def _write_csv(
    w: Sink, stream: BinaryIO, where: str, progress: Progress | None, path: str | None = None
) -> None:
    blocks = _read_text_blocks(stream)
    try:
        first_line, first = next(blocks)
    except StopIteration:
        return
    except InputError as exc:
        exc.where = where
        raise
    head_line, _, body = first.partition("\n")
    columns = [c.strip().lower() for c in next(csv.reader([head_line]))]
    for c in columns:
        if c not in CSV_COLUMNS:
            raise InputError(
                f"unknown column {c!r}",
                where=where,
                line=1,
                field=c,
                hint="known columns: " + ", ".join(CSV_COLUMNS),
            )
    if "loc" not in columns:
        raise InputError(
            "the header has no 'loc' column",
            where=where,
            line=1,
            hint="the first line must name the columns, e.g. loc,lastmod",
        )
    if len(set(columns)) != len(columns):
        raise InputError("a column name repeats in the header", where=where, line=1)
    fast = _Fast(w, columns) if set(columns) <= set(_BASIC) and not w.incremental else None
    if fast is not None and path is not None and _is_big(stream):
        body_start = _body_start(path, head_line)
        if body_start is not None and _write_parallel(
            w, fast, columns, path, where, body_start, progress
        ):
            return
    done = 0
    it = itertools.chain([(first_line + 1, body)], blocks)
    if fast is None:
        _csv_rows(w, columns, (t for _, t in it), where, first_line + 1, done, progress)
        return
    for start, text in it:
        if '"' in text:
            # Quoted fields may hold newlines: from here on the csv module reads the
            # rest of the input row by row.
            rest = itertools.chain([text], (t for _, t in it))
            _csv_rows(w, columns, rest, where, start, done, progress)
            return
        result = fast.format(text.encode())
        if result is None:
            done = _csv_rows(w, columns, [text], where, start, done, progress)
            continue
        w._add_block(*result)
        done += result[1]
        if progress:
            progress(done)


def _body_start(path: str, head_line: str) -> int | None:
    """Byte offset of the line after the header, or ``None`` if the bytes disagree."""
    with open(path, "rb") as fh:
        head = fh.read(len(head_line.encode()) + 4)
    bom = 3 if head.startswith(codecs.BOM_UTF8) else 0
    expected = head_line.encode() + b"\n"
    if head[bom : bom + len(expected)] != expected:
        return None
    return bom + len(expected)


def _is_big(stream: BinaryIO) -> bool:
    """Worth forking formatter processes for: a regular file of more than 16 MiB."""
    try:
        st = os.fstat(stream.fileno())
    except (OSError, io.UnsupportedOperation, AttributeError):
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size > _PARALLEL_MIN


def _csv_rows(
    w: Sink,
    columns: list[str],
    texts: Iterable[str],
    where: str,
    start: int,
    done: int,
    progress: Progress | None,
) -> int:
    lines = (ln for t in texts for ln in io.StringIO(t))
    reader = csv.reader(lines, strict=True)
    ncol = len(columns)
    rows = iter(reader)
    while True:
        try:
            row = next(rows)
        except StopIteration:
            break
        except csv.Error as exc:
            raise InputError(
                f"malformed CSV: {exc}",
                where=where,
                line=start + reader.line_num - 1,
                hint="check the quoting of this row (a quote opened and not closed?)",
            ) from None
        line = start + reader.line_num - 1
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if len(row) != ncol:
            raise InputError(
                f"row has {len(row)} fields, the header names {ncol}",
                where=where,
                line=line,
                hint="quote values that contain commas",
            )
        rec = dict(zip(columns, row, strict=True))
        _add(w, lambda rec=rec: _csv_url(w, rec), where, line, rec.get("content_hash"))  # type: ignore[misc]
        done += 1
        if progress and not done % 10_000:
            progress(done)
    return done


def _write_txt(
    w: Sink, stream: BinaryIO, where: str, progress: Progress | None, path: str | None = None
) -> None:
    fast = _Fast(w, ["loc"])
    if w.incremental:
        fast.format = lambda data: None  # type: ignore[method-assign]  # every URL via add()
    if path is not None and _is_big(stream) and not w.incremental:
        with open(path, "rb") as fh:
            start = 3 if fh.read(3) == codecs.BOM_UTF8 else 0
        if _write_parallel(w, fast, ["loc"], path, where, start, progress):
            return
    done = 0
    try:
        for start, text in _read_text_blocks(stream):
            result = fast.format(text.encode())
            if result is not None:
                w._add_block(*result)
                done += result[1]
            else:
                for i, raw in enumerate(text.split("\n")[:-1]):
                    loc = raw.strip(XML_SPACE)
                    if loc:
                        _add(w, lambda loc=loc: Url(w.resolve(loc)), where, start + i)  # type: ignore[misc]
                        done += 1
            if progress:
                progress(done)
    except InputError as exc:
        exc.where = exc.where or where
        raise


def _write_jsonl(w: Sink, stream: BinaryIO, where: str, progress: Progress | None) -> int:
    skipped = 0
    for n, raw in enumerate(io.TextIOWrapper(stream, encoding="utf-8-sig"), 1):
        text = raw.strip()
        if not text:
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"invalid JSON: {exc.msg}", where=where, line=n, column=exc.colno
            ) from None
        except UnicodeDecodeError as exc:
            raise InputError(
                f"input is not valid UTF-8: {exc.reason}", where=where, line=n
            ) from None
        if not isinstance(obj, dict):
            raise InputError("each line must be a JSON object", where=where, line=n)
        if obj.get("kind", "url") != "url":
            skipped += 1
            continue
        loc = obj.get("loc")
        if isinstance(loc, str):
            obj["loc"] = w.resolve(loc)
        digest = obj.pop("content_hash", None)
        if digest is not None and not isinstance(digest, str):
            raise InputError(
                "content_hash must be a string", where=where, line=n, field="content_hash"
            )
        _add(w, lambda obj=obj: Url.from_record(obj), where, n, digest)  # type: ignore[misc]
        if progress and not n % 10_000:
            progress(n)
    return skipped


def _write_xml(w: Sink, stream: BinaryIO, where: str, progress: Progress | None) -> list[str]:
    """Add a sitemap's URLs; return the child sitemap locs if it is an index."""
    from ..core.model import SitemapRef
    from ..core.parse import SitemapParser  # type: ignore[import-not-found, unused-ignore]

    parser = SitemapParser(source=where, strict=True, base_url=w.base_url)
    children: list[str] = []
    done = 0

    def take(records: list[Url | SitemapRef]) -> None:
        nonlocal done
        for r in records:
            if isinstance(r, SitemapRef):
                children.append(r.loc)
                continue
            try:
                w.add(r)
            except SitemapError as exc:
                exc.where = where
                exc.field = exc.field or "loc"
                raise
            done += 1
        if progress:
            progress(done)

    try:
        while chunk := stream.read(1 << 20):
            take(parser.feed(chunk))
        take(parser.close())
    except ParseError as exc:
        raise InputError(
            exc.message, where=exc.where or where, line=exc.line, column=exc.column, hint=exc.hint
        ) from None
    return children


def _local_child(index: str, loc: str) -> str | None:
    """The file beside a local index that a child sitemap's URL names, if it exists."""
    name = urlsplit(loc).path.rsplit("/", 1)[-1]
    if not name or name in (".", ".."):
        return None
    path = Path(index).parent / name
    return str(path) if path.is_file() else None


def write_inputs(
    writer: Sink, inputs: Iterable[str], *, progress: Progress | None = None
) -> list[str]:
    """Push every input into ``writer`` in order; return notes worth telling the user."""
    inputs = list(inputs)
    sole = len(inputs) == 1 and inputs[0] != "-"
    notes: list[str] = []
    # a local index brings in the child files beside it, each read once, in its order
    queue = deque(inputs)
    seen: set[Path] = set()
    while queue:
        name = queue.popleft()
        if name != "-":
            real = Path(name).resolve()
            if real in seen:
                continue
            seen.add(real)
        where = "<stdin>" if name == "-" else name
        try:
            stream = open_input(name)
        except OSError as exc:
            raise InputError(f"cannot open input: {exc.strerror}", where=where) from None
        with stream:
            buffered: Any = (
                stream if isinstance(stream, io.BufferedReader) else io.BufferedReader(stream)
            )
            kind = detect_format(name, buffered.peek(4096)[:4096])
            if kind == "csv":
                _write_csv(writer, buffered, where, progress, name if sole else None)
            elif kind == "txt":
                _write_txt(writer, buffered, where, progress, name if sole else None)
            elif kind == "jsonl":
                skipped = _write_jsonl(writer, buffered, where, progress)
                if skipped:
                    notes.append(f"{where}: {skipped} records of another kind than 'url' skipped")
            else:
                children = _write_xml(writer, buffered, where, progress)
                found = [None if name == "-" else _local_child(name, c) for c in children]
                queue.extendleft(reversed([f for f in found if f is not None]))
                missing = [c for c, f in zip(children, found, strict=True) if f is None]
                if missing:
                    notes.append(
                        f"{where}: a sitemap index; {len(missing)} of its {len(children)} child "
                        f"sitemaps are not files beside it and were not read, e.g. {missing[0]} "
                        "(give the child files as inputs)"
                    )
    return notes
