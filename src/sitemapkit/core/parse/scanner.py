"""core.parse: the scanner, a regular-expression fast path for plain ``<urlset>`` entries. Pure.

Most sitemaps are long runs of plain entries. The scanner reads those with one regular
expression per entry and builds each Url on the fast path (:mod:`.canonical`); the first
thing it does not take (an extension, a comment, CDATA, a value the fast path refuses, bad
UTF-8, the end tag) hands the rest of the document to libxml2 (:class:`~.tree.Tree`), fed
after padding of as many line breaks and spaces as the scanned bytes held, so that its line
and column numbers stay those of the document. Scanned or not, the records and findings are
the same (``tests/core/test_parse.py`` compares them).

It takes over after an XML declaration, stylesheet processing instructions and ``<urlset>``
with attributes, nothing else (no DOCTYPE, no comments), in a document declared UTF-8 or not
at all, whose root is unprefixed.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from lxml import etree

from .. import limits
from ..model import Image
from ..namespace import IMAGE_NS
from ..urls import unescape
from .canonical import XML_SPACE, fast_image, fast_url, padded
from .document import Document, Reader
from .prolog import xml_encoding
from .tree import Tree

__all__ = ["Scanner"]

# A value is character data without markup, CDATA or references other than the five
# predefined entities. Repeats are possessive (*+): nothing after them can need a shorter
# match, and sre then keeps no backtracking state per repetition (4M "&amp;" in one loc
# took 500 MB).
_SPACE: Final = "[ \\t\\r\\n]*"
_VALUE: Final = (
    "([^<&\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\ufffe\\uffff]*"
    "(?:&(?:amp|lt|gt|quot|apos);[^<&\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\ufffe\\uffff]*)*+)"
)
_CORE: Final = (
    f"{_SPACE}<url>{_SPACE}<loc>{_VALUE}</loc>{_SPACE}"
    f"(?:<lastmod>{_VALUE}</lastmod>{_SPACE})?"
    f"(?:<changefreq>{_VALUE}</changefreq>{_SPACE})?"
    f"(?:<priority>{_VALUE}</priority>{_SPACE})?"
)
#: A plain entry; the fifth group (images, see _patterns) is always empty.
_ENTRY: Final = re.compile(_CORE + "()</url>")
_HEAD: Final = re.compile(
    rb"(?:<\?xml[^>]*\?>)?[ \t\r\n]*(?:<\?xml-stylesheet[^>]*\?>[ \t\r\n]*)*+"
    rb"<urlset(?:[ \t\r\n]+[A-Za-z_][-\w.:]*[ \t\r\n]*=[ \t\r\n]*(?:\"[^\"<]*\"|'[^'<]*'))*+"
    rb"[ \t\r\n]*>"
)
#: Bytes the scanner holds while waiting for the end of an entry before it gives up.
_PENDING: Final = 1 << 16
_SPACE_BYTES: Final = b" \t\r\n"


@functools.lru_cache(maxsize=8)
def _patterns(prefix: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The entry pattern when ``prefix`` is bound to the image namespace on the root:
    plain entries that may end with images holding only an ``image:loc`` (the fifth
    group), and the pattern of those locs."""
    p = re.escape(prefix)
    value = _VALUE[1:-1]  # without its group
    image = f"<{p}:image>{_SPACE}<{p}:loc>{value}</{p}:loc>{_SPACE}</{p}:image>{_SPACE}"
    entry = re.compile(_CORE + f"((?:{image})*+)</url>")
    return entry, re.compile(f"<{p}:loc>{_VALUE}</{p}:loc>")


def _images(locs: list[str]) -> tuple[Image, ...] | None:
    """The images of an entry, as the tree path builds them; None unless every loc
    is canonical (and at most the protocol's 1,000): then the tree path decides."""
    if len(locs) > limits.MAX_IMAGES:
        return None
    out = []
    for loc in locs:
        if "&" in loc:
            loc = unescape(loc)
        image = fast_image(loc.strip(XML_SPACE))
        if image is None:
            return None
        out.append(image)
    return tuple(out)


class Scanner(Reader):
    """A ``<urlset>`` body: the scanner while it can, then the libxml2 ``tree``."""

    @staticmethod
    def fits(root: etree._Element, head: bytes) -> bool:
        """Whether the scanner may read a document of this root (whose start is ``head``)."""
        info = root.getroottree().docinfo
        enc = xml_encoding(head)
        return (
            root.prefix is None
            and not info.doctype
            and info.internalDTD is None
            and (enc is None or enc.lower() in (b"utf-8", b"utf8"))
        )

    def __init__(self, doc: Document, tree: Tree, root: etree._Element) -> None:
        self._doc = doc
        self.tree = tree
        self._entry = _ENTRY
        self._image: re.Pattern[str] | None = None
        prefix = next((p for p, uri in root.nsmap.items() if p and uri == IMAGE_NS), None)
        if prefix is not None:
            self._entry, self._image = _patterns(prefix)
        #: None before the first byte, then True while the scanner reads the entries.
        self.scanning: bool | None = None
        self.pending = b""  # the start of an entry not complete yet
        self._line = 0  # line of the first byte after the root start tag
        self._nl = 0  # line breaks scanned since then
        self._col = 0  # bytes scanned since the last of them
        #: The scanner read every entry of the document: nothing but the prolog, the root
        #: and its end went to libxml2.
        self.scanned_all = False
        #: A value the scanner read has white space around it (SM109).
        self.scanned_padded = False
        #: The scanner read extension elements (images) too.
        self.scanned_extensions = False

    def feed(self, data: bytes) -> None:
        if self.scanning:
            self._scan(data)
        elif self.scanning is None:
            self._start(data)
        else:
            self.tree.feed(data)

    def close(self) -> None:
        if self.scanning and not self.tree.done:
            self._switch(self.pending)
        self.tree.close()

    def _start(self, data: bytes) -> None:
        """libxml2 reads the prolog and the root start tag, then the scanner the entries."""
        self.scanning = False
        m = _HEAD.match(data)
        if m is None:
            self.tree.feed(data)
            return
        head = data[: m.end()]
        self.tree.feed(head)
        if not self.tree.done:
            self.scanning = True
            self._line = self._doc.line_off + 1 + head.count(b"\n")
            self._scan(data[m.end() :])

    def _scan(self, data: bytes) -> None:
        buf = self.pending + data if self.pending else data
        self.pending = b""
        done = 0
        end = buf.rfind(b"</url>") + 6
        if end >= 6:
            try:
                text = buf[:end].decode()
            except UnicodeDecodeError:
                self._switch(buf)
                return
            stop = text.find("]]>")  # not allowed in character data: libxml2 reports it
            limit = len(text) if stop < 0 else stop
            i = self._entries(text, limit)
            done = end if i == len(text) else len(text[:i].encode())
            self._advance(buf, done)
            if i < limit or stop >= 0:
                self._switch(buf[done:])
                return
        rest = buf[done:]
        tail = rest.lstrip(_SPACE_BYTES)
        if tail.startswith(b"</urlset"):
            self.scanned_all = True
        if len(rest) > _PENDING or (
            tail and not (tail.startswith(b"<url>") or b"<url>".startswith(tail))
        ):
            self._switch(rest)  # the end tag, a comment, anything else: libxml2 reads on
        else:
            self.pending = rest

    def _entries(self, text: str, limit: int) -> int:
        """Read plain entries from ``text[:limit]``; return where the first other one starts.

        The hot loop: no attribute lookups per entry; the entry budget is counted in
        batches (``Document.quiet``).
        """
        doc = self._doc
        match = self._entry.match
        image_locs = self._image
        append = doc.out.append
        seen_padded = self.scanned_padded
        pos = 0
        left = quiet = doc.quiet()
        try:
            while pos < limit:
                m = match(text, pos, limit)
                if m is None:
                    break
                loc, lastmod, changefreq, priority, images = m.groups()
                if "&" in loc:
                    loc = unescape(loc)
                if lastmod is not None and "&" in lastmod:
                    lastmod = unescape(lastmod)
                if changefreq is not None and "&" in changefreq:
                    changefreq = unescape(changefreq)
                if priority is not None and "&" in priority:
                    priority = unescape(priority)
                pictures: tuple[Image, ...] = ()
                if images:
                    assert image_locs is not None
                    found = _images(image_locs.findall(images))
                    if found is None:
                        break
                    pictures = found
                url = fast_url(loc, lastmod, changefreq, priority, pictures)
                if url is None:
                    break
                if pictures:
                    self.scanned_extensions = True
                # the fast path took the values stripped; the validator wants to know (SM109)
                if not seen_padded and padded(loc, lastmod, changefreq, priority):
                    seen_padded = self.scanned_padded = True
                if left:
                    left -= 1
                else:
                    doc.settle(quiet)
                    left = quiet = 0
                    line = self._line_at(text, pos)
                    doc.count(line)
                    doc.place(line)
                    left = quiet = doc.quiet()
                append(url)
                pos = m.end()
        finally:
            doc.settle(quiet - left)
        return pos

    def _line_at(self, text: str, pos: int) -> int:
        """The line of the entry that starts (after white space) at ``text[pos]``."""
        tag = text.index("<url>", pos)
        return self._line + self._nl + text.count("\n", 0, tag)

    def _advance(self, buf: bytes, done: int) -> None:
        """Count the line breaks of the ``done`` bytes just scanned."""
        breaks = buf.count(b"\n", 0, done)  # libxml2 counts LF only (CR LF is one break)
        if breaks:
            last = buf.rfind(b"\n", 0, done)
            self._nl += breaks
            self._col = done - last - 1
        else:
            self._col += done

    def _switch(self, rest: bytes) -> None:
        """Hand the rest of the document to libxml2, padded to keep its positions."""
        self.scanning = False
        self.pending = b""
        self.tree.feed(b"\n" * self._nl + b" " * self._col + rest)
