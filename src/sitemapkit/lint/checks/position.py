"""lint.checks: naming a record by its loc, and finding its element's line and column. Pure.

Records carry no positions, so entry findings wait as :class:`Pending` until the driver
resolves them from the document (:func:`resolve_places`): a record is named by its loc
and how many records with the same loc came before it in the file, which gives its line
and its *ordinal* (its place among the entries). The ``(raw loc, line)`` anchors of a
parsed document (:func:`entry_anchors`) stand in for a tree no longer held.

Then the one locator (:class:`Locator`) reads the bytes of the entries that have findings
and finds the element a finding judges, by its path inside the entry (``element``, which
the check that decides the rule sets: :func:`element_path`): the start tag of the element
for a bad value, the attribute for a bad attribute. The same bytes and the same path give
the same place in every mode of the validator (the whole tree, pieces, the scanner's fast
path, a set). The reader's findings name their element by the same path (counted in
document order, kept or dropped); the schemas' errors found piece by piece, which carry
only a line and an entry, are placed on their rule's element on that line
(:func:`place_findings`); the others on the first markup of their line, or on the entry
without a loc or the empty ``<loc>`` of that line they are about (:func:`place_lines`).

Lines count line feeds (as libxml2's ``sourceline``); columns are 1-based and count the
*characters* of the decoded line before the place, as editors do: a tab is one, a
multi-byte UTF-8 character one, the byte order mark none. Decides no rule.
"""

from __future__ import annotations

import functools
import re
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Final

from lxml import etree

from ...core.finding import Finding, Severity
from ...core.grammar import SCHEME
from ...core.urls import XML_SPACE, iri_to_uri, resolve

__all__ = [
    "Locator",
    "Pending",
    "element_path",
    "entry_anchors",
    "entry_spans",
    "line_columns",
    "place_findings",
    "resolve_places",
]


@dataclass(slots=True)
class Pending:
    """An entry finding waiting for its line: the ``occurrence``-th record with ``loc``.

    ``see`` names another record whose line replaces ``{see}`` in the message;
    ``element`` is the path of the element judged inside the entry (:func:`element_path`;
    ``None``: its ``<loc>``).
    """

    rule: str
    severity: Severity
    message: str
    loc: str
    occurrence: int
    see: tuple[str, int] | None = None
    element: str | None = None

    def finding(
        self,
        where: str | None,
        lines: dict[tuple[str, int], int],
        at: tuple[int, int] | None = None,
    ) -> Finding:
        """The finding, on the line of its record in ``lines``, or at ``at`` (line,
        column: where its element is)."""
        message = self.message
        if self.see is not None:
            line = lines.get(self.see)
            message = message.replace("{see}", f"line {line}" if line else "earlier")
        return Finding(
            self.rule,
            self.severity,
            message,
            where,
            at[0] if at is not None else lines.get((self.loc, self.occurrence)),
            at[1] if at is not None else None,
            self.loc,
            self.element or "loc",
        )


def resolve_places(
    wanted: Iterable[tuple[str, int]],
    *,
    root: etree._Element | None,
    data: bytes,
    kind: str | None,
    base_url: str | None = None,
    anchors: Iterable[tuple[str, int]] | None = None,
) -> dict[tuple[str, int], tuple[int, int]]:
    """``(line, ordinal)`` of records named ``(loc, occurrence)``: the line of the entry's
    ``<loc>`` and the entry's place among the anchors (for :class:`Locator`).

    A record's loc is the reader's (an IRI becomes a URI, a relative loc is resolved
    against ``base_url``), so a raw value that does not match as written is compared in
    that form too. ``anchors`` (the ``(raw loc, line)`` of every entry, in document
    order, as :func:`entry_anchors` gives them) stand in for a tree no longer held.
    """
    keys = set(wanted)
    if not keys:
        return {}
    locs = {loc for loc, _ in keys}
    found: dict[tuple[str, int], tuple[int, int]] = {}
    seen: Counter[str] = Counter()
    source = anchors if anchors is not None else _anchors(root, data, kind)
    for ordinal, (raw, line) in enumerate(source):
        value = raw.strip(XML_SPACE)
        if value in locs:
            loc = value
        elif _CANONICAL_URI.fullmatch(value):
            continue  # the reader keeps it as it is, and it is not wanted
        else:
            mapped = _as_record_loc(value, base_url)
            if mapped is None or mapped not in locs:
                continue
            loc = mapped
        key = (loc, seen[loc])
        seen[loc] += 1
        if key in keys:
            found[key] = (line, ordinal)
    return found


# A URI the reader's model keeps unchanged (lowercase scheme and host, nothing to encode).
_URI_CHARS: Final = r"[A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=-]*+"  # possessive: no state a char
_CANONICAL_URI: Final = re.compile(
    r"https?://[a-z0-9.-]+(?::[0-9]{1,5})?"
    rf"(?:[/?#]{_URI_CHARS}(?:%[0-9A-Fa-f]{{2}}{_URI_CHARS})*+)?"
)


def _as_record_loc(value: str, base_url: str | None) -> str | None:
    text = value
    if not SCHEME.match(text):
        if base_url is None:
            return None
        text = resolve(text, base_url)
    try:
        return iri_to_uri(text)
    except ValueError:
        return None


@functools.lru_cache(maxsize=16)
def _first_locs(ns: str, entry: str) -> etree.XPath:
    """The first <loc> of each entry of a root element (an XPath runs in C)."""
    if not ns:
        return etree.XPath(f"./{entry}/loc[1]")
    return etree.XPath(f"./s:{entry}/s:loc[1]", namespaces={"s": ns})


def entry_anchors(root: etree._Element, kind: str | None) -> Iterable[tuple[str, int]]:
    """``(raw loc, line)`` of the entries of a parsed urlset or index, in document order."""
    return _anchors(root, b"", kind)


def _anchors(
    root: etree._Element | None, data: bytes, kind: str | None
) -> Iterable[tuple[str, int]]:
    """``(raw loc, line)`` of every entry, in document order."""
    if kind == "text" or root is None:
        if kind != "text":
            return
        for line, raw in enumerate(data.splitlines(), 1):
            text = raw.strip()
            if text:
                yield text.decode("utf-8", "replace"), line
        return
    if kind in ("urlset", "sitemapindex"):
        tag = str(root.tag)
        ns = tag[1 : tag.index("}")] if tag.startswith("{") else ""
        for loc in _first_locs(ns, "url" if kind == "urlset" else "sitemap")(root):
            assert isinstance(loc, etree._Element)
            if loc.text is not None:
                yield loc.text, loc.sourceline or 0
        return
    for el in root.iter(etree.Element):  # RSS <link>, Atom <link href>
        local = str(el.tag).rsplit("}", 1)[-1]
        if local != "link":
            continue
        value = el.get("href") if el.get("href") is not None else el.text
        if value:
            yield value, el.sourceline or 0


# -- the element a finding is about: its line and column in the bytes ----------------------

#: One token of XML for the byte locator: markup that holds no element (a comment, CDATA,
#: a processing instruction, a DOCTYPE) or a start or end tag (groups: "/", name, attributes).
_TOKEN: Final = re.compile(
    rb"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<!DOCTYPE(?:[^\[>]|\[.*?\])*>"
    rb"|<(/?)([^\s/>!?]+)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>",
    re.S,
)
_PLAIN_LOC: Final = re.compile(rb"<loc>")
_STEP: Final = re.compile(r"(?:[\w.-]+:)?([\w.-]+)(?:\[(?:(\d+)|@([\w.:-]+)='([^']*)')\])?")
_BOM: Final = b"\xef\xbb\xbf"

#: A tag of an entry: (byte offset, depth below the entry, local name, attributes, their
#: offset, is an end tag).
_Tag = tuple[int, int, bytes, bytes, int, bool]


def element_path(*steps: str, attr: str | None = None) -> str:
    """The path of an element inside an entry as a finding carries it (``Finding.element``):
    steps ``prefix:name[n]`` (1-based among the siblings of that name; ``[@a='v']``: the
    first with that attribute value), then ``@attr`` for an attribute.

    >>> element_path("image:image[2]", "image:caption")
    'image:image[2]/image:caption'
    """
    return "/".join([*steps, *([f"@{attr}"] if attr else [])])


class Locator:
    """Lines and columns of the elements findings name, found in a document's bytes.

    An entry is named by its *ordinal*: its place among the entries that have a ``<loc>``
    (the order of the anchors). ``plain`` says that the bytes are a plain urlset (no
    comment, CDATA or second ``<loc>`` in an entry: the scanner read it whole), where an
    entry's ``<loc>`` is found by a search in C; otherwise the tags are read from the start
    up to the last entry wanted. Only documents with findings to place pay for it.

    Columns are 1-based and count the characters of the decoded line (as editors do; a
    tab is one, the byte order mark none), lines count line feeds as libxml2 does.
    """

    def __init__(
        self,
        data: bytes,
        kind: str | None,
        *,
        plain: bool = False,
        spans: Sequence[int] | None = None,
        locs: Sequence[int] | None = None,
    ) -> None:
        self.data, self.kind, self.plain = data, kind, plain
        #: The entries' byte spans (:func:`entry_spans`), when another process found them
        #: while this one read the document: then no tags are read but the wanted entries'.
        self.given = spans
        #: Where each of those entries' ``<loc>`` starts (``entry_spans(locs=...)``): an
        #: entry's ``<loc>`` is then placed without reading its tags.
        self.locs = locs

    def place(self, wanted: Iterable[tuple[int, str | None]]) -> dict[tuple[int, str | None], int]:
        """Byte offsets of ``(entry ordinal, element path)``: the element's start tag (or
        the attribute); ``None`` as a path names the entry's ``<loc>``. Paths that do not
        fit the entry are left out."""
        keys = sorted(set(wanted), key=lambda k: k[0])
        if not keys or self.kind not in ("urlset", "sitemapindex"):
            return {}
        ordinals = {o for o, _ in keys}
        out: dict[tuple[int, str | None], int] = {}
        spans = self.spans(ordinals) if self.plain else {}
        data, rest, locs = self.data, [], self.locs
        for ordinal, path in keys:
            if path is None and locs is not None and ordinal < len(locs):
                out[ordinal, path] = locs[ordinal]
                continue
            span, name = spans.get(ordinal), _simple(path)
            if span is not None and name is not None:  # a plain entry: one of each child
                at = data.find(b"<" + name + b">", *span)
                if at >= 0:
                    out[ordinal, path] = at
                continue
            rest.append((ordinal, path))
        tags = {o: _Entry(t) for o, t in self.entries({o for o, _ in rest}).items()}
        for ordinal, path in rest:
            entry = tags.get(ordinal)
            if entry is None:
                continue
            found = _follow(entry, path)
            if found is not None:
                out[ordinal, path] = found
        return out

    def positions(
        self, wanted: Iterable[tuple[int, str | None]]
    ) -> dict[tuple[int, str | None], tuple[int, int]]:
        """``(line, column)`` of ``(entry ordinal, element path)`` (see :meth:`place`)."""
        offsets = self.place(wanted)
        lines = line_columns(self.data, offsets.values())
        return {key: lines[off] for key, off in offsets.items()}

    def entries(self, ordinals: set[int]) -> dict[int, list[_Tag]]:
        """The tags of the entries with these ordinals."""
        if not ordinals:
            return {}
        return self._plain_entries(ordinals) if self.plain else self._entries(ordinals)

    def spans(self, ordinals: set[int]) -> dict[int, tuple[int, int]]:
        """Byte spans of the entries with these ordinals, in a plain urlset (else none)."""
        data, out = self.data, dict[int, tuple[int, int]]()
        if not self.plain or not ordinals:
            return out
        last = max(ordinals)
        for n, m in enumerate(_PLAIN_LOC.finditer(data)):
            if n > last:
                break
            if n in ordinals:
                start = data.rfind(b"<url>", 0, m.start())
                end = data.find(b"</url>", m.start())
                if start >= 0 and end >= 0:
                    out[n] = (start, end + 6)
        return out

    def _plain_entries(self, ordinals: set[int]) -> dict[int, list[_Tag]]:
        data = self.data
        return {n: _tags(data, *span) for n, span in self.spans(ordinals).items()}

    def _entries(self, ordinals: set[int]) -> dict[int, list[_Tag]]:
        data = self.data
        spans = self.given
        if spans is None:
            spans = entry_spans(data, self.kind, max(ordinals))
        return {
            n: _tags(data, spans[2 * n], spans[2 * n + 1]) for n in ordinals if 2 * n < len(spans)
        }


def entry_spans(
    data: bytes, kind: str | None, last: int = -1, locs: array[int] | None = None
) -> array[int]:
    """The byte spans of the entries that have a ``<loc>``, flat: ``start, end`` of the
    entry of ordinal ``n`` at ``2n`` and ``2n + 1`` (from its start tag to the end of its
    end tag, so that :func:`_tags` reads its tags); up to ordinal ``last`` (-1: all).
    ``locs``, when given, gets the offset of each of those entries' first ``<loc>`` (where
    :class:`Locator` places the entry), at ``n``.

    The tags are read from the start of the XML, as the reader nests them: a ``<loc>``
    two levels down starts an entry's ordinal (its first one), comments, CDATA, PIs and
    a DOCTYPE are skipped whole. Tokens read from an entry's start tag are the ones read
    from the start of the document, so its span holds exactly its tags.
    """
    entry_name = b"url" if kind == "urlset" else b"sitemap"
    out = array("q")
    depth, ordinal, start, loc_at = 0, -1, -1, -1
    has_loc = False
    for m in _TOKEN.finditer(data, _xml_start(data)):
        end, name, attrs = m.groups()
        if name is None:
            continue
        if end:  # an end tag
            depth -= 1
            if depth == 1 and start >= 0:
                if has_loc:
                    out.append(start)
                    out.append(m.end())
                    if locs is not None:
                        locs.append(loc_at)
                    if ordinal == last:
                        break
                start = -1
            continue
        if depth < 3:  # an entry or its child: the tags further down only nest
            local = name.rpartition(b":")[2]
            if depth == 1 and local == entry_name:
                start, has_loc = m.start(), False
            elif depth == 2 and start >= 0 and not has_loc and local == b"loc":
                has_loc, loc_at = True, m.start()
                ordinal += 1
        if not attrs.endswith(b"/"):
            depth += 1
        elif depth == 1:  # <url/>: no loc, no ordinal
            start = -1
    return out


def _simple(path: str | None) -> bytes | None:
    """The name of a path of one unprefixed element (``lastmod``), which a plain entry
    holds at most once; None for any other path."""
    name = "loc" if path is None else path
    return name.encode() if name.isidentifier() else None


def _xml_start(data: bytes) -> int:
    """Where the XML starts: after text a server printed before the declaration."""
    from ...core.parse.prolog import xml_start

    return xml_start(data)


def _tags(data: bytes, start: int, end: int) -> list[_Tag]:
    """The tags of one entry between byte offsets ``start`` and ``end``."""
    out: list[_Tag] = []
    depth = -1
    for m in _TOKEN.finditer(data, start, end):
        name = m.group(2)
        if name is None:
            continue
        local = name.rpartition(b":")[2]
        if m.group(1):
            out.append((m.start(), depth, local, b"", 0, True))
            depth -= 1
            continue
        depth += 1
        attrs = m.group(3)
        out.append((m.start(), depth, local, attrs, m.start(3), False))
        if attrs.endswith(b"/"):
            out.append((m.end(), depth, local, b"", 0, True))
            depth -= 1
    return out


class _Entry:
    """An entry's tags, each element's children of a name listed once, when first asked.

    A path's step used to walk every tag after its parent's: an entry of 100,000 nested
    ``<loc>`` with a finding on each took minutes to place.
    """

    def __init__(self, tags: list[_Tag]) -> None:
        self.tags = tags
        self._kids: dict[tuple[int, str], list[int]] = {}

    def children(self, node: int, name: str) -> list[int]:
        """Indexes of the start tags of ``node``'s child elements called ``name``."""
        found = self._kids.get((node, name))
        if found is None:
            found = []
            tags = self.tags
            level = tags[node][1]
            for j in range(node + 1, len(tags)):
                depth, local, end = tags[j][1], tags[j][2], tags[j][5]
                if end:
                    if depth == level:
                        break  # the element ended
                elif depth == level + 1 and local.decode("ascii", "replace") == name:
                    found.append(j)
            self._kids[node, name] = found
        return found


def _follow(entry: _Entry, path: str | None) -> int | None:
    """The byte offset of the element (or attribute) ``path`` names in an entry's tags."""
    steps = ["loc"] if path is None else [s for s in path.split("/") if s]
    attr = steps.pop()[1:] if steps and steps[-1].startswith("@") else None
    tags = entry.tags
    node: int | None = 0
    for step in steps:
        match = _STEP.fullmatch(step)
        if match is None or node is None:
            return None
        name, index, key, value = match.groups()
        kids = entry.children(node, name)
        if key is not None:
            node = next((j for j in kids if _attribute(tags[j][3], key) == value), None)
        else:
            nth = max(int(index or 1) - 1, 0)
            node = kids[nth] if nth < len(kids) else None
    if node is None:
        return None
    at, _, _, attrs, attrs_at, _ = tags[node]
    if attr is None:
        return at
    m = re.search(rb"\s((?:[\w.-]+:)?" + re.escape(attr.encode()) + rb")\s*=", attrs)
    return attrs_at + m.start(1) if m is not None else at


def _attribute(attrs: bytes, name: str) -> str | None:
    m = re.search(
        rb"(?:^|\s)(?:[\w.-]+:)?"
        + re.escape(name.encode())
        + rb"\s*=\s*(?:\"([^\"]*)\"|'([^']*)')",
        attrs,
    )
    if m is None:
        return None
    return (m.group(1) if m.group(1) is not None else m.group(2)).decode("utf-8", "replace")


def line_columns(data: bytes, offsets: Iterable[int]) -> dict[int, tuple[int, int]]:
    """1-based ``(line, column)`` of byte offsets: lines count line feeds, columns the
    characters of the decoded line before the offset (a byte order mark is not one)."""
    out: dict[int, tuple[int, int]] = {}
    line, line_start, pos, col = 1, 0, 0, 0
    for off in sorted(set(offsets)):
        breaks = data.count(b"\n", pos, off)
        if breaks:
            line += breaks
            line_start = data.rindex(b"\n", pos, off) + 1
            pos, col = line_start, 0
        if line == 1 and pos == 0 and data.startswith(_BOM):
            pos = 3
        col += len(data[pos:off].decode("utf-8", "replace"))
        pos = off
        out[off] = (line, col + 1)
    return out


#: The element each rule the schemas report judges inside an entry, by local name, for
#: their errors found piece by piece, which come with a line and an entry but no element
#: (the reader's findings name theirs: ``Finding.element``). A rule not listed is placed
#: on the first start tag of its line inside the entry.
RULE_ELEMENTS: Final = {
    **dict.fromkeys(("SM204", "SM205", "SM206"), "loc"),  # lint.checks.document's raw locs
    **dict.fromkeys(("SM301", "SM302", "SM303", "SM304"), "lastmod"),
    "SM401": "changefreq",
    **dict.fromkeys(("SM402", "SM403"), "priority"),
    "NEWS804": "language",
    "NEWS805": "publication_date",
    "NEWS808": "keywords",
    "VID704": "duration",
    "VID705": "rating",
    "VID707": "restriction",
    "VID708": "platform",
    "VID709": "family_friendly",
    "VID710": "expiration_date",
    "VID714": "category",
    "VID716": "view_count",
}


def place_findings(
    findings: list[Finding], anchors: list[tuple[str, int]], locator: Locator
) -> list[Finding]:
    """``findings`` with the line and column of the element each judges, for those that
    name an entry (``loc``) and a line but no column: the element of its path
    (``element``, as the reader names it; the entry is the last one with that loc that
    starts at or before the finding's line), else the element of its rule
    (:data:`RULE_ELEMENTS`) on that line of the entry, or the first start tag there."""
    todo = [f for f in findings if f.loc is not None and f.line is not None and f.column is None]
    if not todo or locator.kind not in ("urlset", "sitemapindex"):
        return place_lines(findings, locator.data)
    by_loc: dict[str, list[tuple[int, int]]] = {}
    for ordinal, (raw, line) in enumerate(anchors):
        by_loc.setdefault(raw.strip(XML_SPACE), []).append((line, ordinal))
    wanted: dict[int, Finding] = {}
    ordinals: dict[int, int] = {}
    for n, f in enumerate(todo):
        assert f.loc is not None and f.line is not None
        listed = by_loc.get(f.loc.strip(XML_SPACE), [])
        candidates = [o for line, o in listed if line <= f.line]
        if not candidates:
            if f.element is None or not listed:
                continue
            candidates = [listed[0][1]]  # the element comes before the entry's <loc>
        wanted[n] = f
        ordinals[n] = candidates[-1]
    known = {n: (ordinals[n], f.element) for n, f in wanted.items() if f.element is not None}
    by_path = locator.place(known.values())
    offsets = {n: by_path[key] for n, key in known.items() if key in by_path}
    spans = locator.spans({ordinals[n] for n in wanted if n not in known})
    rest: dict[int, Finding] = {}
    for n, f in wanted.items():
        if n in known:
            continue
        span, name = spans.get(ordinals[n]), RULE_ELEMENTS.get(f.rule)
        if span is not None and name is not None:  # a plain entry: one of each child
            at = locator.data.find(b"<" + name.encode() + b">", *span)
            if at >= 0:
                offsets[n] = at
                continue
        rest[n] = f
    entries = locator.entries({ordinals[n] for n in rest})
    for n, f in rest.items():
        tags = entries.get(ordinals[n])
        if tags is None:
            continue
        found = _on_line(locator.data, tags, f.line or 0, RULE_ELEMENTS.get(f.rule))
        if found is not None:
            offsets[n] = found
    places = line_columns(locator.data, offsets.values())
    placed = {id(wanted[n]): (places[off], n in known) for n, off in offsets.items()}
    out = []
    for f in findings:
        spot, exact = placed.get(id(f), (None, False))
        if spot is not None and exact:
            f = replace(f, line=spot[0], column=spot[1])
        elif spot is not None and spot[0] == f.line:
            f = replace(f, column=spot[1])
        out.append(f)
    return place_lines(out, locator.data)


#: The attribute a finding of these rules is about, on the start tag of its line.
_RULE_ATTRIBUTES: Final = {"SM101": b"xmlns", "SM112": b"schemaLocation"}
_FIRST_MARK: Final = re.compile(rb"[^ \t\r\n]")


def place_lines(findings: list[Finding], data: bytes) -> list[Finding]:
    """``findings`` with a line and no column placed on the first markup of their line
    (the attribute of :data:`_RULE_ATTRIBUTES` on it): the declaration, the DOCTYPE, the
    root element, the text a server printed before the XML. An entry without a ``<loc>``
    or with an empty one, which no loc names, is the k-th such entry (or ``<loc>``) of its
    line for the k-th finding there (:data:`_UNNAMED`)."""
    todo = {f.line for f in findings if f.line is not None and f.column is None}
    if not todo:
        return findings
    starts: dict[int, int] = {}
    line, pos = 1, 0
    for wanted in sorted(todo):
        while line < wanted:
            nl = data.find(b"\n", pos)
            if nl < 0:
                break
            pos, line = nl + 1, line + 1
        if line == wanted:
            m = _FIRST_MARK.search(data, pos + (3 if pos == 0 and data.startswith(_BOM) else 0))
            if m is not None and data.count(b"\n", pos, m.start()) == 0:
                starts[wanted] = m.start()
            else:  # nothing but white space on the line: its start
                starts[wanted] = pos
    attrs = _unnamed(findings, data, starts)
    for f in findings:
        name = _RULE_ATTRIBUTES.get(f.rule)
        at = starts.get(f.line or 0)
        if name is None or at is None or f.column is not None or id(f) in attrs:
            continue
        end = data.find(b">", at)
        m = re.search(rb"\s(" + name + rb"|[\w.-]+:" + name + rb")\s*=", data[at:end])
        if m is not None:
            attrs[id(f)] = at + m.start(1)
    places = line_columns(data, [*starts.values(), *attrs.values()])
    out = []
    for f in findings:
        at = attrs.get(id(f), starts.get(f.line or 0))
        if f.column is None and at is not None:
            f = replace(f, column=places[at][1])
        out.append(f)
    return out


#: Findings without a loc whose element the line alone does not tell (several entries on a
#: minified line): the entry without a <loc> (SM103, SM501), the empty <loc> (SM111).
_UNNAMED: Final = {
    "SM103": re.compile(rb"<(?:[\w.-]+:)?url[\s/>]"),
    "SM501": re.compile(rb"<(?:[\w.-]+:)?sitemap[\s/>]"),
    "SM111": re.compile(rb"<((?:[\w.-]+:)?loc)(?:\s[^>]*)?(?:/>|>[ \t\r\n]*</\1\s*>)"),
}
_LOC_TAG: Final = re.compile(rb"<(?:[\w.-]+:)?loc[\s/>]")


def _unnamed(findings: list[Finding], data: bytes, starts: dict[int, int]) -> dict[int, int]:
    """Byte offsets of the findings of :data:`_UNNAMED` (by ``id``), on their line: the
    k-th finding of a rule on a line at the k-th such element there."""
    out: dict[int, int] = {}
    places: dict[tuple[str, int], Iterator[int]] = {}
    for f in findings:
        pattern = _UNNAMED.get(f.rule)
        start = starts.get(f.line or 0)
        if pattern is None or f.loc is not None or f.column is not None or start is None:
            continue
        key = (f.rule, f.line or 0)
        if key not in places:
            nl = data.find(b"\n", start)
            places[key] = _unnamed_places(f.rule, pattern, data, start, len(data) if nl < 0 else nl)
        at = next(places[key], None)
        if at is not None:
            out[id(f)] = at
    return out


def _unnamed_places(
    rule: str, pattern: re.Pattern[bytes], data: bytes, start: int, end: int
) -> Iterator[int]:
    """The offsets, in order, of the elements of ``rule`` between ``start`` and ``end``:
    the entries without a <loc> child, or the empty locs (a generator: a line of 100,000
    entries is walked once, as far as its findings need)."""
    for m in pattern.finditer(data, start, end):
        if rule != "SM111":  # an entry: the ones without a <loc> child
            stop = data.find(b"</" + m.group()[1:-1] + b">", m.end())
            if m.group().endswith(b"/") or stop < 0:
                stop = m.end()
            if _LOC_TAG.search(data, m.end(), stop) is not None:
                continue
        yield m.start()


def _on_line(data: bytes, tags: list[_Tag], line: int, name: str | None) -> int | None:
    """The start tag named ``name`` on ``line`` in an entry, else its first start tag there."""
    first = tags[0][0]
    base = data.count(b"\n", 0, first) + 1
    fallback = None
    for offset, _depth, local, _attrs, _at, end in tags:
        if end:
            continue
        at_line = base + data.count(b"\n", first, offset)
        if at_line < line:
            continue
        if at_line > line:
            break
        if name is None or local.decode("ascii", "replace") == name:
            return offset
        if fallback is None:
            fallback = offset
    return fallback
