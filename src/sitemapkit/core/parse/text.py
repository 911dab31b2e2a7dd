"""core.parse: text sitemaps, one URL per line. Pure.

sitemaps.org: "The text file must have one URL per line. The URLs cannot contain embedded
new lines. [...] The text file must use UTF-8 encoding." A line that is not a URL is
reported (SM009) and skipped; a path (``/a/b``) is resolved against the base URL (SM201, a
warning when reading); bytes that are not UTF-8 are percent-encoded (SM001); line breaks are
LF, CR LF or CR.
"""

from __future__ import annotations

import re
from typing import Final

from ..finding import clip
from ..model import InvalidValue, Url
from ..urls import resolve
from .canonical import fast_url
from .charset import percent_escaped
from .document import Document, Reader
from .value import loc_rule

__all__ = ["Text"]

_LINE_BREAK: Final = re.compile(rb"\r\n|\r|\n")
_URL: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
#: A relative line: a path from the root (``/a/b``), one token. Other text is not a URL.
_PATH: Final = re.compile(r"/[^\s]*")


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
            # The rule of robots.txt lines: the bytes as they are, percent-encoded (%E9).
            text = percent_escaped(stripped.decode("utf-8", "surrogateescape"))
            self._add(
                "SM001",
                f"Line is not valid UTF-8 ({exc.reason} at byte {exc.start}); text "
                f"sitemaps must be UTF-8. Read as {clip(text)!r}",
                line=line,
                lost=False,  # the URL is kept, its bytes as they were
            )
        if _URL.match(text) is None:
            resolved = self._relative(text, line)
            if resolved is None:
                return
            text = resolved
        doc = self._doc
        doc.count(line)
        doc.place(line)
        url = fast_url(text, None, None, None) if doc.settings.fast else None
        if url is None:
            try:
                url = Url(text)
            except InvalidValue as exc:
                self._add(
                    loc_rule(text),
                    f"Invalid URL: {exc.detail}. Line skipped",
                    line=line,
                    loc=text,
                    lost=True,
                )
                return
        doc.out.append(url)

    def _relative(self, text: str, line: int) -> str | None:
        """The absolute URL of a relative line (a path: ``/a/b``), resolved against the
        base URL; None for a line that is not a URL, or without a base URL (reported)."""
        base = self._doc.settings.base_url
        if _PATH.fullmatch(text) is None:
            self._add(
                "SM009",
                f"Line {clip(text)!r} is not a URL; a text sitemap holds one "
                "absolute URL per line and nothing else. Line skipped",
                line=line,
                lost=True,
            )
            return None
        if base is None:
            self._add(
                "SM201",
                f"Line {clip(text)!r} is relative and there is no base URL to resolve it; "
                "sitemaps must list absolute URLs. Line skipped",
                line=line,
                lost=True,
            )
            return None
        resolved = resolve(text, base)
        self._add(
            "SM201",
            f"Line {clip(text)!r} is relative; resolved to {clip(resolved)!r}. "
            "Sitemaps must list absolute URLs",
            line=line,
            loc=resolved,
            lost=False,
        )
        return resolved
