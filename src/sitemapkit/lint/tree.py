"""lint: the tree pass of one document — the structural checks and the XSD on its parsed tree.

Pure: uncompressed bytes in, findings (and the entries' anchors) out; no file, socket or
clock. It imports core and lint, never io: :mod:`sitemapkit.validation` runs it in a worker
thread or a child process beside the reader.

Three ways through, one result: the whole tree (``tree_pass``); a large urlset or index in
pieces of a few thousand entries, in bounded memory (``piece_pass``); and a document the
reader's scanner read whole, where only the prolog, root and first entry need a tree
(``plain_pass``). Each pass keeps at most ``keep_per_rule`` findings of a rule and counts
the rest, so that a hostile document cannot fill the memory with findings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, Final

from lxml import etree

from ..core.finding import Finding
from ..core.namespace import IMAGE_NS, NEWS_NS, SITEMAP_NS, VIDEO_NS, XHTML_NS
from ..core.parse.prolog import xml_start
from ..core.parse.recovery import legal_refs
from ..core.urls import unescape
from .checks import Context, check_document, entry_anchors, may_have_padded_values
from .schema import schema_findings

__all__ = [
    "DEFAULTS",
    "KEEP_PER_RULE",
    "PIECES_FROM",
    "Place",
    "Scan",
    "TreeLimits",
    "dedupe",
    "is_misbound",
    "keep_first",
    "kind_of",
    "looks_plain",
    "piece_pass",
    "place",
    "plain_pass",
    "tree_pass",
]

#: Findings of one rule each pass keeps of a document (the reader's, the tree pass's); the
#: others are only counted. A hostile document of 500,000 bad entries held 1.5 million
#: findings in each pass (1 GB) before the per-rule cap at the end.
KEEP_PER_RULE: Final = 10_000
#: Documents larger than this are checked piece by piece (see piece_pass).
PIECES_FROM: Final = 4 << 20
#: Entries per piece: a few MB of tree.
PIECE: Final = 5_000

_CHUNK: Final = 1 << 20
_LOOK: Final = 1 << 16
_SPACE: Final = b" \t\r\n"
_BOM: Final = b"\xef\xbb\xbf"
_UTF8_DECL: Final = re.compile(rb"encoding\s*=\s*[\"']utf-?8[\"']", re.IGNORECASE)
# What looks_plain rules out besides padded values: prefixed elements.
_PREFIXED_TAG: Final = re.compile(rb"</?[A-Za-z_][-\w.]*:")
_NOT_LF: Final = re.compile(rb"[^\n]")
_LOC_ELEMENT: Final = re.compile(rb"<loc>([^<]*)</loc>")
_KINDS: Final = {"urlset": "urlset", "sitemapindex": "sitemapindex", "rss": "rss", "feed": "atom"}
#: The prefixes whose namespace the protocol fixes (SM102 when one is bound elsewhere).
_CONVENTIONAL: Final = {"image": IMAGE_NS, "video": VIDEO_NS, "news": NEWS_NS, "xhtml": XHTML_NS}
#: Namespaces that are never "unknown" (SM107): the protocol's, its extensions', XSI.
_KNOWN: Final = frozenset(
    [SITEMAP_NS, *_CONVENTIONAL.values(), "http://www.w3.org/2001/XMLSchema-instance"]
)

#: How the tree pass parses: hardened (no entities, DTD or network), only elements kept.
_TREE_OPTIONS: Final[dict[str, Any]] = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "huge_tree": False,
    "remove_blank_text": True,
    "remove_comments": True,
    "remove_pis": True,
}

#: Where a finding sits: its line and its entry's loc (stripped), the fields both passes set.
Place = tuple[int | None, str | None]


@dataclass(frozen=True, slots=True)
class TreeLimits:
    """The tree pass's thresholds; the defaults are the product's, tests lower them."""

    #: Findings of a rule a pass keeps of a document; the others are counted.
    keep_per_rule: int = KEEP_PER_RULE
    #: Documents from this size on (bytes) are checked piece by piece.
    pieces_from: int = PIECES_FROM
    #: Entries per piece.
    piece: int = PIECE


#: The product's thresholds.
DEFAULTS: Final = TreeLimits()


@dataclass(slots=True)
class Scan:
    """The tree pass of one document: its tree, or (checked piece by piece) the
    ``(raw loc, line)`` anchors of its entries."""

    root: etree._Element | None
    kind: str | None
    findings: list[Finding]
    anchors: Iterable[tuple[str, int]] | None = None
    #: Findings per rule beyond ``keep_per_rule``, not in ``findings``.
    unlisted: dict[str, int] = field(default_factory=dict)
    #: Where the first elements of the namespaces an SM102 of this pass names are (see dedupe).
    misbound: set[Place] = field(default_factory=set)
    #: Where more than one foreign namespace starts (see _FirstPlaces).
    crowded: set[Place] = field(default_factory=set)
    #: The document is a plain urlset the reader's scanner read whole (see plain_pass).
    plain: bool = False
    #: The entries' byte spans (``lint.checks.position.entry_spans``), when the pass ran
    #: in another process, which finds them while the reader reads.
    spans: Sequence[int] | None = None
    #: Where those entries' ``<loc>`` start, found with them.
    locs: Sequence[int] | None = None


def place(f: Finding) -> Place:
    """Where ``f`` sits, as ``Scan.misbound`` records it."""
    return f.line, (f.loc.strip(" \t\r\n") or None) if f.loc is not None else None


def dedupe(
    candidates: Iterable[Finding], known: list[Finding], misbound: AbstractSet[Place] = frozenset()
) -> list[Finding]:
    """Drop findings that repeat a known one: same rule on the same entry (or line).

    The tree pass (XSD and structure) finds much of what the reader already reported; the
    reader's findings win, then the structural checks', then the schema's. An extension
    prefix bound to a wrong URI is SM102; the "unknown namespace" warning (SM107) on the
    first element of that namespace says it twice: ``misbound`` holds those places.
    """
    by_loc = {(f.rule, f.loc) for f in known if f.loc is not None}
    by_line = {(f.rule, f.line) for f in known if f.loc is None}
    anywhere = {f.rule for f in known if f.loc is None and f.line is None}
    out: list[Finding] = []
    for f in candidates:
        if f.loc is not None and (f.rule, f.loc) in by_loc:
            continue
        if f.loc is None and ((f.rule, f.line) in by_line or f.rule in anywhere):
            continue
        if misbound and is_misbound(f, misbound):
            continue
        out.append(f)
        if f.loc is not None:
            by_loc.add((f.rule, f.loc))
        else:
            by_line.add((f.rule, f.line))
    return out


def is_misbound(f: Finding, misbound: AbstractSet[Place]) -> bool:
    """Whether ``f`` is the "unknown namespace" warning of a namespace an SM102 names."""
    return f.rule == "SM107" and f.severity == "warning" and place(f) in misbound


class _FirstPlaces:
    """Where the first elements of the root's foreign namespaces are: the first one, where
    the schema reports an unknown namespace, and the first child of an entry, where the
    reader does. A place where two foreign namespaces start is *crowded*: which of them a
    warning there is about is not known, so it is kept (see dedupe)."""

    def __init__(self, root: etree._Element) -> None:
        nsmap = root.nsmap
        self.misbound = {  # bound on the root to a conventional prefix not theirs: SM102
            uri for prefix, uri in nsmap.items() if _CONVENTIONAL.get(prefix or "", uri) != uri
        }
        self.foreign = foreign = {uri for uri in nsmap.values() if uri not in _KNOWN}
        self.todo = {(ns, in_entry) for ns in foreign for in_entry in (False, True)}
        self.found: dict[tuple[str, bool], Place] = {}

    def scan(self, root: etree._Element, *, rest: bool = False) -> None:
        """Look for the pending first elements under ``root`` (the document or a piece;
        the ``rest`` of a piece pass holds the root's other children, which come first)."""
        pending = self.todo | ({(ns, False) for ns in self.foreign} if rest else set())
        for ns, in_entry in pending:
            for el in root.iter(f"{{{ns}}}*"):
                entry = _entry_of(el, root)
                if in_entry and (entry is None or el.getparent() is not entry):
                    continue
                at = (el.sourceline, _loc_of(entry))
                known = self.found.get((ns, in_entry))
                if known is None or (at[0] or 0) < (known[0] or 0):
                    self.found[ns, in_entry] = at
                self.todo.discard((ns, in_entry))
                break

    def crowded(self) -> set[Place]:
        starts: dict[Place, set[str]] = {}
        for (ns, _), at in self.found.items():
            starts.setdefault(at, set()).add(ns)
        return {at for at, spaces in starts.items() if len(spaces) > 1}

    def places(self, named: bool) -> set[Place]:
        """The places of the misbound namespaces' first elements, when an SM102 ``named``
        them, less the crowded ones."""
        if not named:
            return set()
        return {at for (ns, _), at in self.found.items() if ns in self.misbound} - self.crowded()


def _entry_of(el: etree._Element, root: etree._Element) -> etree._Element | None:
    while (parent := el.getparent()) is not None and parent is not root:
        el = parent
    return el if parent is root else None


def _loc_of(entry: etree._Element | None) -> str | None:
    if entry is None:
        return None
    tag = str(entry.tag)
    ns = tag[: tag.index("}") + 1] if tag.startswith("{") else ""
    loc = entry.find(ns + "loc")
    text = loc.text if loc is not None else None
    return (text.strip(" \t\r\n") or None) if text else None


def looks_plain(plain: bytes) -> bool:
    """Whether a urlset seems to hold nothing but what the reader's scanner reads (one
    loc, lastmod, changefreq, priority per entry; see core.parse): no comment, CDATA,
    DOCTYPE, prefixed element or padded value in its first 64 KiB. The reader confirms it
    for the whole document (``SitemapParser.scanned_all`` and ``scanned_padded``); a
    document that is not plain after all has its tree pass after the reader, not beside
    it."""
    head = plain[:_LOOK]
    return (
        b"</url>" in head
        and b"<!--" not in head
        and b"<![CDATA[" not in head
        and b"<!DOCTYPE" not in head
        and _PREFIXED_TAG.search(head) is None
        and not may_have_padded_values(head)
    )


def plain_pass(plain: bytes, where: str, ctx: Context) -> Scan:
    """The tree pass of a document the reader's scanner read whole.

    Every entry passed the reader's fast path, which is at least as strict as the schemas
    and the structural checks for loc, lastmod, changefreq and priority (the order of the
    scanner's pattern is the schemas' too), and the document holds no markup those checks
    look at (``looks_plain``). So the prolog, the root element and the first entry are
    checked as a document of their own (their lines are the document's), and the entries'
    anchors come from the bytes, only if a finding needs its line. (That head is at most
    64 KiB and one entry: no limit of ``TreeLimits`` can bind on it.)
    """
    end = plain.index(b"</url>") + len(b"</url>")
    head = tree_pass(plain[:end] + b"</urlset>", where, ctx)
    return Scan(None, head.kind, head.findings, _plain_anchors(plain), plain=True)


def _plain_anchors(plain: bytes) -> Iterator[tuple[str, int]]:
    """``(raw loc, line)`` of each entry of a plain urlset, from its bytes."""
    line, last = 1, 0
    for m in _LOC_ELEMENT.finditer(plain):
        line += plain.count(b"\n", last, m.start())
        last = m.start()
        raw = m.group(1).decode("utf-8", "replace")
        yield unescape(raw), line


def tree_pass(plain: bytes, where: str, ctx: Context, limits: TreeLimits = DEFAULTS) -> Scan:
    """Parse the uncompressed XML document once: structural checks, then the XSD."""
    text = _xml_text(plain)
    if text is None:
        return Scan(None, None, [])
    if len(text) > limits.pieces_from:
        scan = piece_pass(text, where, ctx, limits)
        if scan is not None:
            return scan
    try:
        root = etree.fromstring(text, etree.XMLParser(**_TREE_OPTIONS))
    except etree.XMLSyntaxError:
        return _damaged(text)
    kind = kind_of(root)
    findings = check_document(root, text, kind=kind, where=where, ctx=ctx)
    first = _FirstPlaces(root)
    first.scan(root)
    misbound = first.places(any(f.rule == "SM102" for f in findings))
    findings += dedupe(
        schema_findings(root.getroottree(), source=text, where=where, strict=ctx.strict),
        findings,
        misbound,
    )
    unlisted: dict[str, int] = {}
    kept = keep_first(findings, {}, unlisted, limits.keep_per_rule)
    return Scan(root, kind, kept, None, unlisted, misbound, first.crowded())


def _damaged(text: bytes) -> Scan:
    """The reader reports why a document is not well-formed. A recovered tree still places
    the findings of the records read before the damage (values past it may be mangled: no
    checks)."""
    recover = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, recover=True)
    try:
        damaged = etree.fromstring(legal_refs(text), recover)
    except etree.XMLSyntaxError:
        damaged = None
    if damaged is None:
        return Scan(None, None, [])
    return Scan(damaged, kind_of(damaged), [])


def keep_first(
    findings: Iterable[Finding], counts: dict[str, int], unlisted: dict[str, int], keep: int
) -> list[Finding]:
    """The findings while their rule's count (kept in ``counts``) is within ``keep``; the
    others are counted in ``unlisted``."""
    kept = []
    for f in findings:
        n = counts[f.rule] = counts.get(f.rule, 0) + 1
        if n <= keep:
            kept.append(f)
        else:
            unlisted[f.rule] = unlisted.get(f.rule, 0) + 1
    return kept


def piece_pass(text: bytes, where: str, ctx: Context, limits: TreeLimits = DEFAULTS) -> Scan | None:
    """The tree pass in bounded memory, for a large urlset or index.

    The document is parsed as a stream; every ``limits.piece`` entries, the finished
    entries move under a copy of the root element (their line numbers stay theirs), and
    that piece is checked and validated against the schemas on its own, then dropped. The
    schemas' content model is per entry, so the pieces together get the findings the whole
    tree gets (the count limit is the reader's SM110); the columns of schema findings are
    not placed here but by the driver's locator, from the bytes, as the reader's are.
    Findings about the root come once. Returns
    ``None`` (check the whole tree) for a document that is not well-formed, has a DOCTYPE,
    or is not a urlset or an index.
    """
    root = _sniff_root(text)
    if root is None or root.getroottree().docinfo.doctype:
        return None
    kind = kind_of(root)
    if kind not in ("urlset", "sitemapindex"):
        return None
    pieces = _Pieces(text, where, ctx, kind, limits, _FirstPlaces(root))
    ns = str(root.tag)[: str(root.tag).index("}") + 1] if str(root.tag).startswith("{") else ""
    return pieces.run(ns + ("url" if kind == "urlset" else "sitemap"))


def _sniff_root(text: bytes) -> etree._Element | None:
    """The root element of a document, from its first bytes; None when not well-formed."""
    sniff = etree.XMLPullParser(events=("start",), **_TREE_OPTIONS)
    try:
        for i in range(0, len(text), 1 << 16):
            sniff.feed(text[i : i + (1 << 16)])
            root = next((el for _, el in sniff.read_events()), None)
            if root is not None:
                return root
    except etree.XMLSyntaxError:
        return None
    return None


class _Pieces:
    """One piece pass: the pieces' findings so far, deduped across pieces and capped."""

    def __init__(
        self,
        text: bytes,
        where: str,
        ctx: Context,
        kind: str,
        limits: TreeLimits,
        first: _FirstPlaces,
    ) -> None:
        self.text, self.where, self.ctx, self.kind, self.limits = text, where, ctx, kind, limits
        self.findings: list[Finding] = []
        self.known: set[tuple[str, str, int | None, int | None, str | None]] = set()
        self.anchors: list[tuple[str, int]] = []
        self.memo: dict[str, bool] = {}
        self.seen_ns: set[str] = set()
        self.counts: dict[str, int] = {}
        self.unlisted: dict[str, int] = {}
        self.first = True
        self.first_places = first
        self.named = False  # whether an SM102 names the misbound namespaces

    def run(self, entry: str) -> Scan | None:
        try:
            root = self._stream(entry)
        except etree.XMLSyntaxError:
            return None
        rest = list(root)  # the entries not moved yet and any other children, in order
        if rest or self.first:
            self._check(root, rest, last=True)
        first = self.first_places
        misbound = first.places(self.named)
        return Scan(
            None, self.kind, self.findings, self.anchors, self.unlisted, misbound, first.crowded()
        )

    def _stream(self, entry: str) -> etree._Element:
        """Parse the document, checking each full piece of entries; returns the root."""
        # only the entries' ends: other children of the root stay there for the last piece
        parser = etree.XMLPullParser(events=("end",), tag=entry, **_TREE_OPTIONS)
        root: etree._Element | None = None
        batch: list[etree._Element] = []
        text = self.text
        for i in range(0, len(text), _CHUNK):
            parser.feed(text[i : i + _CHUNK])
            for _event, el in parser.read_events():
                parent = el.getparent()
                if root is None and parent is not None and parent.getparent() is None:
                    root = parent
                if parent is root and root is not None:
                    batch.append(el)
                    if len(batch) >= self.limits.piece:
                        self._check(root, batch)
                        batch = []
        document = parser.close()
        return document if root is None else root

    def _check(
        self, root: etree._Element, entries: list[etree._Element], *, last: bool = False
    ) -> None:
        part = etree.Element(root.tag, attrib=dict(root.attrib), nsmap=root.nsmap)
        part.sourceline = root.sourceline  # type: ignore[misc]  # settable in lxml
        part.extend(entries)
        ctx, where = self.ctx, self.where
        own = check_document(
            part, self.text, kind=self.kind, where=where, ctx=ctx, memo=self.memo, first=self.first
        )
        if self.first_places.todo or last:
            self.first_places.scan(part, rest=last)
        self.named = self.named or any(f.rule == "SM102" for f in own)
        schema = schema_findings(
            part.getroottree(), where=where, strict=ctx.strict, seen_ns=self.seen_ns
        )
        # the SM102 of the root comes with the first piece, as the whole tree's would
        own += dedupe(schema, own, self.first_places.places(self.first and self.named))
        self.first = False
        self.findings.extend(keep_first(self._fresh(own), self.counts, self.unlisted, self.keep))
        self.anchors.extend(entry_anchors(part, self.kind))

    @property
    def keep(self) -> int:
        return self.limits.keep_per_rule

    def _fresh(self, own: list[Finding]) -> list[Finding]:
        """The findings no earlier piece had (a root finding comes once)."""
        fresh = []
        for f in own:
            key = (f.rule, f.message, f.line, f.column, f.loc)
            if key not in self.known:
                if self.counts.get(f.rule, 0) < self.keep:
                    self.known.add(key)  # past the limit nothing is kept: no key either
                fresh.append(f)
        return fresh


def kind_of(root: etree._Element) -> str | None:
    """The document kind of a parsed root: urlset, sitemapindex, rss, atom, or None."""
    tag = root.tag if isinstance(root.tag, str) else ""
    return _KINDS.get(tag.rsplit("}", 1)[-1])


def _xml_text(plain: bytes) -> bytes | None:
    """The document as libxml2 should see it, or None when it is not XML.

    Whitespace before the XML declaration, or text a server printed before it (SM003,
    reported by the reader), would stop libxml2, so they and the declaration are blanked
    out: every byte but a line feed becomes a space, which keeps the lines, columns and
    byte offsets of everything after them where they are.
    """
    junk = xml_start(plain)
    head = plain[:3]
    at = junk or (3 if head == _BOM else 0)
    body = plain[at:]
    stripped = body.lstrip(_SPACE)
    if not stripped.startswith(b"<"):
        return None
    if (junk or len(stripped) < len(body)) and stripped.startswith(b"<?xml"):
        end = stripped.find(b"?>")
        if end < 0:
            return None
        decl = stripped[: end + 2]
        if b"encoding" in decl and not _UTF8_DECL.search(decl):
            return None
        cut = len(plain) - len(stripped) + end + 2
        return _NOT_LF.sub(b" ", plain[:cut]) + plain[cut:]
    if junk:
        return _NOT_LF.sub(b" ", plain[:junk]) + plain[junk:]
    return plain
