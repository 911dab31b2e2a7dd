"""core.parse: the recovering path for XML that is not well-formed. Pure.

:class:`~.tree.Tree` reads a document with libxml2's strict push parser. At its first fatal
error it hands the rest of the document to a :class:`Recovery`: the bytes from the end of
the last entry read (so no record comes twice) go through :class:`Repair`, which rewrites
the damage a person reads through (an unescaped ``&`` or ``<`` inside a value, an HTML
entity, ``<loc>`` written for ``</loc>``), then into libxml2's recovering parser, built
from the same hardened options (:data:`~sitemapkit.core.hardening.HARDENED`), which closes
what is left open. Elements still open when the bytes end were cut off: an unfinished value
is dropped, an entry keeps the values it finished ("a closed ``</loc>`` is an entry").

Both stages are incremental and bounded: the repair holds back at most one unfinished
token (:data:`_HOLD` bytes), the recovering parser is fed in blocks of :data:`_STEP` bytes of
the repaired stream (the same blocks however the input was split: libxml2's recovery differs
with the split) and its tree is pruned by the entry reader like the strict one's.
"""

from __future__ import annotations

import contextlib
import html.entities
import re
from collections.abc import Callable, Iterator
from typing import Final

from lxml import etree

from ..hardening import HARDENED
from .charset import utf16_codec

__all__ = ["Recovery", "Repair", "legal_refs", "recovering_parser", "start_tag"]

_STEP: Final = 65_536
#: The longest tag or reference the repair waits for before it decides it is text.
_HOLD: Final = 4_096
_REF: Final = re.compile(rb"&(?:#[0-9]{1,8};|#x[0-9A-Fa-f]{1,8};|([A-Za-z][A-Za-z0-9]{0,31});)")
_CHAR_REF: Final = re.compile(rb"&#(?:[0-9]{1,8}|x[0-9A-Fa-f]{1,8});")
#: What a character reference to a character XML does not allow becomes (U+FFFD).
_REPLACEMENT: Final = b"&#xFFFD;"
_REF_START: Final = re.compile(rb"&#?x?[A-Za-z0-9]{0,32}")
_TAG: Final = re.compile(rb"<(/?)((?:[A-Za-z_][\w.-]*:)?)([A-Za-z_][\w.-]*)([^<>]*)>")
_MARK: Final = re.compile(rb"[<&]|\]\]>")
#: The bytes from a ``<`` to the end of the buffer, when they may still become a tag.
_PARTIAL: Final = re.compile(rb"</?(?:[A-Za-z_][^<>]*)?")
#: libxml2's recovering parser drops the predefined entities after its first error, never
#: character references: the repair writes those.
_XML_REFS: Final = {
    b"amp": b"&#38;",
    b"lt": b"&#60;",
    b"gt": b"&#62;",
    b"quot": b"&#34;",
    b"apos": b"&#39;",
}
#: Elements whose content is a value: inside them, only their end tag, CDATA, comments and
#: the elements of :data:`_STRUCTURE` are markup; any other ``<`` is text.
_VALUES: Final = frozenset(
    (b"loc", b"lastmod", b"changefreq", b"priority", b"link", b"pubDate", b"updated")
)
_STRUCTURE: Final = _VALUES | {b"url", b"sitemap", b"urlset", b"sitemapindex", b"item", b"entry"}
_SECTIONS: Final = ((b"<![CDATA[", b"]]>"), (b"<!--", b"-->"), (b"<?", b"?>"))

_Events = Iterator[tuple[str, etree._Element]]
#: What a repair did, for the finding: (what, line, column).
Report = Callable[[str, int, int], None]


def _legal(ref: bytes) -> bool:
    """Whether the character reference ``ref`` (``&#…;``) names a character of XML 1.0's
    Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]."""
    digits = ref[2:-1]
    code = int(digits[1:], 16) if digits[:1] == b"x" else int(digits)
    if code < 0x20:
        return code in (0x9, 0xA, 0xD)
    return code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF


def legal_refs(data: bytes) -> bytes:
    """``data`` with every character reference to a character XML does not allow (a lone
    surrogate such as ``&#xD800;``, ``&#0;``, past U+10FFFF) written as ``&#xFFFD;``.

    libxml2's recovering parser keeps such a reference as the bytes of the code point
    (``&#xD800;`` as ED A0 80, which is not UTF-8), and lxml then fails to decode the
    element's text, tag or namespace: the recovering parsers are given this instead.

    A document in UTF-16 (libxml2 knows one by its BOM or its first ``<?``) is rewritten
    in its own encoding:

    >>> legal_refs(b'<t xmlns="&#xD800;">&#65;&#0;</t>')
    b'<t xmlns="&#xFFFD;">&#65;&#xFFFD;</t>'
    >>> utf16 = '<?xml version="1.0"?><t a="&#xDFFF;"/>'.encode("utf-16-le")
    >>> legal_refs(utf16).decode("utf-16-le")
    '<?xml version="1.0"?><t a="&#xFFFD;"/>'
    """
    codec = utf16_codec(data[:4])
    if codec is not None:
        even = len(data) & ~1
        text = data[:even].decode(codec, "surrogatepass")
        fixed = _CHAR_REF.sub(
            lambda m: m.group() if _legal(m.group()) else _REPLACEMENT,
            text.encode("utf-8", "surrogatepass"),
        )
        return fixed.decode("utf-8", "surrogatepass").encode(codec, "surrogatepass") + data[even:]
    if b"&#" not in data:
        return data
    return _CHAR_REF.sub(lambda m: m.group() if _legal(m.group()) else _REPLACEMENT, data)


def recovering_parser() -> etree.XMLPullParser:
    """libxml2's recovering push parser, hardened like the strict one; it reports the end
    of every element (the reader picks the entries and sees what was left open)."""
    return etree.XMLPullParser(
        events=("end",), **HARDENED, recover=True, remove_comments=True, remove_pis=True
    )


def start_tag(root: etree._Element) -> bytes:
    """A start tag for ``root`` with its namespace declarations: what a document that
    resumes inside the root needs in front of it (ASCII; other characters as references)."""
    tag = root.tag
    assert isinstance(tag, str)
    local = tag.rpartition("}")[2]
    name = f"{root.prefix}:{local}" if root.prefix else local
    attrs = "".join(f' xmlns{":" + p if p else ""}="{_attr(uri)}"' for p, uri in root.nsmap.items())
    return f"<{name}{attrs}>".encode("ascii", "xmlcharrefreplace")


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")


class Repair:
    """Rewrites damaged XML, chunk by chunk, into what libxml2 reads as a person would.

    The result does not depend on how the bytes are split: a token that may continue in the
    next chunk (a tag, a reference, the start of a CDATA section) is held back, at most
    :data:`_HOLD` bytes. ``line`` and ``column`` are where the first byte fed starts;
    each repair is passed to ``report`` with its position.

    >>> r = Repair(lambda what, line, col: None)
    >>> r.feed(b"<loc>https://e.com/?a=1&b=2&eacute;</lo") + r.feed(b"c><loc>x<2<loc>")
    b'<loc>https://e.com/?a=1&#38;b=2&#233;</loc><loc>x&#60;2</loc>'
    """

    def __init__(self, report: Report, *, line: int = 1, column: int = 1) -> None:
        self._report = report
        self._pending = b""
        self._value: bytes | None = None  # the value element the bytes are inside
        self._end: bytes | None = None  # the end of the CDATA, comment or PI the bytes are in
        self._line = line
        self._col0 = column - 1  # bytes of the current line before the buffer's first byte
        self._base = 0  # where the line count of the buffer stands

    def feed(self, data: bytes) -> bytes:
        """Repair the next bytes; return those decided so far."""
        return self._run(self._pending + data, final=False)

    def close(self) -> bytes:
        """The bytes ended: decide what was held back."""
        return self._run(self._pending, final=True)

    def _at(self, buf: bytes, j: int) -> tuple[int, int]:
        """The line and column of ``buf[j]`` (positions are counted forward only)."""
        breaks = buf.count(b"\n", self._base, j)
        if breaks:
            self._line += breaks
            self._col0 = -(buf.rfind(b"\n", self._base, j) + 1)
        self._base = j
        return self._line, self._col0 + j + 1

    def _fix(self, buf: bytes, j: int, what: str) -> None:
        line, col = self._at(buf, j)
        self._report(what, line, col)

    def _run(self, buf: bytes, *, final: bool) -> bytes:
        out: list[bytes] = []
        i, n = 0, len(buf)
        while i < n:
            if self._end is not None:  # inside a CDATA section, comment or PI: verbatim,
                # but for references to no XML character, which libxml2's recovery may
                # still read as references there (lxml then fails to decode the text)
                k = buf.find(self._end, i)
                if k < 0:
                    cut = max(i, n - (0 if final else len(self._end) - 1))
                    amp = -1 if final else buf.rfind(b"&", max(i, n - 12), cut)
                    if amp >= 0 and not 0 <= buf.find(b";", amp, n) < cut:
                        cut = amp  # a reference the cut would split waits whole
                    out.append(legal_refs(buf[i:cut]))
                    i = cut
                    break
                out.append(legal_refs(buf[i : k + len(self._end)]))
                i, self._end = k + len(self._end), None
                continue
            m = _MARK.search(buf, i)
            if m is None:
                # a "]" or "]]" at the end may start a "]]>" that the next bytes finish
                keep = 0 if final else len(buf) - len(buf.rstrip(b"]"))
                end = max(i, n - min(keep, 2))
                out.append(buf[i:end])
                i = end
                break
            j = m.start()
            out.append(buf[i:j])
            if buf[j] == 0x5D:  # "]]>" outside CDATA
                self._fix(buf, j, "']]>' was read as text")
                out.append(b"]]&#62;")
                i = j + 3
                continue
            step = self._ref(buf, j, final, out) if buf[j] == 0x26 else self._lt(buf, j, final, out)
            if step < 0:
                i = j
                break
            i = step
        self._pending = buf[i:]
        self._at(buf, i)
        self._col0 += self._base
        self._base = 0
        return b"".join(out)

    def _ref(self, buf: bytes, j: int, final: bool, out: list[bytes]) -> int:
        """An ``&`` at ``buf[j]``: a reference kept, an HTML entity as a character
        reference, anything else as ``&amp;``; -1 to wait for more bytes."""
        m = _REF.match(buf, j)
        if m is None:
            start = _REF_START.match(buf, j)
            assert start is not None
            if not final and start.end() == len(buf) and len(buf) - j < 40:
                return -1
            self._fix(buf, j, "an unescaped '&' was read as text")
            out.append(b"&#38;")
            return j + 1
        name = m.group(1)
        if name is None:
            char = m.group()
            if _legal(char):
                out.append(char)
            else:
                self._fix(buf, j, f"the reference {char.decode()} names no character XML allows")
                out.append(_REPLACEMENT)
            return m.end()
        ref = _XML_REFS.get(name)
        if ref is not None:
            out.append(ref)
            return m.end()
        code = html.entities.name2codepoint.get(name.decode())
        if code is None:
            self._fix(buf, j, f"the undeclared entity &{name.decode()}; was read as text")
            out.append(b"&#38;")
            return j + 1
        self._fix(buf, j, f"the HTML entity &{name.decode()}; was read as its character")
        out.append(b"&#%d;" % code)
        return m.end()

    def _lt(self, buf: bytes, j: int, final: bool, out: list[bytes]) -> int:
        """A ``<`` at ``buf[j]``: markup, or text inside a value; -1 to wait for more."""
        for start, end in _SECTIONS:
            if buf.startswith(start, j):
                self._end = end
                out.append(start)
                return j + len(start)
            if not final and len(buf) - j < len(start) and start.startswith(buf[j:]):
                return -1
        m = _TAG.match(buf, j, j + _HOLD)
        if m is None:
            if not final and len(buf) - j < _HOLD and _PARTIAL.fullmatch(buf, j):
                return -1
            self._fix(buf, j, "an unescaped '<' was read as text")
            out.append(b"&#60;")
            return j + 1
        close, prefix, local, rest = m.groups()
        tag = m.group()
        if b"&#" in rest and (legal := legal_refs(tag)) != tag:
            self._fix(buf, j, f"a reference in <{local.decode()}> names no character XML allows")
            tag = legal
        value = self._value
        if value is None:
            if not close and local in _VALUES and not rest.endswith(b"/"):
                self._value = local
            out.append(tag)
        elif local == value:
            self._value = None
            if close:
                out.append(tag)
            else:  # <loc>...<loc>: the second one was meant to end the first
                self._fix(buf, j, f"<{local.decode()}> was read as its end tag")
                out.append(b"</" + prefix + local + b">")
        elif local in _STRUCTURE:
            if close:
                self._value = None
            out.append(tag)
        else:
            self._fix(buf, j, "an unescaped '<' was read as text")
            out.append(b"&#60;")
            return j + 1
        return m.end()


class Recovery:
    """The rest of a damaged document: repaired, read by the recovering parser, and the
    entry elements handed to ``read`` (those cut off at the end too, without the values
    they did not finish)."""

    def __init__(
        self,
        tags: tuple[str, ...],
        read: Callable[[_Events], None],
        report: Report,
        *,
        line: int,
        column: int,
    ) -> None:
        self._tags = frozenset(tags)
        self._read = read
        self._repair = Repair(report, line=line, column=column)
        self._parser: etree.XMLPullParser | None = recovering_parser()
        self._buf = b""  # repaired bytes not yet fed: less than one block
        self.root: etree._Element | None = None

    def feed(self, data: bytes, *, raw: bool = False) -> None:
        """Read on (``raw``: bytes that need no repair, the padding and the root tag)."""
        if raw:
            self._parse(data)
            return
        for i in range(0, len(data), _STEP):  # bounded pieces: the repair's output is too
            self._parse(self._repair.feed(data[i : i + _STEP]))

    def close(self) -> None:
        """The bytes ended: read what they left open."""
        parser = self._parser
        if parser is None:
            return
        self._parse(self._repair.close(), final=True)
        self._parser = None
        try:
            self.root = parser.close()
        except etree.XMLSyntaxError:
            self.root = None
        self._read(self._cut(parser.read_events()))

    def _parse(self, data: bytes, *, final: bool = False) -> None:
        """Feed libxml2 in blocks of :data:`_STEP` bytes of the repaired stream, whatever
        the chunks were: its recovery is not the same for every split of the bytes."""
        parser = self._parser
        assert parser is not None
        tags = self._tags
        buf = self._buf + data if self._buf else data
        at = 0
        while len(buf) - at >= _STEP or (final and at < len(buf)):
            with contextlib.suppress(etree.XMLSyntaxError):  # recover mode keeps going
                parser.feed(buf[at : at + _STEP])
            at += _STEP
            self._read(e for e in parser.read_events() if e[1].tag in tags)
        self._buf = buf[at:]

    def _cut(self, events: _Events) -> _Events:
        """Elements the end of the bytes left open, innermost first: a value inside an
        entry is dropped, an entry is read with what it finished."""
        tags = self._tags
        for event, el in events:
            if el.tag in tags:
                if len(el):
                    yield event, el
                continue
            parent = el.getparent()
            if parent is not None and any(a.tag in tags for a in el.iterancestors()):
                parent.remove(el)
