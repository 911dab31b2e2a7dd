"""lint: errors of the bundled XSDs, translated into findings of the rule catalogue. Pure.

:mod:`.xsd` compiles the official schemas offline; this module validates a parsed tree with
them and turns each libxml2 message (``Element '{ns}lastmod': 'x' is not a valid value of
the union type …``) into a :class:`~sitemapkit.core.finding.Finding`: the rule it breaks
(decided from the element, its siblings and its value, not from the message alone), a
sentence that says what is wrong and how to fix it, and the line and column of the
element's start tag.

Columns come from a second read of the source with expat, and only when there are errors
(libxml2 keeps no columns). The XSD checks structure, order and value types; what it cannot
express (absolute URLs, limits, codes, date granularity) is left to the other checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from lxml import etree

from ..core.finding import Finding, Severity, clip
from ..core.model import CHANGEFREQS
from ..core.namespace import IMAGE_NS, NEWS_NS, SITEMAP_NS, VIDEO_NS, XHTML_NS
from ..core.w3cdate import parse_w3c
from . import xsd
from .rules import severity

__all__ = ["MAPPED", "NAMESPACES", "schema_findings"]


#: Namespace → the prefix people write it with.
NAMESPACES: Final = {
    SITEMAP_NS: "",
    IMAGE_NS: "image",
    VIDEO_NS: "video",
    NEWS_NS: "news",
    XHTML_NS: "xhtml",
}

#: How much of a value a message quotes (it also quotes the schema's words: shorter than
#: the checks' 80).
_QUOTE: Final = 60

#: Every rule an XSD error can be mapped onto (the catalogue test checks the two agree).
_MAPPED: Final = """SM101 SM102 SM103 SM104 SM105 SM106 SM107 SM108 SM109 SM111 SM203 SM204 SM301
    SM302
    SM303 SM304 SM401 SM402 SM501 IMG601 IMG603 IMG605 VID701 VID702 VID703 VID704 VID705
    VID707 VID708 VID709 VID710 VID712 VID713 VID714 VID715 VID716 VID717 NEWS801 NEWS804
    NEWS805 NEWS808 HRE901 HRE902 HRE903"""
MAPPED: Final = frozenset(_MAPPED.split())

_MESSAGE: Final = re.compile(r"Element '([^']*)'(?:, attribute '([^']*)')?: (.*)", re.S)
_NOT_EXPECTED: Final = re.compile(
    r"This element is not expected\.(?: Expected is (?:one of )?\( (.*) \)\.)?"
)
_MISSING: Final = re.compile(r"Missing child element\(s\)\. Expected is (?:one of )?\( (.*) \)\.")
_FACET: Final = re.compile(r"\[facet '(\w+)'\] (.*)", re.S)
_BAD_VALUE: Final = re.compile(
    r"'(.*)' is not a valid value of the (?:local )?(\w+) type(?: '([^']*)')?", re.S
)
_ATTR_NOT_ALLOWED: Final = re.compile(r"The attribute '([^']*)' is not allowed")
_ATTR_MISSING: Final = re.compile(r"The attribute '([^']*)' is required but missing")
_FACET_VALUE: Final = re.compile(r"The value '(.*?)' ")
_LENGTH: Final = re.compile(r"length of '(\d+)'.*length of '(\d+)'")
_LIMIT: Final = re.compile(r"allowed \('([^']*)'\)")
_SET: Final = re.compile(r"\{(.*)\}")
_PATTERN: Final = re.compile(r"pattern '(.*)'")
_OTHER_ITEM: Final = re.compile(r"##other\{[^}]*\}\*")
_CLARK: Final = re.compile(r"\{([^{}\s]*)\}(?=[A-Za-z_])")
_SPACE: Final = " \t\r\n"

_DATE_FORM: Final = "YYYY-MM-DD or YYYY-MM-DDThh:mm:ss+hh:mm"
_ORDER: Final = {
    SITEMAP_NS: "loc, lastmod, changefreq, priority, then extension elements",
    IMAGE_NS: "image:loc, caption, geo_location, title, license",
    VIDEO_NS: "the video schema's sequence (thumbnail_loc, title, description, content_loc, "
    "player_loc, duration, expiration_date, rating, view_count, publication_date, tag, "
    "family_friendly, restriction, requires_subscription, uploader, platform, live …)",
    NEWS_NS: "news:publication, publication_date, title",
}
_VIDEO_REQUIRED: Final = ("thumbnail_loc", "title", "description")
_NEWS_REQUIRED: Final = ("publication", "publication_date", "title")
_NEWS_KNOWN: Final = frozenset(
    [
        "publication",
        "name",
        "language",
        "access",
        "genres",
        "publication_date",
        "title",
        "keywords",
        "stock_tickers",
    ]
)
_YES_NO: Final = frozenset(["family_friendly", "requires_subscription", "live"])
_VIDEO_VALUE_RULES: Final = {
    "thumbnail_loc": "VID717",
    "content_loc": "VID717",
    "player_loc": "VID717",
    "title": "VID703",
    "description": "VID702",
    "duration": "VID704",
    "rating": "VID705",
    "view_count": "VID716",
    "category": "VID716",
    "price": "VID716",
    "id": "VID716",
    "restriction": "VID707",
    "platform": "VID708",
    "uploader": "VID713",
    "gallery_loc": "VID714",
    "tvshow": "VID714",
    "content_segment_loc": "VID715",
}


@dataclass(frozen=True, slots=True)
class _Error:
    line: int
    path: str
    message: str


def _split(tag: object) -> tuple[str, str]:
    if not isinstance(tag, str):
        return "", ""
    if tag[:1] == "{":
        ns, _, local = tag[1:].partition("}")
        return ns, local
    return "", tag


def _name(el: etree._Element) -> str:
    """``<loc>``, ``<image:loc>``: an element as people write it."""
    ns, local = _split(el.tag)
    prefix = NAMESPACES.get(ns)
    if prefix is None:
        prefix = el.prefix or ""
    return f"<{prefix}:{local}>" if prefix else f"<{local}>"


def _readable(text: str) -> str:
    """A libxml2 name list with prefixes instead of ``{uri}`` and ``##other`` spelled out."""
    text = _OTHER_ITEM.sub("an extension element", text)
    return _CLARK.sub(
        lambda m: (
            f"{NAMESPACES[m.group(1)]}:"
            if NAMESPACES.get(m.group(1))
            else ""
            if m.group(1) in NAMESPACES
            else m.group(0)
        ),
        text,
    )


def _expected(text: str | None) -> str:
    if not text:
        return ""
    items = [i.strip() for i in _readable(text).split(",")]
    items = [i if i.startswith("an ") else f"<{i}>" for i in items]
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " or " + items[-1]


def _value(el: etree._Element) -> str:
    return el.text or ""


def _entry(el: etree._Element, root: etree._Element) -> etree._Element | None:
    """The child of the root (``<url>``, ``<sitemap>``) that holds ``el``."""
    node: etree._Element | None = el
    while node is not None:
        parent = node.getparent()
        if parent is root:
            return node
        node = parent
    return None


def _entry_loc(entry: etree._Element | None) -> str | None:
    if entry is None:
        return None
    for child in entry:
        if child.tag == f"{{{SITEMAP_NS}}}loc":
            text = child.text
            return text.strip(_SPACE) if text else None
    return None


def date_rule(value: str, invalid: str = "SM301", impossible: str = "SM304") -> tuple[str, str]:
    """The rule a date the XSD refused breaks, and why (granularity decides, DATETIME.md §2)."""
    text = value.strip(_SPACE)
    if not text:
        return "SM111", "is empty"
    try:
        parsed = parse_w3c(text)
    except ValueError as exc:
        detail = str(exc)
        if "is not a W3C Datetime" in detail:
            return invalid, f"is not a W3C Datetime; use {_DATE_FORM}"
        return impossible, detail.replace(repr(text), "the value", 1)
    if parsed.granularity < 3:
        return "SM302", "is coarser than a day, which the XSD rejects; give at least YYYY-MM-DD"
    if parsed.granularity == 4:
        return "SM303", "has no seconds, which the XSD rejects; write hh:mm:ss"
    return invalid, f"is not accepted by the XSD; use {_DATE_FORM}"


def _preceded_by_same(el: etree._Element) -> bool:
    tag = el.tag
    return any(sib.tag == tag for sib in el.itersiblings(preceding=True))


def _has_child(el: etree._Element | None, ns: str, local: str) -> bool:
    return el is not None and el.find(f"{{{ns}}}{local}") is not None


def _not_expected(el: etree._Element, expected: str | None) -> tuple[str, str]:
    ns, local = _split(el.tag)
    parent = el.getparent()
    pns, plocal = _split(parent.tag) if parent is not None else ("", "")
    where = _name(parent) if parent is not None else "the document"
    exp = _expected(expected)
    tail = f"; expected {exp}" if exp else ""
    if ns == SITEMAP_NS and pns == SITEMAP_NS and plocal in ("url", "sitemap"):
        if not _has_child(parent, SITEMAP_NS, "loc"):
            rule = "SM103" if plocal == "url" else "SM501"
            return rule, f"{where} has no <loc>; add it as the first child"
        known = (
            ("loc", "lastmod", "changefreq", "priority") if plocal == "url" else ("loc", "lastmod")
        )
        if local in known:
            if _preceded_by_same(el):
                rule = "SM501" if plocal == "sitemap" else "SM103" if local == "loc" else "SM104"
                return rule, f"{where} has more than one <{local}>; keep one"
            return "SM105", (
                f"<{local}> is out of order in {where}{tail}. Write the children "
                f"in the order {_ORDER[SITEMAP_NS]}"
            )
        if plocal == "sitemap" and local in ("changefreq", "priority", "url"):
            return "SM501", f"<sitemap> may hold only <loc> and <lastmod>, not <{local}>"
        return "SM107", f"Unknown element <{local}> in {where}{tail}; remove it"
    if ns == SITEMAP_NS:
        if (plocal, local) in (("urlset", "sitemap"), ("sitemapindex", "url")):
            return "SM107", (
                f"<{local}> does not belong in <{plocal}>: an index lists <sitemap> "
                "entries, a sitemap lists <url> entries"
            )
        return "SM107", f"Unexpected {_name(el)} in {where}{tail}"
    if ns == IMAGE_NS:
        if pns == IMAGE_NS and not _has_child(parent, IMAGE_NS, "loc"):
            return "IMG601", f"{where} has no <image:loc>; add it as the first child"
        return (
            "IMG605",
            f"{_name(el)} is not allowed here in {where}{tail}. Use the order {_ORDER[IMAGE_NS]}",
        )
    if ns == VIDEO_NS and pns == VIDEO_NS:
        if plocal == "video":
            missing = [n for n in _VIDEO_REQUIRED if not _has_child(parent, VIDEO_NS, n)]
            if missing:
                return "VID701", f"<video:video> has no <video:{missing[0]}>; add it"
            if (
                local == "tag"
                and parent is not None
                and len(parent.findall(f"{{{VIDEO_NS}}}tag")) > 32
            ):
                return "VID712", "<video:video> has more than 32 <video:tag> elements; keep 32"
            if _preceded_by_same(el):
                rule = {"restriction": "VID707", "platform": "VID708", "uploader": "VID713"}.get(
                    local, "VID715"
                )
                return rule, f"<video:video> has more than one <video:{local}>; keep one"
        return "VID715", (
            f"{_name(el)} is not allowed here in {where}{tail}. Use {_ORDER[VIDEO_NS]}"
        )
    if ns == NEWS_NS and pns == NEWS_NS:
        news = parent if plocal == "news" else parent.getparent() if parent is not None else None
        absent = [n for n in _NEWS_REQUIRED if not _has_child(news, NEWS_NS, n)]
        if plocal == "news" and absent:
            return "NEWS801", f"<news:news> has no <news:{absent[0]}>; add it"
        if local not in _NEWS_KNOWN:
            return "SM107", f"Unknown element {_name(el)} in {where}; remove it"
        return "SM105", f"{_name(el)} is out of order in {where}{tail}. Use {_ORDER[NEWS_NS]}"
    if ns == XHTML_NS:
        return "HRE901", f"{_name(el)} is not allowed here{tail}; put <xhtml:link> inside <url>"
    return "SM107", f"Unexpected {_name(el)} in {where}{tail}"


def _missing(el: etree._Element, expected: str | None) -> tuple[str, str]:
    ns, local = _split(el.tag)
    exp = _expected(expected)
    text = f"{_name(el)} is missing {exp}" if exp else f"{_name(el)} is missing a child element"
    if ns == SITEMAP_NS:
        if local in ("urlset", "sitemapindex"):
            entry = "url" if local == "urlset" else "sitemap"
            return "SM106", f"<{local}> lists no <{entry}>; the XSD requires at least one"
        return ("SM103" if local == "url" else "SM501" if local == "sitemap" else "SM107"), text
    rule = {IMAGE_NS: "IMG601", VIDEO_NS: "VID701", NEWS_NS: "NEWS801"}.get(ns, "SM107")
    return rule, text + "; add it"


def _facet_text(el: etree._Element, attr: str | None, facet: str, rest: str) -> str:
    what = f"The attribute {attr!r} of {_name(el)}" if attr else _name(el)
    m = _FACET_VALUE.search(rest)
    value = f" {clip(m.group(1), _QUOTE)!r}" if m else ""
    if facet == "enumeration":
        s = _SET.search(rest)
        allowed = s.group(1).replace("'", "") if s else "the schema's values"
        return f"{what}{value} is not one of {allowed}"
    if facet in ("maxLength", "minLength", "length"):
        n = _LENGTH.search(rest)
        if n:
            bound = "at most" if facet == "maxLength" else "at least"
            return f"{what} is {n.group(1)} characters long; the XSD allows {bound} {n.group(2)}"
    if facet in ("maxInclusive", "minInclusive", "maxExclusive", "minExclusive"):
        lim = _LIMIT.search(rest)
        side = "above the maximum" if facet.startswith("max") else "below the minimum"
        if lim:
            return f"{what}{value} is {side} {lim.group(1)} that the XSD allows"
    if facet == "pattern":
        p = _PATTERN.search(rest)
        if p:
            return f"{what}{value} does not match the XSD pattern {p.group(1)!r}"
    return f"{what}: {rest.rstrip('.')}"


def _value_rule(el: etree._Element, attr: str | None, value: str) -> str:
    """The rule a value (of an element, or of its attribute ``attr``) the XSD refused breaks."""
    ns, local = _split(el.tag)
    stripped = value.strip(_SPACE)
    if ns == XHTML_NS:
        return {"hreflang": "HRE902", "href": "HRE903"}.get(attr or "", "HRE901")
    if attr is None and not stripped and ns in (SITEMAP_NS, IMAGE_NS, NEWS_NS):
        return "SM111"
    if ns == SITEMAP_NS:
        if local == "loc":
            return "SM203" if stripped and (len(stripped) < 12 or len(stripped) > 2048) else "SM204"
        if local == "lastmod":
            return date_rule(value)[0]
        if local == "changefreq":
            return "SM109" if stripped != value and stripped in CHANGEFREQS else "SM401"
        if local == "priority":
            return "SM402"
        return "SM107"
    if ns == IMAGE_NS:
        return "IMG603" if local == "loc" else "IMG605"
    if ns == VIDEO_NS:
        if attr in ("allow_embed", "autoplay"):
            return "VID714"
        if local in ("expiration_date", "publication_date", "premier_date"):
            return date_rule(value, "VID710", "VID710")[0]
        if local in _YES_NO:
            return "SM109" if stripped != value and stripped.lower() in ("yes", "no") else "VID709"
        if attr == "relationship":
            return "VID707" if local == "restriction" else "VID708"
        return _VIDEO_VALUE_RULES.get(local, "VID716")
    if ns == NEWS_NS:
        if local == "language":
            return "NEWS804"
        if local == "publication_date":
            return date_rule(value, "NEWS805", "NEWS805")[0]
        if local in ("access", "genres", "stock_tickers", "keywords"):
            return "NEWS808"
        return "NEWS801"
    return "SM107"


def _value_text(el: etree._Element, attr: str | None, value: str, rule: str, body: str) -> str:
    what = f"The attribute {attr!r} of {_name(el)}" if attr else _name(el)
    if rule in ("SM301", "SM302", "SM303", "SM304", "VID710", "NEWS805"):
        return f"{what} {clip(value, _QUOTE)!r} {date_rule(value)[1]}"
    if rule == "SM111":
        return f"{what} is empty; give a value or remove the element"
    if rule == "SM109":
        return f"{what} {value!r} has surrounding whitespace, which the XSD rejects; trim it"
    m = _FACET.match(body)
    if m:
        return _facet_text(el, attr, m.group(1), m.group(2))
    b = _BAD_VALUE.match(body)
    if b:
        kind = b.group(3) or f"{b.group(2)} type"
        kind = _CLARK.sub("", kind)
        return f"{what} {clip(b.group(1), _QUOTE)!r} is not a valid {kind} (XSD)"
    return f"{what}: {body.rstrip('.')}"


_HINTS: Final = {
    "SM105": "",
    "SM203": "; URLs must have fewer than 2,048 characters",
    "SM204": "; percent-encode spaces and other characters URIs forbid",
    "SM401": "; use always, hourly, daily, weekly, monthly, yearly or never in lowercase",
    "SM402": "; use a number from 0.0 to 1.0 such as 0.5",
    "VID709": "; use yes or no",
    "NEWS804": "; use an ISO 639 code such as en, or zh-cn / zh-tw",
    "HRE902": "; use x-default or language[-REGION] such as en-GB",
}


def _classify(el: etree._Element, message: str, root: etree._Element) -> tuple[str, str, bool]:
    """``(rule, sentence, unknown_namespace)`` for one libxml2 schema error on ``el``."""
    m = _MESSAGE.match(message)
    attr, body = (m.group(2), m.group(3).strip()) if m else (None, message.strip())
    ne = _NOT_EXPECTED.match(body)
    if ne:
        rule, text = _not_expected(el, ne.group(1))
        return rule, text, False
    mi = _MISSING.match(body)
    if mi:
        rule, text = _missing(el, mi.group(1))
        return rule, text, False
    if body.startswith("Character content other than whitespace"):
        snippet = _stray_text(el)
        return (
            "SM108",
            (
                f"Text {clip(snippet, _QUOTE)!r} directly inside {_name(el)} is not allowed "
                "(element-only content); remove it"
            ),
            False,
        )
    if body.startswith("Character content is not allowed"):
        return (
            "HRE901" if _split(el.tag)[0] == XHTML_NS else "SM108",
            (f"{_name(el)} must be empty; remove its content"),
            False,
        )
    if body.startswith("Element content is not allowed"):
        return "SM107", f"{_name(el)} must hold text only, not elements", False
    na = _ATTR_NOT_ALLOWED.match(body)
    if na:
        ns = _split(el.tag)[0]
        rule = {XHTML_NS: "HRE901", VIDEO_NS: "VID715", IMAGE_NS: "IMG605"}.get(ns, "SM107")
        return (
            rule,
            f"The attribute {na.group(1)!r} is not allowed on {_name(el)}; remove it",
            False,
        )
    am = _ATTR_MISSING.match(body)
    if am:
        local = _split(el.tag)[1]
        rule = {"restriction": "VID707", "platform": "VID708"}.get(local, "VID716")
        if _split(el.tag)[0] == XHTML_NS:
            rule = "HRE901"
        return rule, f"{_name(el)} needs the attribute {am.group(1)!r}", False
    if "demanded by the strict wildcard" in body:
        ns = _split(el.tag)[0]
        return (
            "SM107",
            (
                f"{_name(el)} is in the namespace {ns!r}, for which no schema is "
                "known; it is not validated"
            ),
            True,
        )
    value = (el.get(attr) or "") if attr else _value(el)
    rule = _value_rule(el, attr, value)
    text = _value_text(el, attr, value, rule, body)
    return rule, text + _HINTS.get(rule, ""), False


def _stray_text(el: etree._Element) -> str:
    parts = [el.text or ""] + [child.tail or "" for child in el]
    for part in parts:
        if part.strip(_SPACE):
            return part.strip(_SPACE)
    return ""


def _errors(tree: etree._ElementTree[etree._Element]) -> list[_Error]:
    schema = xsd.load_schema()
    with xsd._validate_lock:
        if schema.validate(tree):
            return []
        return [_Error(e.line, e.path or "", e.message) for e in schema.error_log]


#: Entries validated at a time. libxml2 names each error by its node path, counting the
#: node's preceding siblings: in one tree, errors x entries of work (50,000 entries with an
#: error each took over 15 minutes; in pieces of 1,000, a second).
_SCHEMA_PIECE: Final = 1_000


def _located_errors(root: etree._Element, piece: int) -> list[tuple[_Error, etree._Element | None]]:
    """The schema errors of the tree under ``root``, each with the element it names.

    A root with many children is validated piece by piece: each slice of its children
    moves under a bare copy of the root, is validated, and moves back, so the tree ends as
    it began and the elements found are the tree's own. The root's own errors (its
    attributes, its text) are taken from the first piece only.
    """
    children = list(root)
    if len(children) <= piece:
        errors = _errors(root.getroottree())
        find = xsd.path_finder(root)
        return [(error, find(error.path)) for error in errors]
    located: list[tuple[_Error, etree._Element | None]] = []
    text, root.text = root.text, None
    try:
        for start in range(0, len(children), piece):
            chunk = children[start : start + piece]
            part = etree.Element(root.tag, attrib=dict(root.attrib), nsmap=root.nsmap)
            part.sourceline = root.sourceline  # type: ignore[misc]  # settable in lxml
            if start == 0:
                part.text = text
            part.extend(chunk)
            try:
                find = xsd.path_finder(part)
                for error in _errors(etree.ElementTree(part)):
                    el = find(error.path)
                    if el is part:
                        if start:
                            continue
                        el = root
                    located.append((error, el))
            finally:
                root[start:start] = chunk  # back where it was
    finally:
        root.text = text
    return located


def schema_findings(
    tree: etree._ElementTree[etree._Element],
    *,
    source: bytes | None = None,
    where: str | None = None,
    strict: bool = False,
    seen_ns: set[str] | None = None,
    piece: int = _SCHEMA_PIECE,
) -> list[Finding]:
    """Validate a parsed sitemap against the bundled XSDs; one finding per schema error.

    Only ``<urlset>`` and ``<sitemapindex>`` in the sitemaps.org namespace are validated
    (a wrong root is the reader's SM101). A document that keeps DTD entity references is
    skipped: libxml2's validator cannot cope with them, and the reader reports SM011.
    ``source`` (the uncompressed bytes) lets findings carry columns. An unknown
    namespace is reported once: ``seen_ns`` carries the ones reported across the pieces
    of one document validated piece by piece. A root with more than ``piece`` entries is
    validated ``piece`` entries at a time (same findings, far faster).
    """
    root = tree.getroot()
    ns, local = _split(root.tag)
    if ns != SITEMAP_NS or local not in ("urlset", "sitemapindex"):
        return []
    if tree.docinfo.doctype and next(root.iter(etree.Entity), None) is not None:
        return []
    located = _located_errors(root, piece)
    if not located:
        return []
    classified: list[tuple[_Error, etree._Element | None, str, str, bool]] = []
    if seen_ns is None:
        seen_ns = set()
    for error, el in located:
        if el is None:
            text = "Schema: " + _readable(error.message).strip()
            classified.append((error, None, "SM107", text, False))
            continue
        rule, text, unknown_ns = _classify(el, error.message, root)
        if unknown_ns:
            key = _split(el.tag)[0]
            if key in seen_ns:
                continue
            seen_ns.add(key)
        if rule in ("SM103", "SM501", "IMG601", "VID701", "NEWS801") and "has no <" in text:
            parent = el.getparent()
            if parent is not None and parent is not root:
                el = parent  # a missing child is reported at its parent, as the reader does
        classified.append((error, el, rule, text, unknown_ns))
    places = xsd.start_tag_columns([item[1] for item in classified], root, source)
    out: list[Finding] = []
    for (error, el, rule, text, unknown_ns), place in zip(classified, places, strict=True):
        # An element of a namespace no bundled schema knows is not validated at all: a
        # warning, where SM107's unknown element of a known namespace is the error. The
        # schemas' SM109 is a padded enumeration value, which RULES.md makes an error in
        # strict mode ("an error for enumerations in strict mode").
        level: Severity = severity(rule, strict=strict)
        if unknown_ns:
            level = "warning"
        elif strict and rule == "SM109":
            level = "error"
        fallback = error.line or (el.sourceline if el is not None else None) or 0
        line, column = place if place is not None else (fallback, 0)
        entry = _entry(el, root) if el is not None else None
        out.append(
            Finding(rule, level, text, where, line or None, column or None, _entry_loc(entry))
        )
    return out
