"""core.parse: the parser shell, :class:`SitemapParser`, and its front doors. Pure.

The shell drives one document through its stages: the compression (:mod:`.compression`),
the byte budget, the prolog (:mod:`.prolog`), then the one reader of the document's kind: a
text sitemap (:mod:`.text`), or an XML body read by libxml2 (:mod:`.tree`) through the
entry reader of its root in :data:`READERS`, with the scanner (:mod:`.scanner`) in front of
a plain ``<urlset>``. The readers share only a :class:`~.document.Document`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Final, TypedDict, Unpack

from lxml import etree

from ...errors import LimitError, SitemapError
from .. import limits
from ..finding import Finding
from .charset import Transcoded, Utf8Repair, utf16_codec
from .compression import Compression
from .document import Document, Kind, Reader, Record
from .entry import SitemapEntries, UrlEntries
from .feed import AtomEntries, RssItems
from .findings import Findings
from .prolog import Opening, Prolog, kind_of, xml_encoding
from .scanner import Scanner
from .settings import ParseSettings, Purpose
from .text import Text
from .tree import Entries, Tree, split, tag_of

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ENTRIES",
    "DEFAULT_MAX_FINDINGS",
    "READERS",
    "ParseKeywords",
    "ParseSettings",
    "SitemapParser",
    "iter_parse",
    "parse_bytes",
]

#: The protocol's 50 MiB (SM006) plus 1 MiB of slack, so that a slightly oversized file is
#: still read (and reported) rather than refused.
DEFAULT_MAX_BYTES: Final = limits.MAX_BYTES + 1_048_576
DEFAULT_MAX_ENTRIES: Final = 10_000_000
#: Findings listed per rule and document (a 27 MB document of 500,000 bad entries held
#: 1.5 million findings, 213 MB); the others are counted in one last finding.
DEFAULT_MAX_FINDINGS: Final = 1_000

#: The entry reader of each kind of XML document, built from its root element and namespace.
READERS: Final[dict[Kind, Callable[[Document, etree._Element, str], Entries]]] = {
    "urlset": UrlEntries,
    "sitemapindex": SitemapEntries,
    "rss": RssItems,
    "atom": AtomEntries,
}
#: Bytes of a chunk read at a time (see SitemapParser.feed).
_PIECE: Final = 1 << 20
#: The entry tag of a document whose prolog is broken: the XML parser reports the damage.
_NO_ENTRY: Final = "{urn:sitemapkit:none}none"
_KIND_NAMES: Final = {
    "urlset": "sitemap",
    "sitemapindex": "sitemap index",
    "rss": "RSS feed",
    "atom": "Atom feed",
    "text": "text sitemap",
}


class SitemapParser:
    """An incremental, hardened reader for one sitemap document.

    Feed the bytes as they arrive (compressed or not); each call returns the records
    completed so far, in document order. ``close()`` returns the rest and runs the
    end-of-document checks. Problems are appended to ``findings``.

    ``source`` names the document in findings and errors; ``base_url`` (the sitemap's own
    URL) resolves relative locations, with a warning. ``kind`` becomes ``"urlset"``,
    ``"sitemapindex"``, ``"rss"``, ``"atom"`` or ``"text"`` once the content shows it.
    ``bytes_in`` counts decompressed bytes, ``entries`` the entry elements (``<url>``,
    ``<sitemap>``, ``<item>``, ``<entry>``, text lines holding a URL) read, kept or not.
    ``max_findings`` lists at most that many findings per rule (0: all); the rest are
    counted in :attr:`unlisted` and, with ``summarize``, in one last finding of their rule.
    ``fast=False`` builds every record through the model's checks (the same records and
    findings, slower; tests compare both ways). ``purpose`` says whose severities the
    findings carry: ``"read"`` (an error means an entry or value was dropped or the
    document was not read whole; a value kept although off the specification is a
    warning) or ``"validate"`` (the catalogue's, spec/RULES.md). Strict mode always uses
    the catalogue's.

    Raises :class:`~sitemapkit.errors.LimitError` when a budget is exceeded and
    :class:`~sitemapkit.errors.ParseError` when there is nothing to read (an HTML page, an
    unknown root element, ZIP data), or in strict mode at the first error finding. Any
    other exception is a bug.

    >>> p = SitemapParser(source="sitemap.xml")
    >>> recs = p.feed(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    ...               b'<url><loc>https://example.com/</loc></url></urlset>')
    >>> [u.loc for u in recs + p.close()], p.kind
    (['https://example.com/'], 'urlset')
    >>> [str(f) for f in p.findings]  # doctest: +ELLIPSIS
    ['sitemap.xml:1: SM010 warning: The document has no XML declaration; ...']
    """

    def __init__(
        self,
        *,
        source: str | None = None,
        base_url: str | None = None,
        strict: bool = False,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_findings: int = DEFAULT_MAX_FINDINGS,
        summarize: bool = True,
        fast: bool = True,
        purpose: Purpose = "read",
    ) -> None:
        #: The settings as given, read (never copied) by the shell and its readers.
        self.settings = settings = ParseSettings(
            source, base_url, strict, max_bytes, max_entries, max_findings, summarize, fast, purpose
        )
        self._findings = Findings(settings)
        #: The findings so far, in the order they were made.
        self.findings: list[Finding] = self._findings.items
        self._doc = Document(self._findings, settings)
        self.bytes_in = 0
        self._compression = Compression(self._findings)
        self._prolog = Prolog(self._doc)
        self._reader: Reader | None = None  # the body's, once the prolog has shown the format
        self._scanner: Scanner | None = None
        self._closed = False
        self._error: SitemapError | None = None

    @property
    def source(self) -> str | None:
        """The name of the document in findings and errors."""
        return self.settings.source

    @property
    def base_url(self) -> str | None:
        """The sitemap's own URL, which relative locations resolve against."""
        return self.settings.base_url

    # -- what the document showed ---------------------------------------------------------

    @property
    def kind(self) -> Kind | None:
        """The document's kind, once known."""
        return self._doc.kind

    @property
    def entries(self) -> int:
        """Entry elements (or text lines holding a URL) read, kept or not."""
        return self._doc.entries

    @property
    def unlisted(self) -> dict[str, int]:
        """Findings per rule beyond ``max_findings``, not in :attr:`findings`."""
        return self._findings.unlisted

    @property
    def scanned_all(self) -> bool:
        """True when the scanner read every entry of the document (all plain): nothing but
        the prolog, the root and its end went to libxml2."""
        return self._scanner is not None and self._scanner.scanned_all

    @property
    def scanned_padded(self) -> bool:
        """True when a value the scanner read has white space around it (SM109)."""
        return self._scanner is not None and self._scanner.scanned_padded

    @property
    def scanned_extensions(self) -> bool:
        """True when the scanner read extension elements (images) too."""
        return self._scanner is not None and self._scanner.scanned_extensions

    # -- public ---------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> list[Record]:
        """Parse the next chunk of the document; return the records it completed."""
        self._check_open()
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise TypeError(f"feed() takes bytes, not {type(chunk).__name__}")
        # a big chunk is read a piece at a time: each stage copies what it is given
        # (decoded, repaired), and the document's budget stops the read after a piece
        view = memoryview(chunk)
        pieces = (
            [chunk]
            if len(view) <= _PIECE
            else (view[at : at + _PIECE] for at in range(0, len(view), _PIECE))
        )
        try:
            for piece in pieces:
                for data in self._compression.feed(bytes(piece)):
                    self._plain(data)
        except SitemapError as exc:
            self._error = exc
            raise
        return self._take()

    def close(self) -> list[Record]:
        """Finish the document: return the last records and run end-of-document checks."""
        self._check_open()
        self._closed = True
        try:
            self._finish()
        except SitemapError as exc:
            self._error = exc
            raise
        finally:
            if self.settings.summarize:
                self._findings.summarize()
        return self._take()

    def _take(self) -> list[Record]:
        doc = self._doc
        out, doc.out = doc.out, []
        return out

    def _check_open(self) -> None:
        if self._error is not None:
            raise self._error
        if self._closed:
            raise ValueError("the parser is closed; create a new SitemapParser per document")

    # -- stages ---------------------------------------------------------------------------

    def _plain(self, data: bytes) -> None:
        """The next decompressed bytes: counted against the budgets, then read."""
        self.bytes_in += len(data)
        max_bytes = self.settings.max_bytes
        if self.bytes_in > max_bytes:
            raise LimitError(
                f"The document is larger than {max_bytes:,} bytes after decompression; "
                "raise max_bytes to read it",
                where=self.settings.source,
            )
        # sitemaps.org: "no larger than 50MB (52,428,800 bytes)" uncompressed.
        if self.bytes_in > limits.MAX_BYTES and self.bytes_in - len(data) <= limits.MAX_BYTES:
            self._findings.add(
                "SM006",
                f"The document is larger than {limits.MAX_BYTES:,} bytes "
                "uncompressed, the protocol's limit; split it into several sitemaps",
                lost=False,  # read on, up to max_bytes
            )
        if self._reader is not None:
            self._reader.feed(data)
        else:
            self._open(self._prolog.feed(data))

    def _open(self, opening: Opening | None) -> None:
        """Start the body's reader, once the prolog has shown the format."""
        if opening is None:
            return
        doc = self._doc
        if not opening.xml:
            doc.kind = "text"
            self._reader = Text(doc)
            if opening.codec is not None:
                self._reader = Transcoded(self._reader, doc, opening.codec)
        elif opening.root is None:
            self._reader = Tree(doc, Entries(doc, _NO_ENTRY))
        else:
            root = opening.root
            kind = kind_of(doc, root)
            entries = READERS[kind](doc, root, split(tag_of(root))[0])
            doc.kind = kind  # after the reader's own findings, which strict mode may raise
            tree = Tree(doc, entries)
            self._reader = tree
            if kind == "urlset" and doc.settings.fast and Scanner.fits(root, opening.head):
                self._reader = self._scanner = Scanner(doc, tree, root)
        if opening.xml and _utf8(opening.head):
            self._reader = Utf8Repair(self._reader, doc)  # libxml2 would stop at one
        self._reader.feed(opening.data)

    def _finish(self) -> None:
        for data in self._compression.close():
            self._plain(data)
        if self._reader is None:
            self._open(self._prolog.feed(b"", final=True))
        if self._compression.truncated:
            return  # the data ends early: the XML parser would only report that again
        if self._reader is None:
            self._open(self._prolog.close(self.bytes_in > 0))
            if self._reader is None:
                return
        self._reader.close()
        doc = self._doc
        if doc.kind is not None and doc.entries == 0 and not doc.damaged:
            self._findings.add("SM106", f"The {_KIND_NAMES[doc.kind]} lists no entries", lost=False)


def _utf8(head: bytes) -> bool:
    """Whether an XML document that starts with ``head`` is in UTF-8 (XML 1.0 §4.3.3: the
    declaration names another encoding, or a byte order mark says UTF-16)."""
    if utf16_codec(head) is not None:
        return False
    enc = xml_encoding(head)
    return enc is None or enc.lower() in (b"utf-8", b"utf8")


class ParseKeywords(TypedDict, total=False):
    """The settings :func:`parse_bytes` and :func:`iter_parse` pass on to
    :class:`SitemapParser` (same names, same defaults; a test keeps them the same)."""

    source: str | None
    base_url: str | None
    strict: bool
    max_bytes: int
    max_entries: int
    purpose: Purpose


def parse_bytes(
    data: bytes, **settings: Unpack[ParseKeywords]
) -> tuple[list[Record], list[Finding], Kind | None]:
    """Parse a whole (small) document: ``(records, findings, kind)``.

    The keywords are :class:`SitemapParser`'s (see :class:`ParseKeywords`).

    >>> recs, findings, kind = parse_bytes(b"https://example.com/a\\nnot a url\\n")
    >>> [u.loc for u in recs], [f.rule for f in findings], kind
    (['https://example.com/a'], ['SM009'], 'text')
    """
    parser = SitemapParser(**settings)
    records = parser.feed(data)
    records += parser.close()
    return records, parser.findings, parser.kind


def iter_parse(
    chunks: Iterable[bytes],
    *,
    on_finding: Callable[[Finding], object] | None = None,
    **settings: Unpack[ParseKeywords],
) -> Iterator[Record]:
    """Stream the records of a document given as chunks of bytes.

    The other keywords are :class:`SitemapParser`'s (see :class:`ParseKeywords`).

    Each finding is passed to ``on_finding`` as soon as it is made (before the records
    of the same chunk are yielded, and also when an error ends the iteration). Use
    :class:`SitemapParser` directly to learn the document's ``kind``.

    >>> seen = []
    >>> [u.loc for u in iter_parse([b"https://example.com/\\n", b"oops\\n"],
    ...                            on_finding=seen.append)]
    ['https://example.com/']
    >>> [f.rule for f in seen]
    ['SM009']
    """
    parser = SitemapParser(**settings)
    reported = 0

    def report() -> None:
        nonlocal reported
        if on_finding is not None:
            while reported < len(parser.findings):
                reported += 1
                on_finding(parser.findings[reported - 1])

    try:
        for chunk in chunks:
            records = parser.feed(chunk)
            report()
            yield from records
        records = parser.close()
        report()
        yield from records
    finally:
        report()
