"""io: text inputs, one URL a line, read in blocks of whole lines (UTF-8).

A block whose lines are all plain takes the block fast path
(``core.serialize.BlockFormatter``); any other is read line by line, which gives
byte-identical output and exact error positions.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from typing import BinaryIO, Final

from ...core.model import Url
from ...core.serialize import BlockFormatter
from ...core.urls import XML_SPACE
from ...errors import InputError
from .record import add
from .sink import Input, PlainFile, Sink

__all__ = ["BLOCK", "read_text_blocks", "write_txt"]

#: Bytes read at a time (blocks hold whole lines, so a little more or less).
BLOCK: Final = 1 << 19


def read_text_blocks(stream: BinaryIO) -> Iterator[tuple[int, str]]:
    """(first line number, text of whole lines) in blocks of about 4 MiB, UTF-8 decoded."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    rest = ""
    line = 1
    while True:
        raw = stream.read(BLOCK)
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


def write_txt(w: Sink, src: Input) -> None:
    """Add the URLs of a text input."""
    where, progress, path, fast_path = src.where, src.progress, src.whole, src.fast_path
    fast = BlockFormatter(w.base_url, ["loc"], txt=w.format == "txt")
    if path is not None and fast_path:  # an incremental writer stages it in forked processes
        with open(path, "rb") as fh:
            start = 3 if fh.read(3) == codecs.BOM_UTF8 else 0
        plain = PlainFile(path, where, start, fast, lambda raw: w.resolve(raw.strip(XML_SPACE)))
        if w.add_plain_file(plain, progress=progress):
            return
    done = 0
    try:
        for start, text in read_text_blocks(src.stream):
            result = fast.format(text.encode()) if fast_path else None
            if result is not None:
                w.add_block(result)
                done += result.entries
            else:
                for i, raw in enumerate(text.split("\n")[:-1]):
                    loc = raw.strip(XML_SPACE)
                    if loc:
                        add(w, lambda loc=loc: Url(w.resolve(loc)), where, start + i)  # type: ignore[misc]
                        done += 1
            if progress:
                progress(done)
    except InputError as exc:
        exc.where = exc.where or where
        raise
