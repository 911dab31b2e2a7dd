"""io: input sources for the writer: .txt, .csv, .jsonl, sitemaps (.xml, .xml.gz), stdin.

Each source pushes its records into a :class:`Sink` (a :class:`~sitemapkit.SitemapWriter`)
through its public methods only. Bad input raises :class:`~sitemapkit.InputError`
naming the file, the line and the field. CSV and text files take a fast path when a
block of lines holds only plain, already-canonical values (``core.serialize``'s
``BlockFormatter``); one big plain input file is offered to the writer whole, which
writes it shard by shard in forked processes (``sitemapkit.writer.parallel``).

One module per input format: :mod:`.table` (CSV), :mod:`.text`, :mod:`.jsonl`,
:mod:`.sitemap`, :mod:`.folder` (a built site folder); :mod:`.record` builds records from
rows, :mod:`.sink` is the seam.
"""

from __future__ import annotations

import dataclasses
import io
import os
import stat
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Final, cast

from ...errors import InputError
from ..files import open_input
from .jsonl import write_jsonl
from .record import CSV_COLUMNS, error_at
from .sink import Input, PlainFile, Progress, Sink
from .sitemap import write_xml
from .table import looks_like_header, write_csv
from .text import BLOCK, write_txt

if TYPE_CHECKING:
    from .folder import FolderOptions

__all__ = [
    "BLOCK",
    "CSV_COLUMNS",
    "PARALLEL_MIN",
    "Input",
    "PlainFile",
    "Progress",
    "Sink",
    "detect_format",
    "error_at",
    "write_inputs",
]

#: Inputs bigger than this are offered to the writer whole (forked, given 2+ cores).
PARALLEL_MIN: Final = 16 << 20


def detect_format(name: str, head: bytes) -> str:
    """``csv``, ``jsonl``, ``txt`` or ``xml`` from the file name, else from the content.

    (A folder is a built site: :func:`write_inputs` reads it with :mod:`.folder`.)
    """
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
    first = text.split(b"\n", 1)[0].rstrip(b"\r")
    if looks_like_header(first):
        return "csv"
    return "txt"


def _is_big(stream: BinaryIO, limit: int) -> bool:
    """Worth forking formatter processes for: a regular file of more than ``limit`` bytes."""
    try:
        st = os.fstat(stream.fileno())
    except (OSError, io.UnsupportedOperation, AttributeError):
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size > limit


def write_inputs(
    writer: Sink,
    inputs: Iterable[str],
    *,
    progress: Progress | None = None,
    parallel_min: int = PARALLEL_MIN,
    fast_path: bool = True,
    folder: FolderOptions | None = None,
    strict_columns: bool = False,
) -> list[str]:
    """Push every input into ``writer`` in order; return notes worth telling the user.

    A folder is a built site (:mod:`.folder`, read with ``folder``'s options; the writer's
    own folder is never read as pages). A sole input file bigger than ``parallel_min``
    bytes (any, to an incremental writer) is offered to the writer whole
    (:meth:`Sink.add_plain_file`); ``fast_path=False``
    reads every input row by row (the output is the same: tests compare the two).
    ``strict_columns`` refuses CSV columns that are not known instead of ignoring them.
    """
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
        if name != "-" and os.path.isdir(name):
            # the HTML reader and its pool of children, imported only for a folder
            from .folder import FolderOptions, write_folder

            options = folder or FolderOptions()
            if options.output is None:
                options = dataclasses.replace(options, output=getattr(writer, "directory", None))
            summary, more = write_folder(writer, name, options, progress=progress)
            notes.extend(more)
            notes.append(summary.note(where))
            continue
        try:
            stream = open_input(name)
        except OSError as exc:
            raise InputError(f"cannot open input: {exc.strerror}", where=where) from None
        with stream:
            buffered = (
                stream
                if isinstance(stream, io.BufferedReader)
                else io.BufferedReader(cast(io.RawIOBase, stream))
            )
            kind = detect_format(name, buffered.peek(4096)[:4096])
            # an incremental writer takes any size: its staging decides (and keeps its ranges)
            least = 0 if writer.incremental else parallel_min
            whole = name if sole and _is_big(buffered, least) else None
            src = Input(buffered, where, progress, whole, fast_path, strict_columns)
            if kind == "csv":
                note = write_csv(writer, src)
                if note:
                    notes.append(note)
            elif kind == "txt":
                write_txt(writer, src)
            elif kind == "jsonl":
                skipped = write_jsonl(writer, src)
                if skipped:
                    notes.append(f"{where}: {skipped} records of another kind than 'url' skipped")
            else:
                from ..target import local_child  # robots and rules: only for an index

                children = write_xml(writer, src)
                found = [None if name == "-" else local_child(name, c) for c in children]
                queue.extendleft(reversed([f for f in found if f is not None]))
                missing = [c for c, f in zip(children, found, strict=True) if f is None]
                if missing:
                    notes.append(
                        f"{where}: a sitemap index; {len(missing)} of its {len(children)} child "
                        f"sitemaps are not files beside it and were not read, e.g. {missing[0]} "
                        "(give the child files as inputs)"
                    )
    return notes
