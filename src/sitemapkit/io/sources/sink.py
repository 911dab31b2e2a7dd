"""io: the seam between input sources and the writer, as public, typed protocols.

A source reads an input and pushes its records into a :class:`Sink`
(:class:`sitemapkit.SitemapWriter` is one): one URL at a time (:meth:`Sink.add`), a
block of ready entry lines (:meth:`Sink.add_block`, the fast path), or a whole plain
file the sink may write in forked processes (:meth:`Sink.add_plain_file`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO, Protocol

from ...core.model import Url
from ...core.serialize import BlockFormatter, EntryBlock

__all__ = ["Input", "PlainFile", "Progress", "Sink"]

#: Called with the number of records read so far.
Progress = Callable[[int], None]


@dataclass(frozen=True, slots=True)
class Input:
    """One input as its reader gets it: the bytes, its name in errors, how to read it.

    ``whole`` is the file's path when the whole file may be offered to the sink
    (:meth:`Sink.add_plain_file`); ``fast_path=False`` reads it row by row;
    ``strict_columns`` refuses the CSV columns that are not known (else they are ignored).
    """

    stream: BinaryIO
    where: str
    progress: Progress | None = None
    whole: str | None = None
    fast_path: bool = True
    strict_columns: bool = False


@dataclass(frozen=True, slots=True)
class PlainFile:
    """One input file of plain lines, described for a writer that cuts it into shards.

    Its body starts at byte ``body_start`` of ``path`` (after a BOM and a header);
    ``formatter`` makes the entry lines of a block of its lines, and ``row`` the record
    of one line the formatter does not take (raising ``ValueError`` or a
    :class:`~sitemapkit.SitemapError` for a bad one). ``where`` names it in errors.
    """

    path: str
    where: str
    body_start: int
    formatter: BlockFormatter
    row: Callable[[str], Url | str]


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

    def add_block(self, block: EntryBlock) -> None: ...

    def add_plain_file(self, source: PlainFile, *, progress: Progress | None = None) -> bool: ...
