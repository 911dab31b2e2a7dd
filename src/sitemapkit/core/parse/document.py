"""core.parse: what the readers of one document share. Pure.

One :class:`Document` per parsed document: where findings and records go, the entry budget,
the line offset of the bytes the XML parser never saw, and the format once it is known.
Everything else belongs to the reader that needs it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Literal

from lxml import etree

from ...errors import LimitError
from .. import limits
from ..model import SitemapRef, Url
from .findings import Findings
from .settings import ParseSettings

__all__ = ["Document", "Kind", "Reader", "Record"]

Record = Url | SitemapRef
Kind = Literal["urlset", "sitemapindex", "rss", "atom", "text"]


class Reader(ABC):
    """The body of a document in one format: the parser shell feeds it the plain bytes from
    the start of the document once the format is known, then closes it (unless the data
    ended early). Records go to ``Document.out``, findings to ``Document.findings``."""

    @abstractmethod
    def feed(self, data: bytes) -> None:
        """Read the next bytes."""

    @abstractmethod
    def close(self) -> None:
        """The document ends here: read what is held back, run the end-of-document checks."""


class Document:
    """The state the readers of one document share."""

    __slots__ = (
        "col_off",
        "damaged",
        "entries",
        "findings",
        "kind",
        "line_off",
        "out",
        "placed",
        "prefix_reported",
        "settings",
    )

    def __init__(self, findings: Findings, settings: ParseSettings) -> None:
        self.findings = findings
        self.settings = settings
        self.kind: Kind | None = None
        #: Records completed and not yet returned, in document order.
        self.out: list[Record] = []
        #: Entry elements (or text lines holding a URL) read, kept or not; and those that
        #: sat where entries belong.
        self.entries = 0
        self.placed = 0
        #: Lines and columns of the white space before the document, which the XML parser
        #: never sees: added to its positions.
        self.line_off = 0
        self.col_off = 0
        #: A fatal error stopped reading (corrupt gzip, broken XML).
        self.damaged = False
        #: An undeclared namespace prefix was reported on an element (libxml2's own report of
        #: it at the end would say the same again).
        self.prefix_reported = False

    def line(self, el: etree._Element) -> int | None:
        """The document line of an element."""
        n = el.sourceline
        return None if n is None else n + self.line_off

    def judge(
        self,
        rule: str,
        message: str,
        el: etree._Element,
        loc: str | None,
        *,
        lost: bool | None = None,
    ) -> None:
        """A finding of ``rule`` about element ``el``: at its line, named by its path
        (``lost``: as :meth:`Findings.add` takes it)."""
        self.findings.add(rule, message, line=self.line(el), loc=loc, at=el, lost=lost)

    # -- the entry budget -----------------------------------------------------------------
    #
    # Written once: an entry is counted (``max_entries``, a LimitError), then placed when it
    # sits where entries belong (the protocol's 50,000, a finding). The hot loops count in
    # batches: ``quiet()`` entries can pass before either check can fire, ``settle()`` adds
    # them, and only the entry at a budget event goes through ``count()`` and ``place()``.

    def count(self, line: int | None) -> None:
        """Count one entry against ``max_entries``."""
        self.entries += 1
        settings = self.settings
        if self.entries > settings.max_entries:
            raise LimitError(
                f"The document has more than {settings.max_entries:,} entries; raise max_entries "
                "to read it",
                where=settings.source,
                line=line,
            )

    def place(self, line: int | None) -> None:
        """Count one entry that sits where it belongs against the protocol's 50,000."""
        self.placed += 1
        if self.placed != limits.MAX_URLS + 1:
            return
        # sitemaps.org: "no more than 50,000 URLs"; an index: "up to 50,000 Sitemaps".
        if self.kind == "sitemapindex":
            self.findings.add(
                "SM503",
                f"The index lists more than {limits.MAX_SITEMAPS:,} sitemaps; "
                "split it into several indexes",
                line=line,
                lost=False,  # every entry is read
            )
        elif self.kind in ("urlset", "text"):
            self.findings.add(
                "SM110",
                f"The sitemap has more than {limits.MAX_URLS:,} URLs; split it "
                "into several sitemaps under an index",
                line=line,
                lost=False,  # every entry is read
            )

    def quiet(self) -> int:
        """How many entries can be counted and placed before a budget check can fire."""
        room = self.settings.max_entries - self.entries
        placed = self.placed
        if placed <= limits.MAX_URLS:
            room = min(room, limits.MAX_URLS - placed)
        return room

    def settle(self, n: int) -> None:
        """Add ``n`` entries counted and placed in a batch (at most ``quiet()``)."""
        self.entries += n
        self.placed += n
