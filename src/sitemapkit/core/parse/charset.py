"""core.parse: a document's bytes on their way to its reader, in its character set. Pure.

sitemaps.org: "Your Sitemap must be UTF-8 encoded". Real files are not always: a Latin-1
byte in a UTF-8 file (a loc typed in an old editor), or a text sitemap saved as UTF-16 by
Notepad. Neither loses its URLs here:

* :class:`Utf8Repair` passes a UTF-8 XML document on with each byte that is not UTF-8
  written as ``%XX`` (``caf\\xe9`` becomes ``caf%E9``, the rule robots.txt lines follow too),
  one SM001 finding per byte: libxml2 would stop at the first one;
* :class:`Transcoded` decodes a text document in another encoding (UTF-16) to UTF-8.

Both read incrementally: a character split across two chunks (a UTF-8 sequence, a UTF-16
surrogate pair) is held back, at most three bytes, until the next chunk completes it, so
every split of the bytes gives the same records and findings. A chunk of ASCII, the common
case, costs one ``bytes.isascii()``.
"""

from __future__ import annotations

import codecs
import re
from typing import Final

from ..finding import clip
from .document import Document, Reader

__all__ = ["Transcoded", "Utf8Repair", "percent_escaped", "utf16_codec"]

#: How a document in UTF-16 starts, as libxml2 (and XML 1.0 Appendix F) knows it: a byte
#: order mark, or ``<?`` as 16-bit units without one.
_UTF16_STARTS: Final = (
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
    (b"<\x00?\x00", "utf-16-le"),
    (b"\x00<\x00?", "utf-16-be"),
)

#: What ``surrogateescape`` makes of a byte that is not UTF-8: U+DC80 to U+DCFF.
_ESCAPED: Final = re.compile("[\udc80-\udcff]")
#: Characters of the text before a bad byte that name its place in a finding.
_CONTEXT: Final = 40
_CONTEXT_START: Final = re.compile(r".*[\s<>]", re.S)


def utf16_codec(head: bytes) -> str | None:
    """The codec of a document in UTF-16 from its first four bytes, else None.

    >>> utf16_codec("<?xml".encode("utf-16-be")), utf16_codec(b"<?xml")
    ('utf-16-be', None)
    """
    for start, codec in _UTF16_STARTS:
        if head.startswith(start):
            return codec
    return None


def percent_escaped(text: str) -> str:
    """``text`` (decoded with ``surrogateescape``) with each byte that was not UTF-8
    written as ``%XX``.

    >>> percent_escaped(b"https://example.com/caf\\xe9".decode("utf-8", "surrogateescape"))
    'https://example.com/caf%E9'
    """
    return _ESCAPED.sub(lambda m: f"%{ord(m.group()) - 0xDC00:02X}", text)


def _complete(data: bytes) -> int:
    """Where an unfinished UTF-8 sequence at the end of ``data`` starts (``len(data)``
    when there is none): its lead byte wants more continuation bytes than follow it."""
    n = len(data)
    for back in range(1, min(3, n) + 1):
        byte = data[n - back]
        if byte < 0x80:
            return n
        if byte >= 0xC0:
            want = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return n - back if want > back else n
    return n


class Utf8Repair(Reader):
    """The bytes of a UTF-8 document, each byte that is not UTF-8 percent-encoded, on to
    ``inner``; each such byte is reported at its line and column."""

    __slots__ = ("_col", "_doc", "_held", "_inner", "_lines", "_tail")

    def __init__(self, inner: Reader, doc: Document) -> None:
        self._inner = inner
        self._doc = doc
        self._held = b""  # an unfinished sequence at the end of the last chunk
        #: Line breaks passed on, and the characters after the last of them.
        self._lines = 0
        self._col = doc.col_off
        #: The last characters checked (bad bytes as ``surrogateescape`` decodes them), to
        #: name the place of a bad byte at the start of a chunk.
        self._tail = ""

    def feed(self, data: bytes) -> None:
        if self._held:
            data, self._held = self._held + data, b""
        if data.isascii():
            self._advance_ascii(data)
            self._inner.feed(data)
            return
        end = _complete(data)
        data, self._held = data[:end], data[end:]
        self._check(data)

    def close(self) -> None:
        if self._held:  # the document ends inside a sequence: its bytes are bad ones
            data, self._held = self._held, b""
            self._check(data)
        self._inner.close()

    def _advance(self, text: str) -> None:
        """Count the position past ``text``."""
        breaks = text.count("\n")
        if breaks:
            self._lines += breaks
            self._col = len(text) - text.rfind("\n") - 1
        else:
            self._col += len(text)
        self._tail = (self._tail + text[-_CONTEXT:])[-_CONTEXT:]

    def _advance_ascii(self, data: bytes) -> None:
        """:meth:`_advance` for bytes of ASCII, without decoding them all."""
        breaks = data.count(b"\n")
        if breaks:
            self._lines += breaks
            self._col = len(data) - data.rfind(b"\n") - 1
        else:
            self._col += len(data)
        self._tail = (self._tail + data[-_CONTEXT:].decode("ascii"))[-_CONTEXT:]

    def _check(self, data: bytes) -> None:
        """Pass on ``data`` (whole characters or bad bytes), its bad bytes percent-encoded.
        The text before a bad byte goes first, so that the findings of the entries it
        completes come before the byte's, as when the bytes are split there."""
        text = data.decode("utf-8", "surrogateescape")
        if _ESCAPED.search(text) is None:
            self._advance(text)
            self._inner.feed(data)
            return
        findings = self._doc.findings
        done = 0
        escape = ""
        for m in _ESCAPED.finditer(text):
            if findings.full("SM001"):  # past the cap: the rest counted, not each reported
                rest = text[done:]
                findings.count("SM001", len(_ESCAPED.findall(rest)), lost=True)
                self._inner.feed((escape + percent_escaped(rest)).encode("utf-8"))
                self._advance(rest)
                return
            at = m.start()
            before = text[done:at]
            if escape or before:
                self._inner.feed((escape + before).encode("utf-8"))
            self._advance(before)
            byte = ord(m.group()) - 0xDC00
            self._report(byte)
            self._advance(m.group())
            escape = f"%{byte:02X}"
            done = at + 1
        self._inner.feed((escape + text[done:]).encode("utf-8"))
        self._advance(text[done:])

    def _report(self, byte: int) -> None:
        m = _CONTEXT_START.match(self._tail)
        after = percent_escaped(self._tail[m.end() if m is not None else 0 :])
        where = f" after {clip(after)!r}" if after else ""
        self._doc.findings.add(
            "SM001",
            f"The document is not valid UTF-8: byte 0x{byte:02X}{where} was read as "
            f"%{byte:02X}. Save the file as UTF-8",
            line=self._doc.line_off + 1 + self._lines,
            column=self._col + 1,
            # The document as served is not well-formed: what the byte meant is a guess.
            lost=True,
        )


class Transcoded(Reader):
    """A text document in ``codec`` (with its byte order mark), passed on to ``inner`` as
    UTF-8."""

    __slots__ = ("_decoder", "_doc", "_inner")

    def __init__(self, inner: Reader, doc: Document, codec: str) -> None:
        self._inner = inner
        self._doc = doc
        # surrogatepass: a lone surrogate reaches the text reader as bytes that are not
        # UTF-8, which it percent-encodes and reports, like any other.
        self._decoder = codecs.getincrementaldecoder(codec)("surrogatepass")

    def feed(self, data: bytes) -> None:
        text = self._decoder.decode(data)
        if text:
            self._inner.feed(text.encode("utf-8", "surrogatepass"))

    def close(self) -> None:
        try:
            text = self._decoder.decode(b"", final=True)
        except UnicodeDecodeError as exc:
            text = ""
            self._doc.findings.add(
                "SM001",
                f"The document ends inside a character ({exc.reason}); its last bytes were ignored",
                lost=True,
            )
        if text:
            self._inner.feed(text.encode("utf-8", "surrogatepass"))
        self._inner.close()
