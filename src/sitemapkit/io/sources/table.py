"""io: CSV inputs: a header naming the columns (:data:`CSV_COLUMNS`), then one URL a row.

Blocks of plain rows (only loc, lastmod, changefreq, priority, no quotes) take the block
fast path (``core.serialize.BlockFormatter``); any block that does not is read row by
row by the csv module, which gives byte-identical output and exact error positions.
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
from collections.abc import Callable, Iterable

from ...core.model import Url
from ...core.serialize import BASIC_COLUMNS, BlockFormatter
from ...errors import InputError
from .record import CSV_COLUMNS, add, csv_url
from .sink import Input, PlainFile, Progress, Sink
from .text import read_text_blocks

__all__ = ["write_csv"]


def write_csv(w: Sink, src: Input) -> None:
    """Add the URLs of a CSV input."""
    where, progress, path = src.where, src.progress, src.whole
    blocks = read_text_blocks(src.stream)
    try:
        first_line, first = next(blocks)
    except StopIteration:
        return
    except InputError as exc:
        exc.where = where
        raise
    head_line, _, body = first.partition("\n")
    columns = _columns(head_line, where)
    plain = src.fast_path and set(columns) <= set(BASIC_COLUMNS) and not w.incremental
    fast = BlockFormatter(w.base_url, columns, txt=w.format == "txt") if plain else None
    if fast is not None and path is not None:
        body_start = _body_start(path, head_line)
        if body_start is not None and w.add_plain_file(
            PlainFile(path, where, body_start, fast, _row_of(w, columns)), progress=progress
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
        w.add_block(result)
        done += result.entries
        if progress:
            progress(done)


#: Columns `read --format csv` adds to those of a CSV input: the record's kind (rows of
#: another kind than "url" are skipped) and the sitemap it came from (ignored).
_READ_COLUMNS = ("kind", "source")


def _columns(head_line: str, where: str) -> list[str]:
    columns = [c.strip().lower() for c in next(csv.reader([head_line]))]
    for c in columns:
        if c not in CSV_COLUMNS and c not in _READ_COLUMNS:
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
    return columns


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
        if rec.get("kind", "url") not in ("url", ""):
            continue  # `read --format csv` lists index entries too: not pages
        add(w, lambda rec=rec: csv_url(w, rec), where, line, rec.get("content_hash"))  # type: ignore[misc]
        done += 1
        if progress and not done % 10_000:
            progress(done)
    return done
