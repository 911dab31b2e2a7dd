"""core.parse: the start of a document: its format, and the problems of its prolog. Pure.

Plain bytes come in until the format shows: a byte order mark and white space are skipped
(and reported), an HTML page is refused (SM005), anything that does not start with ``<`` is
a text sitemap, and XML is fed to a sniffing parser until its root element starts. Then the
prolog is checked (SM001, SM003, SM010, SM011) and an :class:`Opening` says how the body
starts; the root element decides its kind (:func:`kind_of`).
"""

from __future__ import annotations

import contextlib
import re
from typing import Final, NamedTuple

from lxml import etree

from ..finding import clip
from ..namespace import ATOM03_NS, ATOM_NS, RDF_NS, SITEMAP_NS
from .charset import utf16_codec
from .document import Document, Kind
from .tree import pull_parser, split, tag_of

__all__ = ["Opening", "Prolog", "kind_of", "xml_encoding", "xml_start"]

_SNIFF_STEP: Final = 4_096  # bytes per feed while looking for the root element
_BOM: Final = b"\xef\xbb\xbf"
_SPACE: Final = b" \t\r\n"
_HTML_START: Final = re.compile(rb"<!doctype\s+html|<html[\s>]", re.IGNORECASE)
_XML_DECL: Final = re.compile(
    rb"<\?xml\s+version\s*=\s*[\"'][^\"']*[\"']"
    rb"(?:\s+encoding\s*=\s*[\"']([A-Za-z][A-Za-z0-9._-]*)[\"'])?"
)
#: How far into a document an XML declaration or a sitemap root is looked for after text
#: a server printed before it (SM003).
_JUNK_LOOK: Final = 1 << 16
_DECL_START: Final = re.compile(rb"<\?xml[\s?]")
_TAG_NAME: Final = re.compile(rb"<([A-Za-z_][\w.:-]*)")
#: What may come before the root and holds "<name" that is no tag: comments, processing
#: instructions, CDATA and a DOCTYPE's internal subset.
_NOT_TAGS: Final = re.compile(
    rb"<!--.*?-->|<\?.*?\?>|<!\[CDATA\[.*?\]\]>|<!DOCTYPE[^\[>]*(?:\[.*?\])?[^>]*>", re.S
)
_ROOT_START: Final = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?(?:urlset|sitemapindex)[\s>/]")
#: What may come before the root element in a prolog without a declaration.
_PROLOG_MARKUP: Final = re.compile(
    rb"(?:\s+|<!--.*?-->|<\?(?!xml[\s?]).*?\?>|<!DOCTYPE(?:[^\[>]|\[.*?\])*>)*", re.S
)
_HTML: Final = "The document is an HTML page, not a sitemap; submit the sitemap's own URL"


class Opening(NamedTuple):
    """How the body of a document starts: as XML with its ``root`` element (``None`` when
    the prolog is broken: the XML reader reports it) and the ``head`` bytes read to find
    it, or as text; ``data`` is the body from its first byte."""

    xml: bool
    root: etree._Element | None
    head: bytes
    data: bytes
    #: The codec of a text document that is not UTF-8 (its reader gets it as UTF-8).
    codec: str | None = None


def xml_encoding(head: bytes) -> bytes | None:
    """The encoding the XML declaration at the start of ``head`` names, if any."""
    m = _XML_DECL.match(head)
    return m.group(1) if m is not None else None


def xml_start(data: bytes) -> int:
    """Where the XML document starts after text printed before it (a PHP notice, an HTML
    error page, a debug line), or 0: nothing but a byte order mark, white space or prolog
    markup precedes it. The document is an XML declaration or a ``<urlset>`` or
    ``<sitemapindex>`` root found within the first 64 KiB (SM003).

    >>> xml_start(b"Notice: x in a.php\\n<?xml version='1.0'?><urlset/>")
    19
    """
    at = 3 if data.startswith(_BOM) else 0
    window = data[at : at + _JUNK_LOOK]
    decl, root = _DECL_START.search(window), _ROOT_START.search(window)
    if decl is not None and (root is None or decl.start() < root.start()):
        start = decl.start()
        if not window[:start].strip(_SPACE):
            return 0  # white space alone: SM003 of its own
    elif root is not None:
        start = root.start()
        if _PROLOG_MARKUP.fullmatch(window, 0, start):
            return 0
    else:
        return 0
    return at + start


class Prolog:
    """Reads the bytes before the body: feed them until an :class:`Opening` comes back."""

    def __init__(self, doc: Document) -> None:
        self._doc = doc
        self._add = doc.findings.add
        self._pre = b""
        self._bom_checked = False
        self._ws = False  # white space came before the first markup
        self._junk_checked = False
        self._head: list[bytes] = []
        self._sniff: etree.XMLPullParser | None = None

    def feed(self, data: bytes, final: bool = False) -> Opening | None:
        """Read on; ``final``: no more bytes will come."""
        if self._sniff is not None:
            return self._feed_head(data)
        return self._feed_pre(data, final)

    def close(self, seen: bool) -> Opening | None:
        """The bytes ended in the prolog: an XML document opens with what was read, an
        empty one (``seen``: it had bytes, all white space) is reported (SM004)."""
        sniff = self._sniff
        if sniff is None:
            self._add(
                "SM004",
                "The document is empty; a sitemap holds at least its root element",
                line=self._doc.line_off + 1 if seen else None,
                lost=True,  # nothing to read
            )
            return None
        root = None
        with contextlib.suppress(etree.XMLSyntaxError):
            sniff.close()
        for _event, el in sniff.read_events():
            root = el
            break
        return self._open(root, b"")

    def _feed_pre(self, data: bytes, final: bool) -> Opening | None:
        buf = self._pre + data
        if not self._junk_checked:
            if len(buf) < _JUNK_LOOK and not final and not _starts_xml(buf):
                self._pre = buf
                return None
            self._junk_checked = True
            junk = xml_start(buf)
            if junk:  # a byte order mark before it is part of what the server printed
                self._report_junk(buf[:junk], decl=buf.startswith(b"<?xml", junk))
                buf = buf[junk:]
                self._bom_checked = True
        if not self._bom_checked:
            if len(buf) < 3 and _BOM.startswith(buf) and not final:
                self._pre = buf
                return None
            if utf16_codec(buf) is not None:
                return self._utf16(buf, final)
            self._bom_checked = True
            if buf.startswith(_BOM):
                buf = buf[3:]
                self._add(
                    "SM002",
                    "The document starts with a UTF-8 byte order mark; writers should not emit one",
                    line=1,
                    lost=False,
                )
        rest = buf.lstrip(_SPACE)
        if len(rest) < len(buf):
            self._skip_space(buf[: len(buf) - len(rest)])
        if not rest or (rest[:1] == b"<" and len(rest) < 16 and not final):
            self._pre = rest
            return None
        self._pre = b""
        if rest[:1] != b"<":
            return Opening(False, None, b"", rest)
        if _HTML_START.match(rest):
            self._add("SM005", _HTML, line=self._doc.line_off + 1, fatal=True, lost=True)
        return self._start_xml(rest)

    def _utf16(self, buf: bytes, final: bool) -> Opening | None:
        """A document in UTF-16 (``buf`` from its byte order mark, or its ``<?``): XML
        when its first character that is not white space is ``<`` (libxml2 decodes it),
        else a text sitemap (decoded on the way to its reader)."""
        markup = _utf16_markup(buf) if utf16_codec(buf[:2]) is not None else True
        if markup is None and not final and len(buf) < _SNIFF_STEP:
            self._pre = buf
            return None
        self._bom_checked = True
        self._pre = b""
        self._add(
            "SM001",
            "The document is UTF-16 encoded; sitemaps must be UTF-8. It was decoded",
            line=1,
            lost=False,
        )
        if markup is False:
            return Opening(False, None, b"", buf, "utf-16")
        return self._start_xml(buf)

    def _report_junk(self, junk: bytes, *, decl: bool) -> None:
        """SM003 for text printed before the XML; it is skipped, lines kept."""
        bom = junk.startswith(_BOM)
        quoted = clip(junk[3 if bom else 0 :].decode("utf-8", "replace").strip(), 60)
        quoted = f"a byte order mark, then {quoted!r}" if bom else repr(quoted)
        what = "the XML declaration" if decl else "the root element"
        self._add(
            "SM003",
            f"Text precedes {what}: {quoted}; the server code that prints it (a PHP "
            "notice, a warning, a debug line, an error page) must be fixed so that "
            "'<?xml' is the first byte of the file; the document after it was read",
            line=1,
            lost=True,  # not well-formed: the document as served could not be read whole
        )
        self._skip_space(junk)
        self._ws = False  # reported: the white space before the junk is part of it

    def _skip_space(self, space: bytes) -> None:
        doc = self._doc
        self._ws = True
        breaks = max(space.count(b"\n"), space.count(b"\r"))
        if breaks:
            doc.line_off += breaks
            doc.col_off = len(space) - max(space.rfind(b"\n"), space.rfind(b"\r")) - 1
        else:
            doc.col_off += len(space)

    def _start_xml(self, data: bytes) -> Opening | None:
        self._sniff = pull_parser(("start",), None)
        return self._feed_head(data)

    def _feed_head(self, data: bytes) -> Opening | None:
        sniff = self._sniff
        assert sniff is not None
        for i in range(0, len(data), _SNIFF_STEP):
            piece = data[i : i + _SNIFF_STEP]
            self._head.append(piece)
            root: etree._Element | None = None
            failed = False
            try:
                sniff.feed(piece)
            except etree.XMLSyntaxError:
                failed = True
            for _event, el in sniff.read_events():
                root = el
                break
            if root is not None and not _first_tag(b"".join(self._head), root):
                # an error in the root's start tag that libxml2 met only with a later
                # piece: it hands out a child's start as the first event
                root, failed = None, True
            if root is not None or failed:
                return self._open(root, data[i + _SNIFF_STEP :])
        return None

    def _open(self, root: etree._Element | None, rest: bytes) -> Opening:
        head = b"".join(self._head)
        self._head = []
        self._sniff = None
        if root is not None:
            if split(tag_of(root))[1].lower() == "html":
                self._add("SM005", _HTML, line=self._doc.line(root), fatal=True, lost=True)
            self._check(root, head)
        return Opening(True, root, head, head + rest)

    def _check(self, root: etree._Element, head: bytes) -> None:
        """Report the problems of the prolog: white space first, no or a wrong declaration,
        a DOCTYPE."""
        doc = self._doc
        has_decl = head.startswith(b"<?xml")
        if self._ws:
            if has_decl:
                self._add(
                    "SM003",
                    "Whitespace precedes the XML declaration; '<?xml' must "
                    "be the first bytes of the file",
                    line=1,
                    lost=True,  # not well-formed, as served
                )
            else:
                self._add(
                    "SM003",
                    "Whitespace precedes the root element; start the file with the XML declaration",
                    line=1,
                    severity="warning",  # no declaration to displace: only the style is off
                    lost=False,
                )
        if not has_decl:
            if utf16_codec(head) is None:
                self._add(
                    "SM010",
                    "The document has no XML declaration; start it with "
                    '<?xml version="1.0" encoding="UTF-8"?>',
                    line=doc.line_off + 1,
                    lost=False,
                )
        else:
            enc = xml_encoding(head)
            if enc is not None and enc.lower() not in (b"utf-8", b"utf8"):
                self._add(
                    "SM001",
                    f"The XML declaration says encoding={enc.decode()!r}; "
                    "sitemaps must be UTF-8 encoded. It was decoded as declared",
                    line=doc.line_off + 1,
                    lost=False,
                )
        info = root.getroottree().docinfo
        if info.doctype or info.internalDTD is not None:
            at = head.find(b"<!DOCTYPE")
            line = head.count(b"\n", 0, at) + 1 + doc.line_off if at >= 0 else None
            self._add(
                "SM011",
                "The document has a DOCTYPE; sitemaps never need one. Entities "
                "are not expanded and no DTD is loaded",
                line=line,
                fatal=doc.settings.strict,  # a warning, yet strict refuses any DTD outright
                lost=False,  # ignored: nothing in a sitemap needs it
            )


def _first_tag(head: bytes, el: etree._Element) -> bool:
    """Whether ``el`` is the first start tag written in ``head`` (declarations, comments
    and processing instructions do not start with a name); true when ``head`` shows none
    as bytes (UTF-16)."""
    m = _TAG_NAME.search(_NOT_TAGS.sub(b"", head))
    if m is None:
        return True  # no tag readable as bytes (UTF-16): libxml2's word stands
    name = f"{el.prefix}:{split(tag_of(el))[1]}" if el.prefix else split(tag_of(el))[1]
    return m.group(1).decode("utf-8", "replace") == name


def _utf16_markup(buf: bytes) -> bool | None:
    """Whether the UTF-16 text of ``buf`` (from its byte order mark) starts with markup;
    None while only white space has come."""
    codec = utf16_codec(buf[:2])
    assert codec is not None
    even = 2 + (len(buf) - 2) // 2 * 2
    text = buf[2:even].decode(codec, "replace").lstrip(" \t\r\n")
    return None if not text else text[0] == "<"


def _starts_xml(buf: bytes) -> bool:
    """Whether ``buf`` (after the byte order mark) starts as a sitemap does: no text can
    come before its declaration or root."""
    rest = buf.removeprefix(_BOM).lstrip(_SPACE)
    # the declaration's name ends where xml_start() sees it end: "<?xml</url>" is junk
    return _DECL_START.match(rest) is not None or _ROOT_START.match(rest) is not None


def kind_of(doc: Document, root: etree._Element) -> Kind:
    """The kind of document a root element starts; an unsupported one raises (SM101)."""
    ns, local = split(tag_of(root))
    if local in ("urlset", "sitemapindex"):
        return "urlset" if local == "urlset" else "sitemapindex"
    if (local == "rss" and not ns) or (local == "RDF" and ns == RDF_NS):
        return "rss"
    if local == "feed" and ns in (ATOM_NS, ATOM03_NS):
        return "atom"
    doc.findings.add(
        "SM101",
        f"Unsupported root element <{local}>"
        + (f" in namespace {ns!r}" if ns else "")
        + "; a sitemap's root is <urlset> or <sitemapindex> in namespace "
        f"{SITEMAP_NS!r} (RSS 2.0 and Atom feeds are read too)",
        line=doc.line(root),
        fatal=True,
        lost=True,
    )
    raise AssertionError("a fatal finding raises")  # pragma: no cover
