"""io: CSV inputs: a header naming the columns (:data:`CSV_COLUMNS`), then one URL a row.

Files as people have them are taken: the delimiter is sniffed from the header (``,``,
``;`` or tab), a byte-order mark is skipped, ``url``, ``URL`` or ``Address`` (spreadsheet
and crawler exports) name the loc column when there is no ``loc``, and columns that are
not sitemap fields (``title``, ``category``) are ignored with one note naming them
(``strict_columns`` refuses them instead). ``read --format csv`` output is read back.

Blocks of plain rows (only loc, lastmod, changefreq, priority; no quotes, or every field
quoted and none holding a quote, comma or line break) take the block fast path
(``core.serialize.BlockFormatter``); any block that does not is read row by row by the csv
module, which gives byte-identical output and exact error positions.
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
from collections.abc import Callable, Iterable
from typing import Final

from ...core.model import Url
from ...core.serialize import BASIC_COLUMNS, BlockFormatter
from ...errors import InputError
from .record import CSV_COLUMNS, add, csv_url
from .sink import Input, PlainFile, Progress, Sink
from .text import read_text_blocks

__all__ = ["LOC_ALIASES", "looks_like_header", "write_csv"]

#: Header names taken for ``loc`` when there is no ``loc`` column (compared in lower case).
LOC_ALIASES: Final = ("url", "address")
_DELIMITERS: Final = (",", ";", "\t")
_PLURAL: Final = {",": "commas", ";": "semicolons", "\t": "tabs"}
#: A row's columns: the field each cell goes to, ``None`` for an ignored column.
Columns = list[str | None]


def looks_like_header(line: bytes) -> bool:
    """Whether the first line of an input names CSV columns, one of them the loc.

    >>> looks_like_header(b"Address;Title"), looks_like_header(b"https://example.com/")
    (True, False)
    """
    text = line.decode("utf-8", "replace")
    return any(
        d in text and _find_loc([c.strip().lower() for c in _split(text, d)]) is not None
        for d in _DELIMITERS
    )


def _split(line: str, delimiter: str) -> list[str]:
    try:
        return next(csv.reader([line], delimiter=delimiter))
    except (csv.Error, StopIteration):
        return [line]


def _find_loc(names: list[str]) -> int | None:
    for wanted in ("loc", *LOC_ALIASES):
        if wanted in names:
            return names.index(wanted)
    return None


def write_csv(w: Sink, src: Input) -> str | None:
    """Add the URLs of a CSV input; return a note naming the columns it ignored."""
    where, progress, path = src.where, src.progress, src.whole
    blocks = read_text_blocks(src.stream)
    try:
        first_line, first = next(blocks)
    except StopIteration:
        return None
    except InputError as exc:
        exc.where = where
        raise
    head_line, _, body = first.partition("\n")
    delimiter, columns, ignored = _columns(head_line.rstrip("\r"), where, src.strict_columns)
    note = None
    if ignored:
        note = f"{where}: columns ignored (not sitemap fields): " + ", ".join(map(repr, ignored))
    plain = (
        src.fast_path
        and delimiter == ","
        and all(c is not None and c in BASIC_COLUMNS for c in columns)
    )
    names = [c for c in columns if c is not None]
    fast = BlockFormatter(w.base_url, names, txt=w.format == "txt", csv=True) if plain else None
    if fast is not None and path is not None:
        body_start = _body_start(path, head_line)
        if body_start is not None and w.add_plain_file(
            PlainFile(path, where, body_start, fast, _row_of(w, names)), progress=progress
        ):
            return note
    rows = _Rows(w, columns, delimiter, where, progress)
    it = itertools.chain([(first_line + 1, body)], blocks)
    if fast is None:
        rows.add((t for _, t in it), first_line + 1)
        return note
    for start, text in it:
        result = fast.format(text.encode())
        if result is None:
            if '"' in text:
                # Quoted fields may hold newlines: from here on the csv module reads the
                # rest of the input row by row.
                rows.add(itertools.chain([text], (t for _, t in it)), start)
                return note
            rows.add([text], start)
            continue
        w.add_block(result)
        rows.done += result.entries
        if progress:
            progress(rows.done)
    return note


#: Columns `read --format csv` adds to those of a CSV input: the record's kind (rows of
#: another kind than "url" are skipped) and the sitemap it came from (ignored).
_READ_COLUMNS = ("kind", "source")


def _columns(head_line: str, where: str, strict: bool) -> tuple[str, Columns, list[str]]:
    """The delimiter, the field of each column (``None``: ignored) and the ignored names."""
    delimiter, names = ",", _split(head_line, ",")
    if _find_loc([c.strip().lower() for c in names]) is None:
        for d in _DELIMITERS[1:]:
            split = _split(head_line, d)
            if _find_loc([c.strip().lower() for c in split]) is not None:
                delimiter, names = d, split
                break
    lower = [c.strip().lower() for c in names]
    at = _find_loc(lower)
    if at is None:
        raise InputError(
            "the header has no 'loc' column",
            where=where,
            line=1,
            hint="the first line must name the columns, e.g. loc,lastmod "
            "(url and Address are taken for loc too)",
        )
    columns: Columns = []
    ignored: list[str] = []
    for i, (name, c) in enumerate(zip(names, lower, strict=True)):
        if i == at:
            columns.append("loc")
        elif (c in CSV_COLUMNS and c != "loc") or c in _READ_COLUMNS:
            columns.append(c)
        else:
            if strict:
                raise _unknown(name, where)
            columns.append(None)
            ignored.append(name.strip())
    known = [c for c in columns if c is not None]
    if len(set(known)) != len(known):
        raise InputError("a column name repeats in the header", where=where, line=1)
    return delimiter, columns, ignored


def _unknown(name: str, where: str) -> InputError:
    import difflib  # only for this message: a plain write starts without it

    near = difflib.get_close_matches(name.strip().lower(), CSV_COLUMNS, n=1)
    hint = f"did you mean {near[0]!r}? " if near else ""
    return InputError(
        f"unknown column {name.strip()!r}",
        where=where,
        line=1,
        field=name.strip(),
        hint=hint + "known columns: " + ", ".join(CSV_COLUMNS) + " (without --strict-columns "
        "other columns are ignored)",
    )


def _row_of(w: Sink, columns: list[str]) -> Callable[[str], Url]:
    """The record of one unquoted CSV line (the forked path's row path)."""
    ncol = len(columns)

    def row(raw: str) -> Url:
        cells = raw.split(",")
        if len(cells) != ncol:
            raise InputError(
                f"row has {len(cells)} fields, the header names {ncol}",
                hint="quote values that contain commas",
            )
        return csv_url(w, dict(zip(columns, cells, strict=True)))

    return row


def _body_start(path: str, head_line: str) -> int | None:
    """Byte offset of the line after the header, or ``None`` if the bytes disagree."""
    with open(path, "rb") as fh:
        head = fh.read(len(head_line.encode()) + 4)
    bom = 3 if head.startswith(codecs.BOM_UTF8) else 0
    expected = head_line.encode() + b"\n"
    if head[bom : bom + len(expected)] != expected:
        return None
    return bom + len(expected)


class _Rows:
    """The row-by-row reader: the csv module, exact positions in errors."""

    def __init__(
        self, w: Sink, columns: Columns, delimiter: str, where: str, progress: Progress | None
    ) -> None:
        self.w = w
        self.columns = columns
        self.delimiter = delimiter
        self.where = where
        self.progress = progress
        self.done = 0

    def add(self, texts: Iterable[str], start: int) -> None:
        """Add the rows of ``texts``, whose first line is line ``start`` of the input."""
        w, where, columns = self.w, self.where, self.columns
        lines = (ln for t in texts for ln in io.StringIO(t))
        reader = csv.reader(lines, strict=True, delimiter=self.delimiter)
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
                    hint="quote values that contain " + _PLURAL[self.delimiter],
                )
            rec = {c: v for c, v in zip(columns, row, strict=True) if c is not None}
            if rec.get("kind", "url") not in ("url", ""):
                continue  # `read --format csv` lists index entries too: not pages
            add(w, lambda rec=rec: csv_url(w, rec), where, line, rec.get("content_hash"))  # type: ignore[misc]
            self.done += 1
            if self.progress and not self.done % 10_000:
                self.progress(self.done)
