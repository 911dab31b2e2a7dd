"""core.parse: XML bodies through libxml2: well-formedness, and entries placed and dropped. Pure.

:class:`Tree` feeds lxml's hardened push parser in bounded steps and hands each finished entry
element to the :class:`Entries` reader of the document's kind (one per kind, see
``parser.READERS``). :class:`Entries` keeps memory flat: an entry that sits where it belongs (a
direct child of the container) has its earlier siblings dropped from the tree, and stray or
misplaced elements among them are reported (SM107). What a person reads through in a
well-formed document is read here too: an entry inside an unclosed entry, several locs in
one entry (:meth:`Entries.nested`, :meth:`Entries.split_locs`), entries that reset the
namespace.

The strict parser runs with ``recover=False``: libxml2's recovery mode silently mangles values
(``?a=1&b=2`` becomes ``?a=1=2``; after its first error it drops even ``&amp;``). A fatal error
is reported once (SM001, SM004); then the rest of the document, from the end of the last entry
read, goes to the recovering path (:mod:`.recovery`), which repairs the bytes before libxml2's
recovering parser sees them. The tree keeps the bytes since the last entry end tag for it
(bounded by the byte budget: libxml2 may stop at an error without saying so until the end,
so no part of them can be dropped).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Sequence
from typing import Final, Literal

from lxml import etree

from ..hardening import HARDENED
from ..namespace import IMAGE_NS, NEWS_NS, VIDEO_NS, XHTML_NS
from .document import Document, Kind, Reader
from .recovery import Recovery, start_tag

__all__ = [
    "EXTENSIONS",
    "EXTENSION_KEYS",
    "SPLIT",
    "Entries",
    "Events",
    "Tree",
    "foreign",
    "ns_key",
    "pull_parser",
    "q",
    "shell",
    "split",
    "tag_of",
]

Events = Iterator[tuple[str, etree._Element]]

_XML_STEP: Final = 65_536  # bytes per lxml feed: bounds the tree built between two drains
_FATAL: Final = 3  # libxml2 XML_ERR_FATAL
_NS_DOMAIN: Final = 3  # libxml2 XML_FROM_NAMESPACE
_FIRST: Final = 512
_DECL: Final = re.compile(rb"<\?xml[^>]*\?>")
#: Repairs held for their findings; beyond them, only counted.
_HELD: Final = 1_000
_STOPPED: Final = "; records before this point were read"
_RECOVERED: Final = "; the rest was read in recovery mode"
#: Marks an entry whose values were read in parts (several locs, a nested entry): what is
#: left of it when it ends is read only if it holds a loc.
SPLIT: Final = "{urn:sitemapkit:split}done"

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


def _names(tags: Sequence[str]) -> bytes:
    return b"|".join(re.escape(split(t)[1].encode()) for t in dict.fromkeys(tags))


def _end_pattern(entries: Entries) -> re.Pattern[bytes]:
    """Where an entry ends: its end tag, or an empty-element tag."""
    names = _names(entries.tags)
    prefix = rb"(?:[A-Za-z_][\w.-]*:)?"
    return re.compile(
        rb"</" + prefix + rb"(?:" + names + rb")[ \t\r\n]*>"
        rb"|<" + prefix + rb"(?:" + names + rb")(?:[ \t\r\n][^<>]*)?/>"
    )


def _root_start(entries: Entries) -> re.Pattern[bytes]:
    """The root element's start tag."""
    root = entries.root
    assert root is not None
    return re.compile(
        rb"<(?:[A-Za-z_][\w.-]*:)?" + _names([tag_of(root)]) + rb"(?=[ \t\r\n>/])[^>]*>"
    )


def shell(like: etree._Element, at: etree._Element) -> etree._Element:
    """A new, empty element with the tag of ``like`` at the line of ``at``: the part of an
    entry read on its own."""
    el = copy.copy(like)  # not Element(tag): lxml refuses some namespaces libxml2 read
    el.clear()
    el.sourceline = at.sourceline  # type: ignore[misc]  # writable in lxml, not in its stubs
    return el


def pull_parser(
    events: tuple[Literal["start", "end"]], tag: str | Sequence[str] | None
) -> etree.XMLPullParser:
    """lxml's push parser, hardened: no DTD, no entity expansion, no network, default
    size and depth limits, no recovery (see the module docstring); ``tag``: the entries."""
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

    def __init__(
        self,
        doc: Document,
        tag: str,
        core_ns: str = "",
        *,
        root: etree._Element | None = None,
        bare: bool = False,
    ) -> None:
        self.doc = doc
        self.tag = tag
        self.core_ns = core_ns
        #: The root element as the prolog saw it (None: the prolog is broken).
        self.root = root
        #: The entry tags: with ``bare``, entries that reset the namespace (``<url
        #: xmlns="">``, unprefixed children of a prefixed root) are entries too.
        local = split(tag)[1]
        self.tags: tuple[str, ...] = (tag, local) if bare and tag != local else (tag,)
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
        dropped from the tree, reporting stray elements among them), or inside an entry
        that was not closed before it (see :meth:`nested`)."""
        if parent is not self.container:
            if self.container is None and parent is not None and self.is_container(parent):
                self.container = parent
            elif parent is not None and parent.tag in self.tags and self.nested(el, parent):
                self.doc.place(self.line(el))
                return True
            else:
                self.misplaced(el)
                return False
        assert parent is not None
        prev = el.getprevious()
        if prev is not None:
            if prev.getprevious() is None and prev.tag in self.tags:
                del prev
                del parent[0]
            else:
                del prev
                self.purge(el, parent)
        self.doc.place(self.line(el))
        return True

    def nested(self, el: etree._Element, outer: etree._Element) -> bool:
        """An entry inside an entry, as an unclosed ``<url>`` before the next one leaves
        it: the values of ``outer`` before ``el`` are an entry of their own, read first;
        ``el`` is taken out of ``outer``. False when ``outer`` is not where entries go."""
        up = outer.getparent()
        if up is None:
            return False
        if up is not self.container:
            if self.container is not None or not self.is_container(up):
                return False
            self.container = up
        local = split(self.tag)[1]
        self.add(
            "SM107",
            f"<{local}> inside <{local}>: the first one is not closed where the next one "
            "starts; each was read as an entry",
            line=self.line(el),
            lost=False,
        )
        at = outer.index(el)
        if at:
            group = shell(outer, outer)
            for child in outer[:at]:
                group.append(child)
            self.doc.place(self.line(outer))
            self.entry(group)
        outer.set(SPLIT, "")
        outer.remove(el)
        return True

    def split_locs(self, el: etree._Element, locs: frozenset[str]) -> list[etree._Element] | None:
        """An entry holding several locs as one entry per loc (a value belongs to the loc
        before it, those before the first loc to the first); None for one loc or none."""
        at = [i for i, child in enumerate(el) if child.tag in locs]
        if len(at) < 2:
            return None
        local = split(self.tag)[1]
        self.add(
            "SM103",
            f"<{local}> holds {len(at)} <loc>; each was read as an entry, with the values "
            "that follow it",
            line=self.line(el[at[1]]),
            lost=False,
        )
        self.doc.entries += len(at) - 1
        children = list(el)
        template = shell(el, el)
        groups = []
        for start, end in zip([0, *at[1:]], [*at[1:], len(children)], strict=True):
            group = shell(template, children[start])
            for child in children[start:end]:
                group.append(child)
            groups.append(group)
        return groups

    def purge(self, el: etree._Element, parent: etree._Element) -> None:
        """Drop the elements before ``el``, reporting the strays among them."""
        tags = self.tags
        while True:
            first = parent[0]
            if first is el:
                return
            if self.strays and first.tag not in tags:
                self.stray(first)
            del first
            del parent[0]

    def misplaced(self, el: etree._Element) -> None:
        parent = el.getparent()
        if parent is not None and split(tag_of(parent))[1] == "loc":
            self.doc.entries -= 1  # <loc><url>URL</url></loc>: not an entry; the loc's
            return  # entry reads the URL inside
        local = split(self.tag)[1]
        if self.strays:
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
        if ns == self.core_ns or not ns:
            entry = local in ("url", "sitemap")
            hint = (
                "an index lists <sitemap> entries, a sitemap lists <url> entries"
                if entry
                else "remove it"
            )
            self.add(
                "SM107",
                f"Unexpected <{local}> in <{container}>; {hint}",
                line=line,
                lost=entry,  # an entry of the other kind is dropped; anything else is noise
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
            tags = self.tags
            for child in container:
                if child.tag not in tags:
                    self.stray(child)


class Tree(Reader):
    """An XML body read by libxml2, entry by entry; after a fatal error, the rest is read
    on the recovering path (:mod:`.recovery`)."""

    def __init__(self, doc: Document, entries: Entries) -> None:
        self._doc = doc
        self.entries = entries
        self._parser: etree.XMLPullParser | None = pull_parser(("end",), entries.tags)
        self._recovery: Recovery | None = None
        #: The bytes since the end of the last entry read (what the recovering path would
        #: read again), and the line and column where they start; None: no recovery.
        self._kept: bytearray | None = bytearray() if entries.root is not None else None
        self._kept_line = 1
        self._kept_col = 1
        self._restarted = False  # the kept bytes no longer start at the document's start
        self._first = b""  # the document's first bytes, for its XML declaration
        self._ends = _end_pattern(entries)
        self._error: tuple[int, int] = (0, 0)
        self._ended = 0  # entries ended since the kept bytes start
        self._repairs: list[tuple[str, int, int]] = []
        self._more = 0

    @property
    def done(self) -> bool:
        """The strict parser stopped (a fatal error, or the end of the document)."""
        return self._parser is None

    def feed(self, data: bytes) -> None:
        if self._recovery is not None:
            self._recovery.feed(data)
            return
        parser = self._parser
        if parser is None:
            return
        if len(self._first) < _FIRST:
            self._first += data[: _FIRST - len(self._first)]
        for i in range(0, len(data), _XML_STEP):
            step = data[i : i + _XML_STEP]
            if self._kept is not None:
                self._kept += step
            try:
                parser.feed(step)
            except etree.XMLSyntaxError as exc:
                self._failed(parser, exc, data[i + _XML_STEP :])
                return
            # lxml ignores undeclared entities when resolve_entities=False, but libxml2 has
            # stopped: its log is the only place that says so.
            if _fatal_error(parser) is not None:
                self._failed(parser, None, data[i + _XML_STEP :])
                return
            ended = self._read(parser)
            if ended and self._kept is not None:
                self._trim()

    def _read(self, parser: etree.XMLPullParser) -> int:
        """Hand the finished entries to the reader; count them (see :meth:`_resume`)."""
        events = list(parser.read_events())
        if events:
            self._ended += len(events)
            self.entries.read(iter(events))
        return len(events)

    def _head(self) -> bytes | None:
        """What goes before the kept bytes on the recovering path: the XML declaration (its
        encoding) and the root's start tag; None for UTF-16 (the repairs work on bytes of
        an ASCII-compatible encoding)."""
        first = self._first
        root = self.entries.root
        if root is None or first[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in first[:4]:
            return None
        m = _DECL.match(first)
        decl = b"" if m is None else m.group().replace(b"\n", b" ").replace(b"\r", b" ")
        return decl + start_tag(root)

    def _trim(self) -> None:
        """Drop the kept bytes up to the end of the last entry read (its end tags are
        counted: libxml2 may not have read all the bytes it was given)."""
        kept = self._kept
        assert kept is not None
        cut = n = 0
        if self._ended:
            for n, m in enumerate(self._ends.finditer(kept), 1):
                cut = m.end()
                if n == self._ended:
                    break
        if n:
            self._ended -= n
            self._drop(kept, cut)

    def _drop(self, kept: bytearray, cut: int) -> None:
        breaks = kept.count(b"\n", 0, cut)
        if breaks:
            self._kept_line += breaks
            self._kept_col = cut - kept.rfind(b"\n", 0, cut)
        else:
            self._kept_col += cut
        del kept[:cut]
        self._restarted = True

    def close(self) -> None:
        if self._recovery is not None:
            self._finish_recovery()
            return
        parser = self._parser
        if parser is None:
            return
        root: etree._Element | None = None
        error: etree.XMLSyntaxError | None = None
        try:
            root = parser.close()
        except etree.XMLSyntaxError as exc:
            error = exc
        if _fatal_error(parser) is not None:
            self._failed(parser, error, b"")
            if self._recovery is not None:
                self._finish_recovery()
            return
        self._read(parser)
        if error is not None:
            # Only namespace errors (an undeclared prefix) remain: libxml2 read everything.
            for entry in parser.feed_error_log:
                if entry.level >= 2:
                    if not self._doc.prefix_reported:
                        self._report(entry.message, entry.type_name, entry.line, entry.column)
                    break
        self._parser = None
        self.entries.finish(root)

    def _failed(
        self, parser: etree.XMLPullParser, exc: etree.XMLSyntaxError | None, rest: bytes
    ) -> None:
        """A fatal well-formedness error: report it, then read the rest on the recovering
        path (from the end of the last entry read, so that no record comes twice)."""
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
        events = list(parser.read_events())
        kept = self._kept
        # the recovering parser has the same limits: past one it would stop there too
        if "ENCODING" in type_name or "depth" in message or self.entries.root is None:
            kept = self._kept = None
        if kept is not None:
            at = self._offset(kept, line, column)
            # libxml2 places a mismatch after the end tag it could not take
            at = at - 1 if "MISMATCH" in type_name else at
            # libxml2 may read on past the error when it closes: not those entries
            before = sum(1 for _ in self._ends.finditer(kept, 0, at))
            del events[max(0, before - self._ended) :]
        self._ended += len(events)
        self.entries.read(iter(events))
        start = self._resume()
        if start is None:
            self._report(message, type_name, line, column, tail=_STOPPED)
            return
        self._report(message, type_name, line, column, tail=_RECOVERED)
        self._error = (line, column)
        body, head = start
        line, column = self._kept_line, self._kept_col
        entries = self.entries
        entries.container = None  # the recovering parser builds a tree of its own
        recovery = self._recovery = Recovery(
            entries.tags, entries.read, self._repaired, line=line, column=column
        )
        pad = column - 1 - (len(head) if line == 1 else 0)
        recovery.feed(head + b"\n" * (line - 1) + b" " * max(pad, 0), raw=True)
        recovery.feed(body + rest)

    def _resume(self) -> tuple[bytes, bytes] | None:
        """Where the recovering path starts: the kept bytes after the end of the last entry
        read, and the head to put in front of them; None: it cannot."""
        kept = self._kept
        head = self._head()
        if kept is None or head is None:
            return None
        self._trim()
        kept = self._kept
        assert kept is not None
        self._kept = None
        if not self._restarted:
            m = _root_start(self.entries).search(kept)
            if m is None:
                return None
            self._drop(kept, m.end())
        return bytes(kept), head

    def _offset(self, kept: bytearray, line: int, column: int) -> int:
        """Where in the kept bytes libxml2's ``line`` and ``column`` (characters) are."""
        at = 0
        for _ in range(line - self._kept_line):
            at = kept.find(b"\n", at) + 1
            if at == 0:
                return len(kept)
        end = kept.find(b"\n", at)
        text = kept[at : len(kept) if end < 0 else end]
        skip = column - 1 - (self._kept_col - 1 if line == self._kept_line else 0)
        chars = text.decode("utf-8", "replace")[: max(skip, 0)]
        return min(at + len(chars.encode("utf-8", "replace")), len(kept))

    def _repaired(self, what: str, line: int, column: int) -> None:
        """A repair on the recovering path, unless it is the error already reported; held
        until the end (the repair runs ahead of the records by as much as a chunk holds,
        and the findings must not depend on the chunks)."""
        if (line, column) > self._error:
            if len(self._repairs) < _HELD:
                self._repairs.append((what, line, column))
            else:
                self._more += 1

    def _report_repairs(self) -> None:
        for what, line, column in self._repairs:
            self._add_repair(what, line, column)
        if self._more:  # beyond the cap: counted, not placed
            self._add_repair(f"{self._more:,} more repairs past the first {_HELD:,}", None, None)
        self._repairs = []

    def _add_repair(self, what: str, line: int | None, column: int | None) -> None:
        doc = self._doc
        self._doc.findings.add(
            "SM004",
            f"The document is not well-formed XML: {what} (recovered); escape & as &amp; "
            "and < as &lt;",
            line=None if line is None else line + doc.line_off,
            column=None if column is None else column + (doc.col_off if line == 1 else 0),
            lost=False,
        )

    def _finish_recovery(self) -> None:
        recovery = self._recovery
        assert recovery is not None
        recovery.close()
        self._recovery = None
        self.entries.finish(recovery.root)
        self._report_repairs()

    def _report(
        self, message: str, type_name: str, line: int, column: int, *, tail: str = ""
    ) -> None:
        doc = self._doc
        message = message.strip().rstrip(".")
        if column and line == 1:
            column += doc.col_off
        at_line = line + doc.line_off if line else None
        at_column = column or None
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
        elif message.startswith("Premature end of data"):
            rule = "SM004"  # libxml2 says so only at the end of the bytes
            text = (
                f"The document is not well-formed XML: {message}{tail}. It ends before "
                "its elements are closed, as a file cut off by a write or a transfer that "
                "stopped early: publish it whole (write to a temporary name, then rename)"
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
