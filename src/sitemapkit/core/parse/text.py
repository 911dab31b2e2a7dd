"""core.parse: text sitemaps, one URL per line. Pure.

sitemaps.org: "The text file must have one URL per line. The URLs cannot contain embedded
new lines. [...] The text file must use UTF-8 encoding." A line that is not a URL is
reported (SM009) and skipped; line breaks are LF, CR LF or CR.
"""

from __future__ import annotations

import re
from typing import Final

from ..finding import clip
from ..model import InvalidValue, Url
from .canonical import fast_url
from .document import Document, Reader
from .value import loc_rule

__all__ = ["Text"]

_LINE_BREAK: Final = re.compile(rb"\r\n|\r|\n")
_URL: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


class Text(Reader):
    """The body of a text sitemap."""

    def __init__(self, doc: Document) -> None:
        self._doc = doc
        self._add = doc.findings.add
        self._parts: list[bytes] = []
        self._line = doc.line_off  # lines before the one being read

    def feed(self, data: bytes) -> None:
        self._parts.append(data)
        if b"\n" not in data and b"\r" not in data:
            return
        buf = b"".join(self._parts)
        hold = b""
        if buf[-1:] == b"\r":  # maybe the first half of a CRLF: decide with the next chunk
            buf, hold = buf[:-1], b"\r"
        lines = _LINE_BREAK.split(buf)
        self._parts = [lines.pop() + hold]
        for raw in lines:
            self._line += 1
            self._read(raw)

    def close(self) -> None:
        last = b"".join(self._parts)
        self._parts = []
        self._line += 1
        self._read(last)

    def _read(self, raw: bytes) -> None:
        stripped = raw.strip()
        if not stripped:
            return
        line = self._line
        try:
            text = stripped.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._add(
                "SM001",
                f"Line is not valid UTF-8 ({exc.reason} at byte {exc.start}); "
                "text sitemaps must be UTF-8. Line skipped",
                line=line,
            )
            return
        if _URL.match(text) is None:
            self._add(
                "SM009",
                f"Line {clip(text)!r} is not a URL; a text sitemap holds one "
                "absolute URL per line and nothing else. Line skipped",
                line=line,
            )
            return
        doc = self._doc
        doc.count(line)
        doc.place(line)
        url = fast_url(text, None, None, None) if doc.settings.fast else None
        if url is None:
            try:
                url = Url(text)
            except InvalidValue as exc:
                self._add(
                    loc_rule(text), f"Invalid URL: {exc.detail}. Line skipped", line=line, loc=text
                )
                return
        doc.out.append(url)
