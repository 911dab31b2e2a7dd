"""core.parse: XML bodies through libxml2: well-formedness, and entries placed and dropped. Pure.

:class:`Tree` feeds lxml's hardened push parser in bounded steps and hands each finished entry
element to the :class:`Entries` reader of the document's kind (one per kind, see
``parser.READERS``). A fatal error is reported once (SM001, SM004) and ends the reading; the
records read before it stay. :class:`Entries` keeps memory flat: an entry that sits where it
belongs (a direct child of the container) has its earlier siblings dropped from the tree, and
stray or misplaced elements among them are reported (SM107).

lxml's push parser runs with ``recover=False`` in both modes. Its recovery mode silently
mangles values (``?a=1&b=2`` becomes ``?a=1=2``) and reports no errors through the feed
interface, so a reader that must not invent URLs stops at the first fatal error instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final, Literal

from lxml import etree

from ..hardening import HARDENED
from ..namespace import IMAGE_NS, NEWS_NS, VIDEO_NS, XHTML_NS
from .document import Document, Kind, Reader

__all__ = [
    "EXTENSIONS",
    "EXTENSION_KEYS",
    "Entries",
    "Events",
    "Tree",
    "foreign",
    "ns_key",
    "pull_parser",
    "q",
    "split",
    "tag_of",
]

Events = Iterator[tuple[str, etree._Element]]

_XML_STEP: Final = 65_536  # bytes per lxml feed: bounds the tree built between two drains
_FATAL: Final = 3  # libxml2 XML_ERR_FATAL
_NS_DOMAIN: Final = 3  # libxml2 XML_FROM_NAMESPACE

EXTENSIONS: Final = {IMAGE_NS: "image", VIDEO_NS: "video", NEWS_NS: "news", XHTML_NS: "link"}


def split(tag: str) -> tuple[str, str]:
    """``"{ns}local"`` → ``("ns", "local")``; a tag without namespace → ``("", tag)``."""
    if tag[:1] == "{":
        ns, _, local = tag[1:].partition("}")
        return ns, local
    return "", tag


def tag_of(el: etree._Element) -> str:
    """An element's tag; ``""`` for comments, entities and processing instructions."""
    tag = el.tag
    return tag if isinstance(tag, str) else ""


def q(ns: str, local: str) -> str:
    """The tag of ``local`` in namespace ``ns``."""
    return f"{{{ns}}}{local}" if ns else local


def ns_key(ns: str) -> str:
    """The namespace a near-miss URI meant: scheme case, https and a trailing slash ignored."""
    key = ns.strip().lower()
    if key.startswith("https://"):
        key = "http://" + key[8:]
    return key.rstrip("/")


EXTENSION_KEYS: Final = {ns_key(ns): ns for ns in EXTENSIONS}


def foreign(
    doc: Document, ns: str, line: int | None, loc: str | None, *, index: bool = False
) -> None:
    """Report elements of a namespace that is not read, once per namespace (SM107)."""
    if doc.findings.once(f"SM107:{ns}"):
        doc.findings.add(
            "SM107",
            f"Elements of the namespace {ns!r} are not read in an index; they were ignored"
            if index
            else f"Elements of the unknown namespace {ns!r} are not validated; they were ignored",
            line=line,
            loc=loc,
            severity="warning",  # foreign elements are allowed, only not read
        )


def pull_parser(events: tuple[Literal["start", "end"]], tag: str | None) -> etree.XMLPullParser:
    """lxml's push parser, hardened: no DTD, no entity expansion, no network, default
    size and depth limits, no recovery (see the module docstring)."""
    return etree.XMLPullParser(
        events=events,
        tag=tag,
        **HARDENED,
        recover=False,
        remove_comments=True,
        remove_pis=True,
    )


class Entries:
    """Reads the entry elements of one kind of XML document; this base places them.

    ``tag`` is the entry element's tag, ``core_ns`` the namespace of the kind's own
    elements; ``strays`` says whether other children of the container are reported.
    """

    kind: Kind | None = None
    strays = True

    def __init__(self, doc: Document, tag: str, core_ns: str = "") -> None:
        self.doc = doc
        self.tag = tag
        self.core_ns = core_ns
        self.add = doc.findings.add
        self.line = doc.line
        #: The element entries belong in, once the first entry shows it.
        self.container: etree._Element | None = None

    def read(self, events: Events) -> None:
        """Read the entry elements the XML parser finished."""
        count, line, adopt, entry = self.doc.count, self.line, self.adopt, self.entry
        for _event, el in events:
            count(line(el))
            if adopt(el, el.getparent()):
                entry(el)

    def entry(self, el: etree._Element) -> None:
        """Read one entry that sits where it belongs (a document of unknown kind has none)."""

    def container_of(self, root: etree._Element) -> etree._Element | None:
        """Where entries belong in a document without any."""
        return root

    def is_container(self, parent: etree._Element) -> bool:
        """Whether entries belong in ``parent`` (the first entry's parent)."""
        return parent.getparent() is None

    def adopt(self, el: etree._Element, parent: etree._Element | None) -> bool:
        """Place an entry: True if it sits where it belongs (its earlier siblings are
        dropped from the tree, reporting stray elements among them)."""
        if parent is not self.container:
            if self.container is None and parent is not None and self.is_container(parent):
                self.container = parent
            else:
                self.misplaced(el)
                return False
        assert parent is not None
        prev = el.getprevious()
        if prev is not None:
            if prev.getprevious() is None and prev.tag == self.tag:
                del prev
                del parent[0]
            else:
                del prev
                self.purge(el, parent)
        self.doc.place(self.line(el))
        return True

    def purge(self, el: etree._Element, parent: etree._Element) -> None:
        """Drop the elements before ``el``, reporting the strays among them."""
        tag = self.tag
        while True:
            first = parent[0]
            if first is el:
                return
            if self.strays and first.tag != tag:
                self.stray(first)
            del first
            del parent[0]

    def misplaced(self, el: etree._Element) -> None:
        local = split(self.tag)[1]
        if self.strays:
            parent = el.getparent()
            where = f"<{split(tag_of(parent))[1]}>" if parent is not None else "the document"
            self.add(
                "SM107",
                f"<{local}> inside {where} is ignored; entries must be "
                f"direct children of <{self.kind}>",
                line=self.line(el),
            )
        el.clear()

    def stray(self, el: etree._Element) -> None:
        """Report a child of the container that is not an entry."""
        tag = el.tag
        line = self.line(el)
        if not isinstance(tag, str):
            return
        ns, local = split(tag)
        container = "urlset" if self.kind == "urlset" else "sitemapindex"
        if ns == self.core_ns:
            hint = (
                "an index lists <sitemap> entries, a sitemap lists <url> entries"
                if local in ("url", "sitemap")
                else "remove it"
            )
            # an unknown element holds nothing a record could; a sitemap element is lost
            known = local in ("url", "sitemap", "loc", "lastmod", "changefreq", "priority")
            self.add(
                "SM107", f"Unexpected <{local}> in <{container}>; {hint}", line=line, lost=known
            )
        elif ns_key(ns) in EXTENSION_KEYS:
            self.add(
                "SM107",
                f"Extension element <{local}> directly under <{container}> is "
                "meaningless; put it inside an entry",
                line=line,
            )
        else:
            foreign(self.doc, ns, line, None)

    def finish(self, root: etree._Element | None) -> None:
        """The document ended: report the strays after the last entry."""
        container = self.container
        if container is None and root is not None:
            container = self.container_of(root)
        if container is not None and self.strays:
            for child in container:
                if child.tag != self.tag:
                    self.stray(child)


class Tree(Reader):
    """An XML body read by libxml2, entry by entry."""

    def __init__(self, doc: Document, entries: Entries) -> None:
        self._doc = doc
        self.entries = entries
        self._parser: etree.XMLPullParser | None = pull_parser(("end",), entries.tag)

    @property
    def done(self) -> bool:
        """Reading ended (a fatal error, or the end of the document)."""
        return self._parser is None

    def feed(self, data: bytes) -> None:
        parser = self._parser
        if parser is None:
            return
        for i in range(0, len(data), _XML_STEP):
            try:
                parser.feed(data[i : i + _XML_STEP])
            except etree.XMLSyntaxError as exc:
                self.entries.read(parser.read_events())
                self._failed(parser, exc)
                return
            self.entries.read(parser.read_events())
            # lxml ignores undeclared entities when resolve_entities=False, but libxml2 has
            # stopped: its log is the only place that says so.
            if _fatal_error(parser) is not None:
                self._failed(parser, None)
                return

    def close(self) -> None:
        parser = self._parser
        if parser is None:
            return
        root: etree._Element | None = None
        error: etree.XMLSyntaxError | None = None
        try:
            root = parser.close()
        except etree.XMLSyntaxError as exc:
            error = exc
        self.entries.read(parser.read_events())
        if _fatal_error(parser) is not None:
            self._failed(parser, error)
            return
        if error is not None:
            # Only namespace errors (an undeclared prefix) remain: libxml2 read everything.
            for entry in parser.feed_error_log:
                if entry.level >= 2:
                    if not self._doc.prefix_reported:
                        self._report(
                            entry.message, entry.type_name, entry.line, entry.column, stopped=False
                        )
                    break
        self._parser = None
        self.entries.finish(root)

    def _failed(self, parser: etree.XMLPullParser, exc: etree.XMLSyntaxError | None) -> None:
        """A fatal well-formedness error: report it and read nothing more."""
        self._parser = None
        self._doc.damaged = True
        entry = _fatal_error(parser)
        if entry is not None:
            message, type_name = entry.message, entry.type_name
            line, column = entry.line, entry.column
        else:
            assert exc is not None
            message, type_name = str(exc.msg), ""
            line, column = exc.position
        self._report(message, type_name, line, column, stopped=True)

    def _report(
        self, message: str, type_name: str, line: int, column: int, *, stopped: bool
    ) -> None:
        doc = self._doc
        message = message.strip().rstrip(".")
        if column and line == 1:
            column += doc.col_off
        at_line = line + doc.line_off if line else None
        at_column = column or None
        tail = "; records before this point were read" if stopped else ""
        if "ENCODING" in type_name:
            rule = "SM001"
            text = f"The document is not valid UTF-8: {message}{tail}"
        elif ("ENTITY" in type_name and "ENTITYREF" not in type_name) or (
            "amplification" in message
        ):
            rule = "SM004"
            text = (
                f"The document is not well-formed XML: {message}{tail}. "
                "Sitemaps need no entities other than &amp; &lt; &gt; &quot; &apos;"
            )
        else:
            rule = "SM004"
            text = (
                f"The document is not well-formed XML: {message}{tail}. "
                "Escape & as &amp; and < as &lt;, and close every tag"
            )
        doc.findings.add(rule, text, line=at_line, column=at_column)


def _fatal_error(parser: etree.XMLPullParser) -> etree._LogEntry | None:
    for entry in parser.feed_error_log:
        if entry.level >= _FATAL and entry.domain != _NS_DOMAIN:
            return entry
    return None
