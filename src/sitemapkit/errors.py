"""The exception hierarchy of sitemapkit.

One root, split by blame. ``SitemapError`` and its subclasses mean "the input or
a peer misbehaved" and always carry a message a person can act on, plus the
position when one is known. Misuse of the API raises the builtin ``TypeError``
or ``ValueError`` instead. Any other exception escaping the public API is a bug.
"""

from __future__ import annotations

from typing import Any

from .core.finding import position

__all__ = [
    "FetchError",
    "InputError",
    "LimitError",
    "ParseError",
    "SitemapError",
    "UnsafeXMLError",
]


class SitemapError(Exception):
    """Root of every error sitemapkit raises on bad input or a failing peer.

    ``where`` is the file name or URL, ``line`` and ``column`` are 1-based when
    known, ``field`` names the input column or element, ``hint`` says how to fix it.
    """

    def __init__(
        self,
        message: str,
        *,
        where: str | None = None,
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        self.line = line
        self.column = column
        self.field = field
        self.hint = hint

    @property
    def position(self) -> str:
        """``FILE:LINE:COL[, field F]`` or ``""`` when nothing is known."""
        pos = position(self.where, self.line, self.column)
        if self.field:
            pos = f"{pos}, field {self.field}" if pos else f"field {self.field}"
        return pos

    def __str__(self) -> str:
        text = self.message
        if self.position:
            text += f" (at {self.position})"
        return text

    def __reduce__(self) -> tuple[Any, ...]:
        # An exception pickles its args only; the keyword fields travel too, so that an
        # error raised in a child process is raised again in the parent whole (io/child.py).
        return (_restore, (type(self), self.message, dict(vars(self))))


def _restore(cls: type[SitemapError], message: str, fields: dict[str, Any]) -> SitemapError:
    exc = cls.__new__(cls)
    Exception.__init__(exc, message)
    vars(exc).update(fields)
    return exc


class InputError(SitemapError):
    """An input record or option value is invalid (a CSV row, a JSONL object, a URL)."""


class ParseError(SitemapError):
    """A document could not be parsed as a sitemap."""


class UnsafeXMLError(ParseError):
    """A document uses XML features that are refused for safety (DTDs, entities)."""


class LimitError(SitemapError):
    """A budget was exceeded (size after decompression, entries, depth, redirects)."""


class FetchError(SitemapError):
    """A URL could not be fetched (network error, HTTP status, timeout)."""
