"""lint.checks: the checks over one document's bytes and parsed tree. Pure.

:func:`check_document` runs them over the uncompressed bytes and the tree (``root`` may
hold one piece of a large document); :func:`check_compression` looks at the raw bytes and
the name. Rules decided here:

* SM0xx: SM008 gzip data under a name without ``.gz`` (the reader reports the other half),
  SM009 empty lines in a text sitemap (the warning half);
* SM1xx: SM102 a conventional prefix bound elsewhere, SM109 padded values, SM112
  schema-location hints;
* SM2xx and the extensions' URLs: SM204 characters URIs forbid and SM205 non-ASCII
  characters in the raw values (IMG603, VID717, HRE903 for extension URLs), SM206 URLs
  in CDATA;
* SM4xx: SM403 priorities in a legal but non-canonical form.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Final

from lxml import etree

from ...core.finding import Finding, Severity, clip
from ...core.grammar import DECIMAL, PRIORITY_TEXTS
from ...core.model import priority_text
from ...core.namespace import IMAGE_NS, NEWS_NS, SITEMAP_NS, VIDEO_NS, XHTML_NS
from ...core.rules import severity
from ...core.urls import XML_SPACE, iri_to_uri
from .context import CHECKED, Context

__all__ = ["check_compression", "check_document", "may_have_padded_values"]

_LEADING: Final = re.compile(rb">[ \t\r\n]+[^<\s]")
# Searched in the reversed document, so that the literal "</" leads the pattern (fast).
_TRAILING_REVERSED: Final = re.compile(rb"/<[ \t\r\n]+[^>\s]")
_CDATA_URL: Final = re.compile(
    rb"<((?:[A-Za-z_][\w.-]*:)?(?:loc|thumbnail_loc|content_loc|player_loc))>"
    rb"\s*<!\[CDATA\[([^\]]*)"
)
_ENUMERATIONS: Final = frozenset(
    [
        f"{{{SITEMAP_NS}}}changefreq",
        f"{{{VIDEO_NS}}}family_friendly",
        f"{{{VIDEO_NS}}}requires_subscription",
        f"{{{VIDEO_NS}}}live",
        f"{{{NEWS_NS}}}access",
    ]
)
_URL_ELEMENTS: Final = (
    f"{{{SITEMAP_NS}}}loc",
    f"{{{IMAGE_NS}}}loc",
    f"{{{VIDEO_NS}}}thumbnail_loc",
    f"{{{VIDEO_NS}}}content_loc",
    f"{{{VIDEO_NS}}}player_loc",
)
_LOC_TAG: Final = f"{{{SITEMAP_NS}}}loc"
_URL_RULES: Final = {
    f"{{{IMAGE_NS}}}loc": "IMG603",
    f"{{{VIDEO_NS}}}thumbnail_loc": "VID717",
    f"{{{VIDEO_NS}}}content_loc": "VID717",
    f"{{{VIDEO_NS}}}player_loc": "VID717",
}
# RFC 3986: no controls, space, '"', '<', '>', '\\', '^', '`', '{', '|', '}' raw; '%' only
# before two hex digits.
_URI_BAD: Final = re.compile(r'[\x00-\x20\x7f"<>\\^`{|}]|%(?![0-9A-Fa-f]{2})')
# What RFC 3986 never allows raw (a line break is found by counting them).
_URI_FORBIDDEN: Final = (" ", "\t", "\r", '"', "<", ">", "\\", "^", "`", "{", "|", "}", "\x7f")
_BAD_PERCENT: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
_CANONICAL_NS: Final = {"image": IMAGE_NS, "video": VIDEO_NS, "news": NEWS_NS, "xhtml": XHTML_NS}
_PREFIX_OF: Final = {SITEMAP_NS: "", **{v: k for k, v in _CANONICAL_NS.items()}}
_SCHEMA_LOCATIONS: Final = frozenset(
    [
        "http://www.sitemaps.org/schemas/sitemap/0.9/sitemap.xsd",
        "http://www.sitemaps.org/schemas/sitemap/0.9/siteindex.xsd",
        "http://www.google.com/schemas/sitemap-image/1.1/sitemap-image.xsd",
        "http://www.google.com/schemas/sitemap-video/1.1/sitemap-video.xsd",
        "http://www.google.com/schemas/sitemap-news/0.9/sitemap-news.xsd",
        "http://www.w3.org/2002/08/xhtml/xhtml1-strict.xsd",
    ]
)
_XSI: Final = "http://www.w3.org/2001/XMLSchema-instance"
_ODD_PRIORITY: Final = re.compile(rb"<priority>(?!(?:0\.[0-9]|1\.0)</priority>)")


def _tag_name(el: etree._Element) -> str:
    tag = el.tag
    if not isinstance(tag, str):
        return "?"
    ns, _, local = tag[1:].partition("}") if tag[:1] == "{" else ("", "", tag)
    prefix = _PREFIX_OF.get(ns, el.prefix or "")
    return f"<{prefix}:{local}>" if prefix else f"<{local}>"


def _entry_loc(el: etree._Element, root: etree._Element) -> str | None:
    node: etree._Element | None = el
    while node is not None and node.getparent() is not root:
        node = node.getparent()
    if node is None:
        return None
    loc = node.find(f"{{{SITEMAP_NS}}}loc")
    if loc is None or loc.text is None:
        return None
    return loc.text.strip(XML_SPACE)


def _line_of(data: bytes, positions: Iterable[int]) -> list[int]:
    """1-based line numbers of ascending byte offsets, counting each newline once."""
    out: list[int] = []
    line, prev = 1, 0
    for pos in positions:
        line += data.count(b"\n", prev, pos)
        prev = pos
        out.append(line)
    return out


class _DocumentChecks:
    def __init__(
        self,
        root: etree._Element | None,
        data: bytes,
        where: str | None,
        ctx: Context,
        kind: str | None,
        memo: dict[str, bool] | None = None,
        first: bool = True,
    ) -> None:
        self.root = root
        self.kind = kind
        self.data = data
        self.where = where
        self.ctx = ctx
        self.out: list[Finding] = []
        # A document checked piece by piece: ``root`` holds some of its entries, ``data``
        # is the whole document, ``memo`` keeps the byte scans of the first piece, and the
        # checks that read only the bytes run with the first piece.
        self.memo = memo if memo is not None else {}
        self.first = first

    def scan(self, key: str, found: Callable[[bytes], bool]) -> bool:
        """``found(self.data)``, computed once per document."""
        value = self.memo.get(key)
        if value is None:
            value = self.memo[key] = found(self.data)
        return value

    def add(
        self,
        rule: str,
        message: str,
        line: int | None = None,
        loc: str | None = None,
        override: Severity | None = None,
    ) -> None:
        """A finding; ``override`` is a severity the caller decides on purpose (commented
        there), else the catalogue's."""
        sev = override or severity(rule, strict=self.ctx.strict)
        self.out.append(Finding(rule, sev, message, self.where, line, None, loc))


def may_have_padded_values(data: bytes) -> bool:
    """Whether some element's text may start or end with white space (a byte scan; the
    tree confirms it)."""
    return _LEADING.search(data) is not None or _TRAILING_REVERSED.search(data[::-1]) is not None


@CHECKED.decides("SM109")
def _padded(d: _DocumentChecks) -> None:
    """SM109: whitespace around values. Found in the bytes (fast), confirmed in the tree."""
    root = d.root
    if root is None:
        return
    if not d.scan("padded", may_have_padded_values):
        return
    for el in root.iter(etree.Element):
        text = el.text
        if not text or len(el) or (text[0] not in XML_SPACE and text[-1] not in XML_SPACE):
            continue
        value = text.strip(XML_SPACE)
        if not value:
            continue
        enumeration = el.tag in _ENUMERATIONS
        # RULES.md SM109: "an error for enumerations in strict mode" (the XSD rejects the
        # padded value); otherwise the catalogue's warning
        override: Severity | None = "error" if d.ctx.strict and enumeration else None
        extra = " (the XSD rejects a padded enumeration value)" if enumeration else ""
        d.add(
            "SM109",
            f"{_tag_name(el)} {clip(text)!r} has leading or trailing whitespace{extra}; "
            f"write {clip(value)!r}",
            el.sourceline,
            _entry_loc(el, root),
            override,
        )


@CHECKED.decides("SM204", "SM205", "IMG603", "VID717", "HRE903")
def _url_values(d: _DocumentChecks) -> None:
    """SM204 characters URIs forbid and SM205 non-ASCII characters, in the raw values.

    The reader turns both into a URI silently (percent-encoding), so only the document
    shows them. Extension URLs report their own rule (IMG603, VID717, HRE903).
    """
    root = d.root
    if d.kind == "text":  # one URL per line
        for line, raw in enumerate(d.data.splitlines(), 1):
            url = raw.decode("utf-8", "replace").strip()
            if "://" in url:
                _url_value(d, "URL", url, line, url, "SM204")
        return
    if root is None:
        return
    tags = [
        t
        for t in _URL_ELEMENTS
        if t == _LOC_TAG
        or d.scan("ns " + t, lambda data, t=t: t[1 : t.index("}")].encode() in data)  # type: ignore[misc]
    ]
    values = [(el.text or "").strip(XML_SPACE) for tag in tags for el in root.iter(tag)]
    if _suspect(values):
        for el in root.iter(*tags):
            value = (el.text or "").strip(XML_SPACE)
            if not value.isascii() or _URI_BAD.search(value):
                rule = _URL_RULES.get(str(el.tag), "SM204")
                _url_value(d, _tag_name(el), value, el.sourceline, el, rule)
    for el in root.iter(f"{{{XHTML_NS}}}link"):
        href = el.get("href")
        if href:
            _url_value(d, "<xhtml:link> href", href.strip(XML_SPACE), el.sourceline, el, "HRE903")


def _suspect(values: list[str]) -> bool:
    """Whether any value may break SM204/SM205, decided on the joined values (C speed)."""
    blob = "\n".join(values)
    return (
        not blob.isascii()
        or any(c in blob for c in _URI_FORBIDDEN)
        or ("%" in blob and _BAD_PERCENT.search(blob) is not None)
        or blob.count("\n") != max(len(values) - 1, 0)
    )


def _url_value(
    d: _DocumentChecks,
    what: str,
    value: str,
    line: int | None,
    where: etree._Element | str,
    rule: str,
) -> None:
    ascii_ = value.isascii()
    bad = _URI_BAD.search(value) if "://" in value else None
    if ascii_ and bad is None:
        return
    loc = (
        where
        if isinstance(where, str)
        else _entry_loc(where, d.root)
        if d.root is not None
        else None
    )
    if bad is not None:
        char = bad.group()
        why = "a '%' that starts no escape" if char[0] == "%" else f"the character {char!r}"
        d.add(
            rule,
            f"{what} {clip(value)!r} holds {why}, which URIs do not allow raw; "
            f"percent-encode it (a space is %20, '%' is %25)",
            line,
            loc,
        )
    if not ascii_:
        d.add("SM205", _iri_message(what, value), line, loc)


def _iri_message(what: str, text: str) -> str:
    try:
        uri = iri_to_uri(text)
    except ValueError:
        uri = ""
    hint = f"; write {clip(uri)!r}" if uri and uri != text else ""
    return (
        f"{what} {clip(text)!r} holds non-ASCII characters; sitemaps carry URIs "
        f"(percent-encoded UTF-8, punycode hosts){hint}"
    )


@CHECKED.decides("SM206")
def _cdata(d: _DocumentChecks) -> None:
    """SM206: URLs in CDATA sections (permitted by XML, not recommended for URLs)."""
    data = d.data
    if not d.first or b"<![CDATA[" not in data:
        return
    matches = list(_CDATA_URL.finditer(data))
    for m, line in zip(matches, _line_of(data, (m.start() for m in matches)), strict=True):
        name = m.group(1).decode("utf-8", "replace")
        value = m.group(2).decode("utf-8", "replace").strip()
        d.add(
            "SM206",
            f"<{name}> is written as a CDATA section; escape the URL instead "
            "(& as &amp;), as the protocol's entity-escaping table says",
            line,
            value if name == "loc" else None,
            # CDATA is legal XML, only "not recommended": the rule's error half is the raw
            # & or < that breaks the document (SM004)
            override="warning",
        )


@CHECKED.decides("SM102")
def _namespace_bindings(d: _DocumentChecks) -> None:
    """SM102: a conventional prefix bound to another URI (near misses are the reader's)."""
    root = d.root
    if root is None:
        return
    for prefix, uri in root.nsmap.items():
        canonical = _CANONICAL_NS.get(prefix or "")
        if canonical is None or uri == canonical or _near(uri) == _near(canonical):
            continue
        if next(root.iter(f"{{{uri}}}*"), None) is None:
            continue
        d.add(
            "SM102",
            f"The prefix {prefix!r} is bound to {uri!r}; {prefix} elements must use the "
            f"namespace {canonical!r}",
            root.sourceline,
        )


def _near(uri: str) -> str:
    key = uri.strip().lower().rstrip("/")
    return "http://" + key[8:] if key.startswith("https://") else key


@CHECKED.decides("SM112")
def _schema_location(d: _DocumentChecks) -> None:
    """SM112: schema-location hints to non-canonical URLs (never fetched anyway)."""
    root = d.root
    if root is None:
        return
    hint = root.get(f"{{{_XSI}}}schemaLocation")
    if hint:
        words = hint.split()
        for location in words[1::2]:
            if location not in _SCHEMA_LOCATIONS:
                d.add(
                    "SM112",
                    f"The xsi:schemaLocation hint points to {location!r}, not a canonical "
                    "schema URL; the validator uses its bundled schemas and never fetches hints",
                    root.sourceline,
                )
    other = root.get(f"{{{_XSI}}}noNamespaceSchemaLocation")
    if other:
        d.add(
            "SM112",
            f"The xsi:noNamespaceSchemaLocation hint {other!r} is ignored; sitemaps use namespaces",
            root.sourceline,
        )


@CHECKED.decides("SM403")
def _priority_form(d: _DocumentChecks) -> None:
    """SM403: priorities in a legal but non-canonical form (.5, 1, 0.55).

    Found in the bytes when the sitemap namespace is the default one (fast), else in the tree.
    """
    root = d.root
    if root is None:
        return
    if root.prefix is None and not d.scan(
        "priority", lambda data: _ODD_PRIORITY.search(data) is not None
    ):
        return
    for el in root.iter(f"{{{SITEMAP_NS}}}priority"):
        text = el.text
        if text is None or text in PRIORITY_TEXTS:
            continue
        value = text.strip(XML_SPACE)
        if value in PRIORITY_TEXTS or not DECIMAL.fullmatch(value):
            continue  # padded (SM109) or not a number (SM402)
        number = float(value)
        if not 0.0 <= number <= 1.0:
            continue  # SM402
        written = priority_text(value)  # what the writer makes of it: the one rule
        d.add(
            "SM403",
            f"<priority> {value!r} is not in the canonical form; write {written} "
            "(one digit after the point), as sitemapkit write does"
            if written in PRIORITY_TEXTS
            else f"<priority> {value!r} has more than one decimal; the protocol shows 0.0 … "
            f"1.0 in steps of 0.1. sitemapkit keeps the value and writes it as {written}; "
            "give one decimal if you want the canonical form",
            el.sourceline,
            _entry_loc(el, root),
        )


@CHECKED.decides("SM009")
def _blank_lines(d: _DocumentChecks) -> None:
    """SM009, the half the reader leaves: empty lines inside a text sitemap (a warning)."""
    if d.kind != "text" or b"\n\n" not in d.data.replace(b"\r", b"").strip():
        return
    lines = d.data.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            d.add(
                "SM009",
                "Empty line in a text sitemap; a text sitemap holds one URL per line and "
                "nothing else",
                n,
                # the reader's SM009 (a line that is no URL) is the error; an empty line
                # loses nothing, so the half left to the checks is a warning
                override="warning",
            )


_DOCUMENT_CHECKS: Final = (
    _padded,
    _url_values,
    _cdata,
    _namespace_bindings,
    _schema_location,
    _priority_form,
    _blank_lines,
)


def check_document(
    root: etree._Element | None,
    data: bytes,
    *,
    kind: str | None,
    where: str | None,
    ctx: Context,
    memo: dict[str, bool] | None = None,
    first: bool = True,
) -> list[Finding]:
    """The checks over one document's uncompressed bytes and parsed tree.

    ``root`` is the parsed document (None for a text sitemap or a document that is not
    well-formed, for which only the byte-level checks run); ``kind`` the reader's.

    A large document may be checked piece by piece: ``root`` then holds a run of its
    entries under a copy of the root element, ``data`` is still the whole document,
    one ``memo`` dict is shared by the pieces and ``first`` is true for the first piece
    only. Findings about the root element come again with every piece (drop repeats).
    """
    if kind not in ("urlset", "sitemapindex", "text"):
        return []  # RSS and Atom feeds are read, not held to the sitemap rules
    d = _DocumentChecks(root, data, where, ctx, kind, memo, first)
    for check in _DOCUMENT_CHECKS:
        check(d)
    return d.out


@CHECKED.decides("SM008")
def check_compression(head: bytes, name: str | None, *, where: str | None) -> list[Finding]:
    """SM008, the half the reader leaves: gzip data under a name without ``.gz``.

    (A ``.gz`` name over plain data is reported by the reader.)
    """
    if name is None or head[:2] != b"\x1f\x8b":
        return []
    path = name.split("?", 1)[0].split("#", 1)[0]
    if path.endswith((".gz", ".gzip")) or path.endswith("/") or "." not in path.rsplit("/", 1)[-1]:
        return []
    return [
        Finding(
            "SM008",
            severity("SM008"),
            f"{name!r} holds gzip data but is not named .gz; name it .xml.gz, or serve it with "
            "Content-Encoding: gzip",
            where,
        )
    ]
