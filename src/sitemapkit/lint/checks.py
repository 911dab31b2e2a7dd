"""lint: the checks the reader does not make, over records, raw documents and sets. Pure.

Nothing here opens a file, a socket or reads the clock: the driver passes bytes, parsed
trees, records and a :class:`Context` (the sitemap's URL, "now", the waivers). Three kinds
of checks, each small and registered under the rule ids it decides:

* document checks (:func:`check_document`): over the uncompressed bytes and the parsed tree
  (padded values, non-ASCII URLs, CDATA, schema-location hints, namespace bindings, the
  form of priorities), plus :func:`check_compression` on the raw bytes and name;
* entry checks (:class:`FileChecks`): over the records of one document in batches, with
  file-level aggregates at the end (duplicates, location, dates, extensions, hreflang);
* set checks (:class:`SetChecks`): over every document validated together (nested indexes,
  cycles, children listed twice, duplicates across files, hreflang reciprocity).

Records carry no positions, so entry findings are :class:`Pending` until the driver resolves
their lines from the document (:func:`resolve_lines`): a record is named by its loc and how
many records with the same loc came before it in the file.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from operator import attrgetter, is_not, ne
from typing import Any, Final, TypeVar, cast

from lxml import etree

from ..core.finding import Finding, Severity
from ..core.model import Alternate, SitemapRef, Url, Video
from ..core.namespace import IMAGE_NS, NEWS_NS, SITEMAP_NS, VIDEO_NS, XHTML_NS
from ..core.urls import Origin, iri_to_uri, remove_dot_segments, resolve
from ..core.w3cdate import parse_w3c
from .iso import COUNTRIES, LANGUAGES
from .rules import RULES

__all__ = [
    "CHECKED",
    "AlternateEntry",
    "Context",
    "DocumentNode",
    "FileChecks",
    "Pending",
    "SetChecks",
    "check_compression",
    "check_document",
    "normalize",
    "resolve_lines",
]

Record = Url | SitemapRef

#: Rule id → the name of the function in this module that decides it (for the catalogue test).
CHECKED: Final[dict[str, str]] = {}

_F = TypeVar("_F", bound=Callable[..., Any])


def _decides(*ids: str) -> Callable[[_F], _F]:
    def register(fn: _F) -> _F:
        for rule in ids:
            CHECKED[rule] = fn.__name__
        return fn

    return register


@dataclass(frozen=True, slots=True)
class Context:
    """What checks may know beyond the document; all of it injected.

    ``url`` is the sitemap's own URL (where it is or will be published): the location rules
    SM210-SM213, SM504, SM505 need it and are skipped without it. ``now`` (aware) enables
    the date heuristics; ``modified`` is the file's modification time (SM306). ``allow``
    waives the location rules (SM214) for hosts (``example.org``) or origins
    (``https://example.org:8443``). ``strict`` promotes the rules marked strict→error.
    """

    url: str | None = None
    now: dt.datetime | None = None
    modified: dt.datetime | None = None
    allow: tuple[str, ...] = ()
    strict: bool = False
    future_tolerance: dt.timedelta = dt.timedelta(hours=24)


def _severity(rule: str, ctx: Context, override: Severity | None = None) -> Severity:
    r = RULES[rule]
    if override is not None:
        return override
    if ctx.strict and r.strict:
        return "error"
    return r.severity


def _clip(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


# -- URL normalisation (SM215) ----------------------------------------------------------

_SPLIT_URL: Final = re.compile(
    r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?", re.S
)
_PCT: Final = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_DEFAULT_PORT: Final = {"http": "80", "https": "443"}


def _pct(m: re.Match[str]) -> str:
    ch = chr(int(m.group(1), 16))
    return ch if ch in _UNRESERVED else "%" + m.group(1).upper()


def normalize(url: str) -> str:
    """The comparison form of a URL (RULES.md SM215).

    Scheme and host lowercased, default port dropped, percent-escapes uppercased and
    unreserved ones decoded, dot-segments removed, fragment dropped; query order and path
    case kept.

    >>> normalize("HTTPS://Example.COM:443/a/./b/../%7euser/%3f?q=1#top")
    'https://example.com/a/~user/%3F?q=1'
    """
    m = _SPLIT_URL.fullmatch(url)
    if m is None:
        return url
    scheme, auth, path, query, _ = m.groups()
    scheme = scheme.lower()
    userinfo, at, hostport = auth.rpartition("@")
    host, colon, port = hostport.partition(":")
    if hostport.startswith("["):
        host, _, rest = hostport.partition("]")
        host += "]"
        colon, port = (":", rest[1:]) if rest.startswith(":") else ("", "")
    host = host.lower()
    if colon and port == _DEFAULT_PORT.get(scheme):
        colon = port = ""
    if "%" in path:
        path = _PCT.sub(_pct, path)
    if "." in path:
        path = remove_dot_segments(path)
    path = path or "/"
    if query and "%" in query:
        query = _PCT.sub(_pct, query)
    return f"{scheme}://{userinfo}{at}{host}{colon}{port}{path}{query or ''}"


def _variant_key(norm: str) -> str:
    """http/https, www and a trailing slash ignored (SM216)."""
    rest = norm.partition("://")[2]
    if rest.startswith("www."):
        rest = rest[4:]
    return rest[:-1] if rest.endswith("/") else rest


def _variant_keys(norms: list[str]) -> list[str]:
    """``_variant_key`` of each URL: by slicing when the batch shares one origin (the usual
    case), else with a few ``str.replace`` over the joined batch."""
    first = norms[0]
    end = first.find("/", first.find("://") + 3)
    text = "\n" + "\n".join(norms) + "\n"
    if end > 0 and text.count("\n" + first[: end + 1]) == len(norms):
        head = first[first.index("://") + 3 : end]
        head = head[4:] if head.startswith("www.") else head
        return [head + (n[end:-1] if n[-1] == "/" else n[end:]) for n in norms]
    text = text.replace("\nhttps://", "\n").replace("\nhttp://", "\n").replace("\nwww.", "\n")
    keys = text.replace("/\n", "\n")[1:-1].split("\n")
    if len(keys) != len(norms):  # a URL with a line break (cannot come from the reader)
        return [_variant_key(n) for n in norms]
    return keys


_PORT: Final = re.compile(r"://[^/\n]*:")
# A percent-escape that normalisation rewrites: lowercase hex, or an unreserved character
# (ALPHA, DIGIT, "-", ".", "_", "~"; RFC 3986 §2.3, §6.2.2.2).
_PCT_CHANGES: Final = re.compile(
    r"%(?:[0-9A-Fa-f][a-f]|[a-f][0-9A-F]|2[DE]|3[0-9]|[46][1-9A-F]|5[0-9AF]|7[0-9AE])"
)
_DOT_SEGMENT: Final = re.compile(r"/\.\.?(?:[/?#\n]|$)")


# -- pending findings -------------------------------------------------------------------


@dataclass(slots=True)
class Pending:
    """An entry finding waiting for its line: the ``occurrence``-th record with ``loc``.

    ``see`` names another record whose line replaces ``{see}`` in the message.
    """

    rule: str
    severity: Severity
    message: str
    loc: str
    occurrence: int
    see: tuple[str, int] | None = None

    def finding(self, where: str | None, lines: dict[tuple[str, int], int]) -> Finding:
        message = self.message
        if self.see is not None:
            line = lines.get(self.see)
            message = message.replace("{see}", f"line {line}" if line else "earlier")
        return Finding(
            self.rule,
            self.severity,
            message,
            where,
            lines.get((self.loc, self.occurrence)),
            None,
            self.loc,
        )


@dataclass(slots=True)
class AlternateEntry:
    """A ``<url>`` with hreflang annotations, kept for the set's reciprocity check."""

    loc: str
    norm: str
    occurrence: int
    pairs: frozenset[tuple[str, str]]
    line: int | None = None


# -- document checks ----------------------------------------------------------------------

_SPACE: Final = " \t\r\n"
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
_PRIORITIES: Final = frozenset(f"{i / 10:.1f}" for i in range(11))
_DECIMAL: Final = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
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
    return loc.text.strip(_SPACE)


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
        severity: Severity | None = None,
    ) -> None:
        sev = _severity(rule, self.ctx, severity)
        self.out.append(Finding(rule, sev, message, self.where, line, None, loc))


def may_have_padded_values(data: bytes) -> bool:
    """Whether some element's text may start or end with white space (a byte scan; the
    tree confirms it)."""
    return _LEADING.search(data) is not None or _TRAILING_REVERSED.search(data[::-1]) is not None


@_decides("SM109")
def _padded(d: _DocumentChecks) -> None:
    """SM109: whitespace around values. Found in the bytes (fast), confirmed in the tree."""
    root = d.root
    if root is None:
        return
    if not d.scan("padded", may_have_padded_values):
        return
    for el in root.iter(etree.Element):
        text = el.text
        if not text or len(el) or (text[0] not in _SPACE and text[-1] not in _SPACE):
            continue
        value = text.strip(_SPACE)
        if not value:
            continue
        enumeration = el.tag in _ENUMERATIONS
        severity: Severity = "error" if d.ctx.strict and enumeration else "warning"
        extra = " (the XSD rejects a padded enumeration value)" if enumeration else ""
        d.add(
            "SM109",
            f"{_tag_name(el)} {_clip(text)!r} has leading or trailing whitespace{extra}; "
            f"write {_clip(value)!r}",
            el.sourceline,
            _entry_loc(el, root),
            severity,
        )


@_decides("SM204", "SM205", "IMG603", "VID717", "HRE903")
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
    values = [(el.text or "").strip(_SPACE) for tag in tags for el in root.iter(tag)]
    if _suspect(values):
        for el in root.iter(*tags):
            value = (el.text or "").strip(_SPACE)
            if not value.isascii() or _URI_BAD.search(value):
                rule = _URL_RULES.get(str(el.tag), "SM204")
                _url_value(d, _tag_name(el), value, el.sourceline, el, rule)
    for el in root.iter(f"{{{XHTML_NS}}}link"):
        href = el.get("href")
        if href:
            _url_value(d, "<xhtml:link> href", href.strip(_SPACE), el.sourceline, el, "HRE903")


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
            f"{what} {_clip(value)!r} holds {why}, which URIs do not allow raw; "
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
    hint = f"; write {_clip(uri)!r}" if uri and uri != text else ""
    return (
        f"{what} {_clip(text)!r} holds non-ASCII characters; sitemaps carry URIs "
        f"(percent-encoded UTF-8, punycode hosts){hint}"
    )


@_decides("SM206")
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
            "warning",
        )


@_decides("SM102")
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


@_decides("SM112")
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


@_decides("SM403")
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
        if text is None or text in _PRIORITIES:
            continue
        value = text.strip(_SPACE)
        if value in _PRIORITIES or not _DECIMAL.fullmatch(value):
            continue  # padded (SM109) or not a number (SM402)
        number = float(value)
        if not 0.0 <= number <= 1.0:
            continue  # SM402
        d.add(
            "SM403",
            f"<priority> {value!r} is not in the canonical form; write {number:.1f} "
            "(one digit after the point)"
            if round(number, 1) == number
            else f"<priority> {value!r} has more than one decimal; engines read 0.0 … 1.0 "
            f"in steps of 0.1, write {number:.1f}",
            el.sourceline,
            _entry_loc(el, root),
        )


@_decides("SM009")
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
                severity="warning",
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


@_decides("SM008")
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
            "warning",
            f"{name!r} holds gzip data but is not named .gz; name it .xml.gz, or serve it with "
            "Content-Encoding: gzip",
            where,
        )
    ]


# -- locating records in the document -------------------------------------------------------


def resolve_lines(
    wanted: Iterable[tuple[str, int]],
    *,
    root: etree._Element | None,
    data: bytes,
    kind: str | None,
    base_url: str | None = None,
    anchors: Iterable[tuple[str, int]] | None = None,
) -> dict[tuple[str, int], int]:
    """Lines of records named ``(loc, occurrence)``, found in the parsed document.

    A record's loc is the reader's (an IRI becomes a URI, a relative loc is resolved
    against ``base_url``), so a raw value that does not match as written is compared in
    that form too. ``anchors`` (the ``(raw loc, line)`` of every entry, in document
    order, as :func:`entry_anchors` gives them) stand in for a tree no longer held.
    """
    keys = set(wanted)
    if not keys:
        return {}
    locs = {loc for loc, _ in keys}
    found: dict[tuple[str, int], int] = {}
    seen: Counter[str] = Counter()
    for raw, line in anchors if anchors is not None else _anchors(root, data, kind):
        value = raw.strip(_SPACE)
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
            found[key] = line
    return found


# A URI the reader's model keeps unchanged (lowercase scheme and host, nothing to encode).
_URI_CHARS: Final = r"[A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=-]*+"  # possessive: no state a char
_CANONICAL_URI: Final = re.compile(
    r"https?://[a-z0-9.-]+(?::[0-9]{1,5})?"
    rf"(?:[/?#]{_URI_CHARS}(?:%[0-9A-Fa-f]{{2}}{_URI_CHARS})*+)?"
)


def _as_record_loc(value: str, base_url: str | None) -> str | None:
    text = value
    if not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", text):
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


# -- entry checks ---------------------------------------------------------------------------

_SESSION: Final = re.compile(r"(?:[;?&]jsessionid=|phpsessid=|[?&;]sid=|sessionid=)", re.I)
_DOUBLE_ESCAPED: Final = re.compile(r"&(?:amp|lt|gt|quot|apos);|&#|%25[0-9A-Fa-f]{2}")
_PAGE_EXTENSIONS: Final = (".html", ".htm", ".php", ".asp", ".aspx", ".jsp", ".shtml", ".swf")
_BYLINE: Final = re.compile(r"(?:^|[|\-–—:]\s*)by\s+[A-Z][\w.'-]+", re.I)
_TITLE_DATE: Final = re.compile(
    r"\b(?:19|20)[0-9]{2}-[0-9]{2}-[0-9]{2}\b|\b[0-9]{1,2}/[0-9]{1,2}/(?:19|20)?[0-9]{2}\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? [0-9]{1,2}, "
    r"(?:19|20)[0-9]{2}\b",
    re.I,
)
_EPOCH_CUTOFF: Final = "1994-01-01"
_HASH: Final = re.compile("#")


def _instant_bounds(value: str) -> tuple[dt.datetime, dt.datetime] | None:
    """Earliest and latest instant a W3C Datetime can mean (a bare date spans all zones)."""
    try:
        p = parse_w3c(value)
    except ValueError:
        return None
    start = p.to_datetime()
    if p.offset_minutes is not None:
        return start, start
    # no time, so no zone: from the period's start at +14:00 to its end at -12:00
    if p.granularity == 1:
        end = dt.datetime(p.year + 1, 1, 1, tzinfo=dt.UTC)
    elif p.granularity == 2:
        end = dt.datetime(p.year + p.month // 12, p.month % 12 + 1, 1, tzinfo=dt.UTC)
    else:
        end = start + dt.timedelta(days=1)
    return start - dt.timedelta(hours=14), end + dt.timedelta(hours=12)


class FileChecks:
    """The entry checks of one document: feed records with :meth:`add`, then :meth:`finish`.

    Findings that belong to a record are kept in ``pending`` (see :class:`Pending`);
    file-level ones in ``findings``. ``shared`` links the document to its set, for the
    duplicate and hreflang checks across files.
    """

    def __init__(self, where: str | None, ctx: Context, shared: SetChecks | None = None) -> None:
        self.where = where
        self.ctx = ctx
        self.shared = shared
        self.file_index = shared.add_file(where) if shared is not None else -1
        self.pending: list[Pending] = []
        self.findings: list[Finding] = []
        self.alternates: list[AlternateEntry] = []
        self.children: list[tuple[str, str | None, int]] = []  # (loc, lastmod, occurrence)
        self.records = 0
        self.index = False
        self.max_day = ""  # the latest lastmod date seen (SM508 across the set)
        self._seen: dict[str, int] = {}
        self._norms: dict[str, str] = {}
        self._variants: dict[str, str] = {}
        self._lastmods: Counter[str] = Counter()
        self._with_lastmod = 0
        self._priorities: set[float] = set()
        self._with_priority = 0
        self._with_changefreq = 0
        self._without_lastmod = 0
        self._hreflang: dict[str, tuple[str, Severity] | None] = {}
        # the batch being checked
        self._locs: list[str] = []
        self._occ: list[int] = []
        self._blob = ""
        self._origin: Origin | None = None
        self._prefix = ""
        if ctx.url is not None:
            try:
                origin = Origin.of(iri_to_uri(ctx.url))
            except ValueError:
                origin = None
            if origin is not None and origin.scheme in ("http", "https"):
                directory = origin.path[: origin.path.rfind("/") + 1]
                self._origin = origin._replace(path=directory)
                port = (
                    ""
                    if _DEFAULT_PORT.get(origin.scheme) == str(origin.port)
                    else (f":{origin.port}")
                )
                self._prefix = f"{origin.scheme}://{origin.host}{port}{directory}"
        self._now = ctx.now
        self._future_day = ""
        if ctx.now is not None:
            limit = ctx.now + ctx.future_tolerance
            self._future_day = (limit - dt.timedelta(days=2)).date().isoformat()

    # -- plumbing ------------------------------------------------------------------------

    def emit(
        self,
        rule: str,
        message: str,
        i: int,
        severity: Severity | None = None,
        see: tuple[str, int] | None = None,
    ) -> None:
        """A finding about record ``i`` of the current batch."""
        sev = _severity(rule, self.ctx, severity)
        self.pending.append(Pending(rule, sev, message, self._locs[i], self._occ[i], see))

    def add(self, records: Sequence[Record]) -> None:
        """Check a batch of records (in document order)."""
        if not records:
            return
        seen = self._seen
        locs: list[str] = list(map(_LOC, records))
        fresh = dict.fromkeys(locs, 1)
        if len(fresh) == len(locs) and seen.keys().isdisjoint(fresh.keys()):
            seen.update(fresh)
            occ = [0] * len(locs)
        else:
            occ = []
            for loc in locs:
                n = seen.get(loc, 0)
                seen[loc] = n + 1
                occ.append(n)
        self._locs, self._occ = locs, occ
        self._blob = "\n".join(locs)
        self.records += len(records)
        # the reader never mixes <url> and <sitemap> records in one document
        if isinstance(records[0], SitemapRef):
            self.index = True
            refs = cast("list[SitemapRef]", list(records))
            for ref_check in _INDEX_CHECKS:
                ref_check(self, refs)
        else:
            urls = cast("list[Url]", list(records))
            for url_check in _URL_CHECKS:
                url_check(self, urls)

    @property
    def occurrences(self) -> list[int]:
        """For each record of the last batch given to :meth:`add`, how many records with
        the same loc came before it in the document (0 for the first): with the loc, it
        names the record for :func:`resolve_lines`."""
        return self._occ

    def matches(self, pattern: re.Pattern[str]) -> Iterator[tuple[int, re.Match[str]]]:
        """``(record index, match)`` of a pattern over the batch's locs (one match per loc)."""
        blob = self._blob
        i = prev = 0
        last = -1
        for m in pattern.finditer(blob):
            i += blob.count("\n", prev, m.start())
            prev = m.start()
            if i != last:
                last = i
                yield i, m

    def finish(self) -> None:
        """The file-level checks; call once after the last batch."""
        for check in _FILE_CHECKS:
            check(self)
        if self.shared is not None:
            self.shared.merge(self)

    def _waived(self, o: Origin) -> bool:
        for item in self.ctx.allow:
            if "://" in item:
                try:
                    a = Origin.of(iri_to_uri(item))
                except ValueError:
                    continue
                if (a.scheme, a.host, a.port) == (o.scheme, o.host, o.port):
                    return True
            elif item.strip().lower().rstrip(".") == o.host:
                return True
        return False


_URL_CHECKS: list[Callable[[FileChecks, list[Url]], None]] = []
_INDEX_CHECKS: list[Callable[[FileChecks, list[SitemapRef]], None]] = []
_FILE_CHECKS: list[Callable[[FileChecks], None]] = []


def _on_urls(fn: _F) -> _F:
    _URL_CHECKS.append(fn)
    return fn


def _on_refs(fn: _F) -> _F:
    _INDEX_CHECKS.append(fn)
    return fn


def _on_file(fn: _F) -> _F:
    _FILE_CHECKS.append(fn)
    return fn


_LOC: Final = attrgetter("loc")
_LASTMOD: Final = attrgetter("lastmod")
_PRIORITY: Final = attrgetter("priority")
_CHANGEFREQ: Final = attrgetter("changefreq")
_IMAGES: Final = attrgetter("images")
_VIDEOS: Final = attrgetter("videos")
_NEWS: Final = attrgetter("news")
_ALTERNATES: Final = attrgetter("alternates")
_NOT_NONE: Final = partial(is_not, None)


@_on_urls
@_decides("SM215", "SM216")
def _duplicate_urls(fc: FileChecks, urls: list[Url]) -> None:
    """SM215 exact and normalised duplicates, SM216 variants; in the file and the set.

    The common case (nothing repeats) is decided with set operations over the whole batch;
    only a batch with a repeat is looked at URL by URL.
    """
    locs, occ = fc._locs, fc._occ
    shared = fc.shared if fc.shared is not None and fc.shared.tracking else None
    norms = locs
    rows = _unnormal(fc)
    if rows:
        norms = list(locs)
        for i in rows:
            norms[i] = normalize(locs[i])
    keys = _variant_keys(norms)
    key_set = set(keys)
    if (
        not any(occ)
        and (norms is locs or not any(map(ne, norms, locs)))
        and len(key_set) == len(keys)
        and fc._variants.keys().isdisjoint(key_set)
        and (not fc._norms or fc._norms.keys().isdisjoint(locs))
        and (shared is None or not _across(shared, locs, norms, keys))
    ):
        fc._variants.update(zip(keys, locs, strict=True))
        return
    for i, loc in enumerate(locs):
        _duplicate(fc, shared, i, loc, norms[i], keys[i])


def _unnormal(fc: FileChecks) -> set[int]:
    """The batch's records whose loc ``normalize`` may change (found in the joined locs)."""
    blob = fc._blob
    rows: set[int] = set()
    if "%" in blob:
        rows.update(i for i, _ in fc.matches(_PCT_CHANGES))
    if "#" in blob:
        rows.update(i for i, _ in fc.matches(_HASH))
    if "/." in blob:
        rows.update(i for i, _ in fc.matches(_DOT_SEGMENT))
    if blob.count(":") != blob.count("://"):
        rows.update(i for i, _ in fc.matches(_PORT))
    return rows


def _across(shared: SetChecks, locs: list[str], norms: list[str], keys: list[str]) -> bool:
    """Whether any URL of the batch meets one of earlier files (by hash)."""
    return not (
        (not shared.exact or shared.exact.isdisjoint(map(hash, locs)))
        and (not shared.norm or shared.norm.isdisjoint(map(hash, norms)))
        and (not shared.variant or shared.variant.isdisjoint(map(hash, keys)))
    )


def _duplicate(
    fc: FileChecks, shared: SetChecks | None, i: int, loc: str, norm: str, vkey: str
) -> None:
    norms, seen = fc._norms, fc._seen
    first = fc._variants.setdefault(vkey, loc)
    if fc._occ[i]:
        fc.emit(
            "SM215",
            f"Duplicate URL {_clip(loc)!r}, listed before at {{see}}; list each URL once",
            i,
            see=(loc, 0),
        )
        return
    first_file = shared.exact.get(hash(loc)) if shared is not None else None
    if shared is not None and first_file is not None:
        other = shared.files[first_file]
        fc.emit("SM215", f"Duplicate URL {_clip(loc)!r}, also listed in {other}", i)
        return
    same = None
    if norm != loc:
        same = norms.get(norm) or (norm if norm in seen else None)
        norms.setdefault(norm, loc)
    elif loc in norms and norms[loc] != loc:
        same = norms[loc]
    if same is not None:
        fc.emit(
            "SM215",
            f"URL {_clip(loc)!r} is the same as {_clip(same)!r} after normalisation (case, "
            "default port, percent-escapes, dot-segments, fragment); list it once, in one form",
            i,
        )
        return
    if shared is not None and (
        hash(norm) in shared.norm or (norm != loc and hash(norm) in shared.exact)
    ):
        fc.emit(
            "SM215",
            f"URL {_clip(loc)!r} duplicates a URL of another sitemap of the set after "
            "normalisation; list it once",
            i,
        )
        return
    if first != loc:
        fc.emit(
            "SM216",
            f"{_clip(loc)!r} and {_clip(first)!r} are variants of one page (http/https, www, "
            "trailing slash); list only the canonical URL",
            i,
        )
    elif shared is not None and (variant_file := shared.variant.get(hash(vkey))) is not None:
        other = shared.files[variant_file]
        fc.emit(
            "SM216",
            f"{_clip(loc)!r} is a variant (http/https, www, trailing slash) of a URL in "
            f"{other}; list only the canonical URL",
            i,
        )


@_on_refs
@_decides("SM507")
def _duplicate_children(fc: FileChecks, refs: list[SitemapRef]) -> None:
    """SM507: a child sitemap listed twice by one index."""
    norms = fc._norms
    for i, loc in enumerate(fc._locs):
        if fc._occ[i]:
            fc.emit(
                "SM507",
                f"The index lists {_clip(loc)!r} again (first at {{see}}); list each sitemap once",
                i,
                see=(loc, 0),
            )
            continue
        norm = normalize(loc)
        first = norms.setdefault(norm, loc)
        if first != loc:
            fc.emit(
                "SM507",
                f"The index lists {_clip(loc)!r}, the same sitemap as {_clip(first)!r}; "
                "list each sitemap once",
                i,
            )


def _location(fc: FileChecks, i: int, loc: str, index: bool) -> None:
    d = fc._origin
    assert d is not None
    try:
        o = Origin.of(loc)
    except ValueError:
        return  # not absolute: the reader reported it
    if fc._waived(o):
        return
    what = "child sitemap" if index else "URL"
    hint = (
        "; an index lists only sitemaps of its own site"
        if index
        else "; a sitemap lists URLs of its own site only, unless the other host names this "
        "sitemap in its robots.txt (cross-submission: --allow-host)"
    )
    if o.host != d.host:
        www = o.host.removeprefix("www.") == d.host.removeprefix("www.")
        label = ""
        if www:
            label = (
                " (path mismatch: "
                + ("includes www" if o.host.startswith("www.") else "missing www")
                + ")"
            )
        fc.emit(
            "SM504" if index else "SM210",
            f"The {what} {_clip(loc)!r} is on host {o.host!r}, not the sitemap's host "
            f"{d.host!r}{label}{hint}",
            i,
        )
    elif o.scheme != d.scheme:
        fc.emit(
            "SM504" if index else "SM211",
            f"The {what} {_clip(loc)!r} uses {o.scheme}, but the sitemap is served over "
            f"{d.scheme}; use {d.scheme}://{d.host}/… URLs",
            i,
        )
    elif o.port != d.port:
        fc.emit(
            "SM504" if index else "SM212",
            f"The {what} {_clip(loc)!r} is on port {o.port}, the sitemap on port {d.port}; "
            "every URL must use the sitemap's port",
            i,
        )
    elif not o.path.startswith(d.path):
        fc.emit(
            "SM505" if index else "SM213",
            f"The {what} {_clip(loc)!r} is outside the sitemap's directory {fc._prefix!r}; "
            "a sitemap covers only its own folder and below, so move the sitemap up "
            "(e.g. to the site root) or drop the URL",
            i,
        )


@_on_urls
@_decides("SM210", "SM211", "SM212", "SM213")
def _url_location(fc: FileChecks, urls: list[Url]) -> None:
    """SM210-SM213: the sitemaps.org "Sitemap file location" rule (waived by SM214)."""
    if fc._origin is None:
        return
    prefix = fc._prefix
    blob = "\n" + fc._blob
    if blob.count("\n" + prefix) == len(fc._locs) and "/." not in blob:
        return
    for i, loc in enumerate(fc._locs):
        if not loc.startswith(prefix) or "/." in loc:
            _location(fc, i, loc, False)


@_on_refs
@_decides("SM504", "SM505")
def _child_location(fc: FileChecks, refs: list[SitemapRef]) -> None:
    """SM504 same site, SM505 same directory or below, for an index's children."""
    if fc._origin is None:
        return
    for i, loc in enumerate(fc._locs):
        if not loc.startswith(fc._prefix) or "/." in loc:
            _location(fc, i, loc, True)


@_on_urls
@_on_refs
@_decides("SM207")
def _double_escaped(fc: FileChecks, records: Sequence[Record]) -> None:
    """SM207: a decoded URL that still holds an entity or a %25XX escape."""
    blob = fc._blob
    if "&#" not in blob and "%25" not in blob and (";" not in blob or "&" not in blob):
        return
    for i, m in fc.matches(_DOUBLE_ESCAPED):
        loc = fc._locs[i]
        fc.emit(
            "SM207",
            f"URL {_clip(loc)!r} looks escaped twice ({m.group()!r} after decoding); "
            "escape once: & as &amp; in the XML, a space as %20 in the URL",
            i,
        )


@_on_urls
@_decides("SM208")
def _fragment(fc: FileChecks, urls: list[Url]) -> None:
    """SM208: fragments identify the same document; servers never see them."""
    if "#" not in fc._blob:
        return
    for i, _ in fc.matches(_HASH):
        loc = fc._locs[i]
        fc.emit(
            "SM208",
            f"URL {_clip(loc)!r} has a fragment ({_clip(loc[loc.index('#') :], 30)!r}); "
            "list the URL without it",
            i,
        )


@_on_urls
@_decides("SM209")
def _session_id(fc: FileChecks, urls: list[Url]) -> None:
    """SM209: session identifiers make every crawl see new URLs."""
    low = fc._blob.lower()
    if "sid" not in low and "session" not in low:
        return
    for i, m in fc.matches(_SESSION):
        loc = fc._locs[i]
        fc.emit(
            "SM209",
            f"URL {_clip(loc)!r} carries a session identifier ({m.group()!r}); list URLs "
            "without session state",
            i,
        )


@_on_urls
@_decides("SM218")
def _long_url(fc: FileChecks, urls: list[Url]) -> None:
    """SM218: Yandex reads URLs of at most 1,024 characters."""
    if max(map(len, fc._locs)) <= 1024:
        return
    for i, loc in enumerate(fc._locs):
        if len(loc) > 1024:
            fc.emit(
                "SM218",
                f"URL is {len(loc):,} characters long; Yandex ignores URLs over 1,024 characters",
                i,
            )


def _date_checks(fc: FileChecks, lastmods: list[str | None]) -> None:
    """SM305 future and SM307 epoch-like lastmods (strings compared first, parsed if close)."""
    future_day = fc._future_day
    now = fc._now
    for i, lastmod in enumerate(lastmods):
        if lastmod is None:
            continue
        day = lastmod[:10]
        if day < _EPOCH_CUTOFF:
            fc.emit(
                "SM307",
                f"The lastmod {lastmod!r} is before 1994, probably a zero or epoch default; "
                "give the page's real modification date or omit lastmod",
                i,
            )
        elif now is not None and day >= future_day:
            bounds = _instant_bounds(lastmod)
            if bounds is not None and bounds[0] > now + fc.ctx.future_tolerance:
                fc.emit(
                    "SM305",
                    f"The lastmod {lastmod!r} lies in the future; give the time the page last "
                    "changed (Bing reportedly rejects future dates)",
                    i,
                )


@_on_urls
@_decides("SM305", "SM307")
def _url_dates(fc: FileChecks, urls: list[Url]) -> None:
    lastmods = cast("list[str | None]", list(map(_LASTMOD, urls)))
    present = cast("list[str]", list(filter(None, lastmods)))
    if not present:
        return
    fc._lastmods.update(present)
    fc._with_lastmod += len(present)
    top = max(present)[:10]
    if top > fc.max_day:
        fc.max_day = top
    if min(present) >= _EPOCH_CUTOFF and (fc._now is None or top < fc._future_day):
        return
    _date_checks(fc, lastmods)


@_on_refs
def _ref_dates(fc: FileChecks, refs: list[SitemapRef]) -> None:
    lastmods = cast("list[str | None]", [r.lastmod for r in refs])
    for i, r in enumerate(refs):
        fc.children.append((r.loc, lastmods[i], fc._occ[i]))
        if r.lastmod is None:
            fc._without_lastmod += 1
    _date_checks(fc, lastmods)


@_on_urls
def _counts(fc: FileChecks, urls: list[Url]) -> None:
    prios = cast("list[float]", list(filter(_NOT_NONE, map(_PRIORITY, urls))))
    if prios:
        fc._with_priority += len(prios)
        if len(fc._priorities) < 2:
            fc._priorities.update(prios)
    fc._with_changefreq += len(urls) - list(map(_CHANGEFREQ, urls)).count(None)


@_on_urls
def _extensions(fc: FileChecks, urls: list[Url]) -> None:
    for getter, check in (
        (_IMAGES, _images),
        (_VIDEOS, _videos),
        (_NEWS, _news),
        (_ALTERNATES, _hreflang),
    ):
        if any(map(getter, urls)):
            for i, u in enumerate(urls):
                if getter(u):
                    check(fc, i, u)


@_decides("IMG604", "IMG606")
def _images(fc: FileChecks, i: int, u: Url) -> None:
    """IMG604 retired image tags, IMG606 an image repeated under one URL."""
    seen: set[str] = set()
    for image in u.images:
        if image.loc in seen:
            fc.emit(
                "IMG606", f"Image {_clip(image.loc)!r} is listed twice for this URL; keep one", i
            )
        seen.add(image.loc)
        if image.has_deprecated:
            tags = [
                n
                for n in ("caption", "geo_location", "title", "license")
                if getattr(image, n) is not None
            ]
            fc.emit(
                "IMG604",
                f"<image:{tags[0]}> was retired by Google in 2022 and has no effect; remove "
                + ", ".join(f"<image:{t}>" for t in tags),
                i,
            )


def _same_site(a: str, b: str) -> bool:
    a, b = a.removeprefix("www."), b.removeprefix("www.")
    return a == b or a.endswith("." + b) or b.endswith("." + a)


@_decides("VID706", "VID707", "VID711", "VID713")
def _videos(fc: FileChecks, i: int, u: Url) -> None:
    """VID706 video vs page URLs, VID707 country codes, VID711 dates, VID713 uploader."""
    page = normalize(u.loc)
    for v in u.videos:
        for name in ("content_loc", "player_loc"):
            value = getattr(v, name)
            if value is not None and normalize(value) == page:
                fc.emit(
                    "VID706",
                    f"<video:{name}> is the page's own URL; it must point to the video "
                    f"{'file' if name == 'content_loc' else 'player'}",
                    i,
                )
        content = v.content_loc
        if content is not None:
            path = content.split("?", 1)[0].split("#", 1)[0].lower()
            if path.endswith(_PAGE_EXTENSIONS):
                fc.emit(
                    "VID706",
                    f"<video:content_loc> {_clip(content)!r} looks like a web page; it must "
                    "point to the media file (put a player page in <video:player_loc>)",
                    i,
                )
        if v.restriction is not None:
            bad = [c for c in v.restriction.countries if c not in COUNTRIES]
            if bad:
                fc.emit(
                    "VID707",
                    f"<video:restriction> lists {', '.join(map(repr, bad))}, not assigned "
                    "ISO 3166-1 alpha-2 codes (e.g. GB, not UK)",
                    i,
                )
        if v.uploader_info is not None:
            try:
                info, where = Origin.of(v.uploader_info).host, Origin.of(u.loc).host
            except ValueError:
                info = where = ""
            if info and not _same_site(info, where):
                fc.emit(
                    "VID713",
                    f"The info URL of <video:uploader> is on {info!r}, not on the page's "
                    f"domain {where!r}",
                    i,
                )
        _video_dates(fc, i, v)


def _video_dates(fc: FileChecks, i: int, v: Video) -> None:
    now = fc._now
    if now is None:
        return
    expires = v.expiration_date
    if isinstance(expires, str):
        bounds = _instant_bounds(expires)
        if bounds is not None and bounds[1] < now:
            fc.emit(
                "VID711",
                f"<video:expiration_date> {expires!r} has passed; the video will not be "
                "shown. Remove it or update the date",
                i,
            )
    published = v.publication_date
    if isinstance(published, str):
        bounds = _instant_bounds(published)
        if bounds is not None and bounds[0] > now + fc.ctx.future_tolerance:
            fc.emit("VID711", f"<video:publication_date> {published!r} lies in the future", i)


@_decides("NEWS804", "NEWS806", "NEWS809")
def _news(fc: FileChecks, i: int, u: Url) -> None:
    """NEWS804 unassigned language codes, NEWS806 article age, NEWS809 title heuristics."""
    news = u.news
    assert news is not None
    lang = news.publication_language
    if len(lang) == 2 and lang not in LANGUAGES:
        fc.emit(
            "NEWS804",
            f"<news:language> {lang!r} is not an ISO 639-1 code; use e.g. en, de, fr "
            "(zh-cn / zh-tw for Chinese)",
            i,
        )
    now = fc._now
    date = news.publication_date
    if now is not None and isinstance(date, str):
        bounds = _instant_bounds(date)
        if bounds is not None:
            if bounds[1] < now - dt.timedelta(hours=48):
                fc.emit(
                    "NEWS806",
                    f"The article of {date!r} is older than 48 hours; remove it from the "
                    "news sitemap or drop its <news:news>",
                    i,
                )
            elif bounds[0] > now + fc.ctx.future_tolerance:
                fc.emit("NEWS806", f"<news:publication_date> {date!r} lies in the future", i)
    title, name = news.title, news.publication_name
    why = ""
    if len(name) >= 3 and name.lower() in title.lower():
        why = f"it contains the publication name {name!r}"
    elif _TITLE_DATE.search(title):
        why = "it contains a date"
    elif _BYLINE.search(title):
        why = "it contains a byline"
    if why:
        fc.emit(
            "NEWS809",
            f"<news:title> {_clip(title)!r}: {why}; give the article's title as shown on the page",
            i,
        )


def _hreflang_code(fc: FileChecks, code: str) -> tuple[str, Severity] | None:
    """Why an hreflang value breaks HRE902 (and how badly), or None; cached per value."""
    cache = fc._hreflang
    if code in cache:
        return cache[code]
    result: tuple[str, Severity] | None = None
    if code.lower() != "x-default":
        parts = code.split("-")
        lang = parts[0].lower()
        region = next((p for p in parts[1:] if len(p) in (2, 3)), None)
        if len(lang) == 3:
            result = (
                f"{lang!r} is a three-letter language code; Google documents ISO 639-1 "
                "(two letters)",
                "warning",
            )
        elif lang not in LANGUAGES:
            hint = " (a region alone is not a language)" if lang.upper() in COUNTRIES else ""
            result = (f"{lang!r} is not an ISO 639-1 language code{hint}", "error")
        if result is None and region is not None:
            if region.isdigit():
                result = (
                    f"region {region!r} is a UN M.49 code, outside Google's documented "
                    "format (ISO 3166-1 alpha-2)",
                    "warning",
                )
            elif region.upper() not in COUNTRIES:
                fix = " (use GB for the United Kingdom)" if region.upper() == "UK" else ""
                result = (f"region {region!r} is not an ISO 3166-1 alpha-2 code{fix}", "error")
    cache[code] = result
    return result


@_decides("HRE902", "HRE904", "HRE906", "HRE907")
def _hreflang(fc: FileChecks, i: int, u: Url) -> None:
    """HRE902 codes, HRE904 self-reference, HRE906 conflicts, HRE907 repeated x-default."""
    alternates: tuple[Alternate, ...] = u.alternates
    page = normalize(u.loc)
    hrefs: dict[str, str] = {}
    x_default = 0
    pairs: set[tuple[str, str]] = set()
    for a in alternates:
        problem = _hreflang_code(fc, a.hreflang)
        if problem is not None:
            fc.emit("HRE902", f"Invalid hreflang {a.hreflang!r}: {problem[0]}", i, problem[1])
        lang = a.hreflang.lower()
        href = normalize(a.href)
        pairs.add((lang, href))
        first = hrefs.setdefault(lang, href)
        if first != href:
            fc.emit(
                "HRE906",
                f"The hreflang {a.hreflang!r} points to both {_clip(first)!r} and "
                f"{_clip(href)!r}; one language version per value",
                i,
            )
        elif lang == "x-default":
            x_default += 1
    if page not in {href for _, href in pairs}:
        fc.emit(
            "HRE904",
            "The <url> has hreflang alternates but does not list itself among them; add "
            f'<xhtml:link rel="alternate" hreflang="…" href="{_clip(u.loc)}"/>',
            i,
        )
    if x_default > 1:
        fc.emit("HRE907", "The <url> lists x-default more than once; keep one", i)
    fc.alternates.append(AlternateEntry(u.loc, page, fc._occ[i], frozenset(pairs)))


@_on_file
@_decides("SM306")
def _stamped(fc: FileChecks) -> None:
    """SM306: lastmod stamped at build time (nearly all identical, or the file's own time)."""
    total = fc._with_lastmod
    if total < 20:
        return
    value, count = fc._lastmods.most_common(1)[0]
    if count >= 0.95 * total:
        fc.findings.append(
            Finding(
                "SM306",
                "warning",
                f"Of {total:,} lastmod values, {count:,} are {value!r}; lastmod should be each "
                "page's last significant change, not the time the sitemap was built",
                fc.where,
            )
        )
        return
    modified = fc.ctx.modified
    if modified is None or len(fc._lastmods) > 3600:
        return
    minute = modified.astimezone(dt.UTC).replace(second=0, microsecond=0)
    for text in fc._lastmods:
        bounds = _instant_bounds(text)
        if bounds is None or bounds[0] != bounds[1]:
            return
        if bounds[0].astimezone(dt.UTC).replace(second=0, microsecond=0) != minute:
            return
    fc.findings.append(
        Finding(
            "SM306",
            "warning",
            f"Every lastmod lies in the minute the file was written ({minute:%Y-%m-%d %H:%M} "
            "UTC); lastmod should be each page's last change, not the build time",
            fc.where,
        )
    )


@_on_file
@_decides("SM404")
def _ignored_tags(fc: FileChecks) -> None:
    """SM404: changefreq and priority are ignored by Google and Bing (off by default)."""
    n = max(fc._with_changefreq, fc._with_priority)
    if n:
        fc.findings.append(
            Finding(
                "SM404",
                "warning",
                f"The sitemap gives <changefreq> or <priority> for {n:,} URLs; Google and Bing "
                "ignore both, so they can be omitted",
                fc.where,
            )
        )


@_on_file
@_decides("SM405")
def _equal_priorities(fc: FileChecks) -> None:
    """SM405: one priority for every URL carries no information."""
    if fc.index or fc.records < 2 or fc._with_priority != fc.records:
        return
    if len(fc._priorities) == 1:
        value = next(iter(fc._priorities))
        fc.findings.append(
            Finding(
                "SM405",
                "warning",
                f"Every URL has priority {value:.1f}; priority is relative within the site, "
                "so equal values say nothing (omit them)",
                fc.where,
            )
        )


@_on_file
@_decides("SM508")
def _index_lastmods(fc: FileChecks) -> None:
    """SM508 (file half): children of an index without lastmod."""
    if not fc.index or fc.records < 2 or not fc._without_lastmod:
        return
    fc.findings.append(
        Finding(
            "SM508",
            "warning",
            f"The index gives no <lastmod> for {fc._without_lastmod:,} of its "
            f"{fc.records:,} sitemaps; give each child file's modification time so crawlers "
            "fetch only changed sitemaps",
            fc.where,
        )
    )


# -- set checks -------------------------------------------------------------------------------


@dataclass(slots=True)
class DocumentNode:
    """A validated document, as the set checks see it."""

    where: str
    url: str | None  # normalised; None when the document's URL is unknown
    kind: str | None
    children: list[tuple[str, str | None, int | None]] = field(default_factory=list)
    max_day: str = ""


class HashIndex:
    """Which file of a set first listed a URL, by the URL's ``hash()``: about 8 bytes a
    URL (a sorted array of hashes per file) and a fixed bitmap that answers most
    lookups without searching them.

    >>> index = HashIndex()
    >>> index.add(0, [hash("a"), hash("b")])
    >>> index.add(1, [hash("b"), hash("c")])
    >>> index.get(hash("b")), index.get(hash("c")), index.get(hash("d")), len(index)
    (0, 1, None, 4)
    """

    def __init__(self) -> None:
        # at least 16 bits a hash (about 6 % of misses are searched), 2**25 at most (4 MiB)
        self._nbits = 1 << 16
        self._bits = bytearray(self._nbits >> 3)
        self._files: list[tuple[int, array[int]]] = []
        self._pending: list[tuple[int, array[int]]] = []  # sorted at the first lookup
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def add(self, file: int, hashes: Iterable[int]) -> None:
        """The hashes of one more file (those already in the index keep their file).

        Sorted only when the index is next asked: the last file of a set never is.
        """
        raw = array("q", hashes)
        if raw:
            self._pending.append((file, raw))
            self._count += len(raw)

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        for file, raw in pending:
            self._take(file, array("q", sorted(set(raw))))

    def _take(self, file: int, ordered: array[int]) -> None:
        self._files.append((file, ordered))
        total = sum(len(o) for _, o in self._files)
        if total * 16 > self._nbits and self._nbits < 1 << 25:
            while total * 16 > self._nbits and self._nbits < 1 << 25:
                self._nbits <<= 2
            self._bits = bytearray(self._nbits >> 3)
            for _, earlier in self._files:
                self._mark(earlier)
        else:
            self._mark(ordered)

    def _mark(self, hashes: array[int]) -> None:
        bits, mask = self._bits, self._nbits - 1
        for h in hashes:
            i = h & mask
            bits[i >> 3] |= 1 << (i & 7)

    def get(self, h: int) -> int | None:
        """The first file that listed hash ``h``, or None."""
        if self._pending:
            self._flush()
        i = h & (self._nbits - 1)
        if not self._bits[i >> 3] & (1 << (i & 7)):
            return None
        for file, ordered in self._files:
            at = bisect_left(ordered, h)
            if at < len(ordered) and ordered[at] == h:
                return file
        return None

    def __contains__(self, h: object) -> bool:
        return isinstance(h, int) and self.get(h) is not None

    def isdisjoint(self, hashes: Iterable[int]) -> bool:
        """Whether none of ``hashes`` is in the index."""
        if self._pending:
            self._flush()
        bits, mask = self._bits, self._nbits - 1
        for h in hashes:
            i = h & mask
            if bits[i >> 3] & (1 << (i & 7)) and self.get(h) is not None:
                return False
        return True


class SetChecks:
    """Everything validated together: duplicates across files, the index graph, hreflang.

    Memory: the duplicate checks keep about 16 bytes a URL (:class:`HashIndex`, two or
    three of them) and the hreflang checks the annotations; beyond ``max_urls`` URLs the
    cross-file checks stop, with a note.
    """

    def __init__(self, *, max_urls: int = 5_000_000) -> None:
        self.files: list[str] = []
        self.exact = HashIndex()
        self.norm = HashIndex()
        self.variant = HashIndex()
        self.alternates: dict[str, tuple[int, AlternateEntry]] = {}
        self.nodes: list[DocumentNode] = []
        self.max_urls = max_urls
        self.tracking = True
        self.notes: list[str] = []

    def add_file(self, where: str | None) -> int:
        self.files.append(where or "<input>")
        return len(self.files) - 1

    def merge(self, fc: FileChecks) -> None:
        """Take a finished document's URLs into the set."""
        if fc.index or not self.tracking:
            return
        k = fc.file_index
        for target, values in (
            (self.exact, fc._seen),
            (self.norm, fc._norms),
            (self.variant, fc._variants),
        ):
            target.add(k, map(hash, values))
        for entry in fc.alternates:
            self.alternates.setdefault(entry.norm, (k, entry))
        if len(self.exact) > self.max_urls:
            self.tracking = False
            self.notes.append(
                f"duplicate and hreflang checks across files stopped after {len(self.exact):,} "
                "URLs, to bound memory"
            )

    def add_document(self, node: DocumentNode) -> None:
        self.nodes.append(node)

    def finish(self) -> list[Finding]:
        """The set-level findings (call once every document was added)."""
        out: list[Finding] = []
        _index_graph(self, out)
        _reciprocity(self, out)
        return out


@_decides("SM502", "SM506", "SM508", "SM509")
def _index_graph(s: SetChecks, out: list[Finding]) -> None:
    """SM502 nested indexes, SM506 cycles, SM509 children of several indexes, SM508 stale."""
    by_url = {n.url: n for n in s.nodes if n.url is not None}
    listed: dict[str, str] = {}
    for node in s.nodes:
        if node.kind != "sitemapindex":
            continue
        for child, lastmod, line in node.children:
            key = normalize(child)
            if key == node.url:
                out.append(
                    Finding(
                        "SM506",
                        "error",
                        f"The index lists itself ({child!r})",
                        node.where,
                        line,
                        None,
                        child,
                    )
                )
                continue
            target = by_url.get(key)
            if target is not None and target.kind == "sitemapindex":
                out.append(
                    Finding(
                        "SM502",
                        "error",
                        f"{child!r} is itself a sitemap index; an index may list only "
                        "sitemaps (Google ignores nested indexes). List its children here",
                        node.where,
                        line,
                        None,
                        child,
                    )
                )
            first = listed.setdefault(key, node.where)
            if first != node.where:
                out.append(
                    Finding(
                        "SM509",
                        "warning",
                        f"{child!r} is also listed by {first}; list each sitemap in one index",
                        node.where,
                        line,
                        None,
                        child,
                    )
                )
            if target is not None and lastmod and target.max_day > lastmod[:10]:
                out.append(
                    Finding(
                        "SM508",
                        "warning",
                        f"The index gives lastmod {lastmod!r} for {child!r}, but that sitemap "
                        f"lists pages changed on {target.max_day}; the index lastmod should be "
                        "the child file's modification time",
                        node.where,
                        line,
                        None,
                        child,
                    )
                )
    _cycles(s, by_url, out)


def _cycles(s: SetChecks, by_url: dict[str, DocumentNode], out: list[Finding]) -> None:
    edges: dict[str, list[tuple[str, str, int | None]]] = {}
    for node in s.nodes:
        if node.kind == "sitemapindex" and node.url is not None:
            edges[node.url] = [
                (normalize(c), c, line)
                for c, _, line in node.children
                if normalize(c) in by_url
                and by_url[normalize(c)].kind == "sitemapindex"
                and normalize(c) != node.url
            ]
    state: dict[str, int] = {}  # 1 on the path, 2 done
    reported: set[tuple[str, str]] = set()

    def visit(url: str) -> None:
        state[url] = 1
        for key, raw, line in edges.get(url, ()):
            if state.get(key) == 1 and (url, key) not in reported:
                reported.add((url, key))
                out.append(
                    Finding(
                        "SM506",
                        "error",
                        f"Listing {raw!r} closes a cycle of sitemap indexes; an index must "
                        "not (even indirectly) list itself",
                        by_url[url].where,
                        line,
                        None,
                        raw,
                    )
                )
            elif key not in state:
                visit(key)
        state[url] = 2

    for url in edges:
        if url not in state:
            visit(url)


def _same_cluster(a: AlternateEntry, b: AlternateEntry) -> bool:
    """Whether two members agree on their cluster: the same pages (each counting itself,
    so a missing self-reference is HRE904's business) and no hreflang on different pages."""
    if a.pairs == b.pairs:
        return True
    pages_a = {h for _, h in a.pairs} | {a.norm}
    pages_b = {h for _, h in b.pairs} | {b.norm}
    if pages_a != pages_b:
        return False
    langs_a: dict[str, set[str]] = {}
    langs_b: dict[str, set[str]] = {}
    for pairs, langs in ((a.pairs, langs_a), (b.pairs, langs_b)):
        for lang, href in pairs:
            langs.setdefault(lang, set()).add(href)
    return all(langs_b[lang] == hrefs for lang, hrefs in langs_a.items() if lang in langs_b)


@_decides("HRE905", "HRE907")
def _reciprocity(s: SetChecks, out: list[Finding]) -> None:
    """HRE905 return links across the set, HRE907 clusters listing different alternates."""
    alts = s.alternates
    if not alts or not s.tracking:
        return
    exact, norm = s.exact, s.norm
    for key, (k, entry) in alts.items():
        where = s.files[k]
        inconsistent: list[str] = []
        for lang, href in sorted(entry.pairs):
            if href == key:
                continue
            target = alts.get(href)
            if target is None:
                listed = hash(href) in exact or hash(href) in norm
                out.append(
                    Finding(
                        "HRE905",
                        "error" if listed else "warning",
                        f"The {lang} alternate {_clip(href)!r} "
                        + (
                            "has no hreflang annotations pointing back to this URL"
                            if listed
                            else "is not in the validated sitemaps, so its return link cannot be "
                            "checked"
                        )
                        + "; Google ignores annotations that are not reciprocal",
                        where,
                        entry.line,
                        None,
                        entry.loc,
                    )
                )
                continue
            back = {h for _, h in target[1].pairs}
            if key not in back:
                out.append(
                    Finding(
                        "HRE905",
                        "error",
                        f"The {lang} alternate {_clip(href)!r} does not link back to this URL; "
                        "every member of a cluster must list every other",
                        where,
                        entry.line,
                        None,
                        entry.loc,
                    )
                )
            elif not _same_cluster(entry, target[1]):
                inconsistent.append(href)
        if inconsistent:
            out.append(
                Finding(
                    "HRE907",
                    "warning",
                    f"This URL's alternates differ from those of {_clip(inconsistent[0])!r}; "
                    "every member of a cluster should list the same (hreflang, href) set",
                    where,
                    entry.line,
                    None,
                    entry.loc,
                )
            )
