"""core: read sitemaps from bytes, incrementally and defensively. Pure: never does I/O.

One reader for every format a sitemap URL can serve: XML ``urlset`` and ``sitemapindex``
(sitemaps.org 0.9, the legacy Google 0.84 namespace, or no namespace), RSS 2.0, Atom 0.3 and
1.0, plain-text sitemaps, each optionally gzip-compressed (one or several members). Bytes go
in with :meth:`SitemapParser.feed`, model objects (:class:`~sitemapkit.core.model.Url`,
:class:`~sitemapkit.core.model.SitemapRef`) come out in document order, problems are
collected as :class:`~sitemapkit.core.finding.Finding` objects.

Rules this module keeps:

* Hardened XML: libxml2 through lxml with no DTD loading, no entity expansion, no network,
  default size and depth limits. A DOCTYPE is reported (SM011); an entity reference is
  never replaced by its text, so XXE and "billion laughs" documents cannot leak files or
  blow up memory.
* Bounded memory: every entry element is dropped from the tree once read; the decompressed
  size (``max_bytes``) and the number of entries (``max_entries``) are budgets whose
  overrun raises :class:`~sitemapkit.errors.LimitError`.
* Tolerant by default: a bad value drops that field, a bad entry drops that entry, each
  with a finding; a document that stops being well-formed keeps every record read before
  the damage (SM004). ``strict=True`` raises :class:`~sitemapkit.errors.ParseError` at the
  first error-severity finding instead (warnings are only recorded).
* Chunking never matters: the same bytes split anywhere give the same records and findings
  (in strict mode, the records of the chunk that an error interrupts are not returned).

lxml's push parser runs with ``recover=False`` in both modes. Its recovery mode silently
mangles values (``?a=1&b=2`` becomes ``?a=1=2``) and reports no errors through the feed
interface, so a reader that must not invent URLs stops at the first fatal error instead.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import Final, Literal

from lxml import etree

from ..errors import LimitError, ParseError, SitemapError, UnsafeXMLError
from . import limits
from .finding import Finding, Severity
from .model import (
    CHANGEFREQS,
    VIDEO_FIELDS,
    Alternate,
    Image,
    InvalidValue,
    News,
    SitemapRef,
    Url,
    Video,
    VideoPlatform,
    VideoRestriction,
)
from .namespace import (
    ATOM03_NS,
    ATOM_NS,
    IMAGE_NS,
    LEGACY_NS,
    NEWS_NS,
    SITEMAP_NS,
    VIDEO_NS,
    XHTML_NS,
)
from .urls import iri_to_uri, is_canonical_loc, resolve, unescape
from .w3cdate import LASTMOD_RE, parse_w3c

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ENTRIES",
    "Kind",
    "Record",
    "SitemapParser",
    "iter_parse",
    "parse_bytes",
]

Record = Url | SitemapRef
Kind = Literal["urlset", "sitemapindex", "rss", "atom", "text"]

#: The protocol's 50 MiB (SM006) plus 1 MiB of slack, so that a slightly oversized file is
#: still read (and reported) rather than refused.
DEFAULT_MAX_BYTES: Final = limits.MAX_BYTES + 1_048_576
DEFAULT_MAX_ENTRIES: Final = 10_000_000
#: Findings listed per rule and document (a 27 MB document of 500,000 bad entries held
#: 1.5 million findings, 213 MB); the others are counted in one last finding.
DEFAULT_MAX_FINDINGS: Final = 1_000


# Severity of each rule as spec/RULES.md gives it (call sites override it where the
# brief's context differs, e.g. a relative <loc> that could be resolved is a warning).
_SEVERITY: Final[dict[str, Severity]] = {
    "SM001": "error",
    "SM002": "warning",
    "SM003": "error",
    "SM004": "error",
    "SM005": "error",
    "SM006": "error",
    "SM007": "error",
    "SM008": "warning",
    "SM009": "error",
    "SM010": "warning",
    "SM011": "warning",
    "SM101": "error",
    "SM102": "error",
    "SM103": "error",
    "SM104": "error",
    "SM106": "warning",
    "SM107": "error",
    "SM110": "error",
    "SM111": "error",
    "SM201": "error",
    "SM202": "error",
    "SM203": "error",
    "SM204": "error",
    "SM301": "error",
    "SM302": "warning",
    "SM304": "error",
    "SM401": "error",
    "SM402": "error",
    "SM501": "error",
    "SM503": "error",
    "IMG601": "error",
    "IMG602": "error",
    "IMG603": "error",
    "IMG605": "error",
    "VID701": "error",
    "VID702": "error",
    "VID703": "warning",
    "VID704": "error",
    "VID705": "error",
    "VID707": "error",
    "VID708": "error",
    "VID709": "error",
    "VID710": "error",
    "VID712": "error",
    "VID713": "error",
    "VID714": "warning",
    "VID715": "warning",
    "VID716": "error",
    "VID717": "error",
    "NEWS801": "error",
    "NEWS802": "error",
    "NEWS803": "error",
    "NEWS804": "error",
    "NEWS805": "error",
    "NEWS807": "error",
    "NEWS808": "warning",
    "HRE901": "error",
    "HRE902": "error",
    "HRE903": "error",
}

_XML_STEP: Final = 65_536  # bytes per lxml feed: bounds the tree built between two drains
_SNIFF_STEP: Final = 4_096  # bytes per feed while looking for the root element
_GZ_STEP: Final = 262_144  # decompressed bytes per zlib call: a bomb is caught early
_FATAL: Final = 3  # libxml2 XML_ERR_FATAL
_NS_DOMAIN: Final = 3  # libxml2 XML_FROM_NAMESPACE

_BOM: Final = b"\xef\xbb\xbf"
_SPACE: Final = b" \t\r\n"
# XML's white space (S production); str.strip() would also eat U+001C-U+001F, which the
# model refuses, and U+00A0, U+3000, which are data.
_XML_SPACE: Final = " \t\r\n"
# Magic numbers of compressions that are not gzip (SM007: "must be gzip").
_OTHER_COMPRESSION: Final = (
    (b"PK\x03\x04", "ZIP"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
_HTML_START: Final = re.compile(rb"<!doctype\s+html|<html[\s>]", re.IGNORECASE)
_XML_DECL: Final = re.compile(
    rb"<\?xml\s+version\s*=\s*[\"'][^\"']*[\"']"
    rb"(?:\s+encoding\s*=\s*[\"']([A-Za-z][A-Za-z0-9._-]*)[\"'])?"
)

_LINE_BREAK: Final = re.compile(rb"\r\n|\r|\n")
_FAST_DATE: Final = re.compile(LASTMOD_RE)
_PRIORITIES: Final = {f"{i / 10:.1f}": i / 10 for i in range(11)}

# The scanner (see SitemapParser._scan_feed): a <urlset> whose entries hold only plain
# loc/lastmod/changefreq/priority elements is read with regular expressions instead of a
# tree; anything else hands the rest of the document to libxml2. A value is character
# data without markup, CDATA or references other than the five predefined entities.
# Repeats are possessive (*+): nothing after them can need a shorter match, and sre then
# keeps no backtracking state per repetition (4M "&amp;" in one loc took 500 MB).
_SCAN_SPACE: Final = "[ \\t\\r\\n]*"
_SCAN_VALUE: Final = (
    "([^<&\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\ufffe\\uffff]*"
    "(?:&(?:amp|lt|gt|quot|apos);[^<&\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\ufffe\\uffff]*)*+)"
)
_SCAN_CORE: Final = (
    f"{_SCAN_SPACE}<url>{_SCAN_SPACE}<loc>{_SCAN_VALUE}</loc>{_SCAN_SPACE}"
    f"(?:<lastmod>{_SCAN_VALUE}</lastmod>{_SCAN_SPACE})?"
    f"(?:<changefreq>{_SCAN_VALUE}</changefreq>{_SCAN_SPACE})?"
    f"(?:<priority>{_SCAN_VALUE}</priority>{_SCAN_SPACE})?"
)
#: A plain entry; the fifth group (images, see _scan_patterns) is always empty.
_SCAN_ENTRY: Final = re.compile(_SCAN_CORE + "()</url>")


@functools.lru_cache(maxsize=8)
def _scan_patterns(prefix: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The entry pattern when ``prefix`` is bound to the image namespace on the root:
    plain entries that may end with images holding only an ``image:loc`` (the fifth
    group), and the pattern of those locs."""
    p = re.escape(prefix)
    value = _SCAN_VALUE[1:-1]  # without its group
    image = (
        f"<{p}:image>{_SCAN_SPACE}<{p}:loc>{value}</{p}:loc>{_SCAN_SPACE}</{p}:image>{_SCAN_SPACE}"
    )
    entry = re.compile(_SCAN_CORE + f"((?:{image})*+)</url>")
    return entry, re.compile(f"<{p}:loc>{_SCAN_VALUE}</{p}:loc>")


# The prolog and root start tag the scanner takes over after: an XML declaration,
# stylesheet processing instructions and <urlset> with attributes, nothing else (no
# DOCTYPE, no comments). The declaration's encoding is checked separately.
_SCAN_HEAD: Final = re.compile(
    rb"(?:<\?xml[^>]*\?>)?[ \t\r\n]*(?:<\?xml-stylesheet[^>]*\?>[ \t\r\n]*)*+"
    rb"<urlset(?:[ \t\r\n]+[A-Za-z_][-\w.:]*[ \t\r\n]*=[ \t\r\n]*(?:\"[^\"<]*\"|'[^'<]*'))*+"
    rb"[ \t\r\n]*>"
)
#: Bytes the scanner holds while waiting for the end of an entry before it gives up.
_SCAN_PENDING: Final = 1 << 16

# The W3C Datetime grammar of spec/DATETIME.md (syntax only; ranges are parse_w3c's job).
_W3C: Final = re.compile(
    r"[0-9]{4}(?:-[0-9]{2}(?:-[0-9]{2}(?:T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
    r"(?:Z|[+-][0-9]{2}:[0-9]{2}))?)?)?"
)
# XSD lexical forms: the model is lenient (Python's Decimal and int accept 5e-1, 1_000,
# NaN), the schemas are not. sitemaps.org <priority>: "Valid values range from 0.0 to 1.0".
_DECIMAL: Final = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_INTEGER: Final = re.compile(r"[+-]?[0-9]+")
_LEXICAL: Final = {
    "priority": (_DECIMAL, "a decimal number such as 0.5", "SM402"),
    "rating": (_DECIMAL, "a decimal number such as 4.2", "VID705"),
    "duration": (_INTEGER, "a whole number of seconds", "VID704"),
    "view_count": (_INTEGER, "a whole number", "VID716"),
}
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
# Not relative references but absolute URLs written wrongly: "https//x", "www.x.com/".
_MALFORMED_ABSOLUTE: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*//|www\.", re.IGNORECASE)
_TEXT_URL: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")

_EXTENSIONS: Final = {IMAGE_NS: "image", VIDEO_NS: "video", NEWS_NS: "news", XHTML_NS: "link"}
_IMAGE_FIELDS: Final = frozenset(["loc", "caption", "geo_location", "title", "license"])
# The <video:*> elements read into model fields (uploader_info is an attribute, tags
# are <video:tag> elements, both handled apart).
_VIDEO_FIELDS: Final = frozenset(VIDEO_FIELDS) - {"uploader_info", "tags"}
_VIDEO_REQUIRED: Final = ("thumbnail_loc", "title", "description")
# Google, 2022-05-06 "Spring cleaning": these video tags have no effect any more (VID714).
_VIDEO_DEPRECATED: Final = frozenset(["category", "gallery_loc", "price", "tvshow"])
# In the XSD but not in the model (Google's current reference does not list them).
_VIDEO_UNREAD: Final = frozenset(["id", "content_segment_loc"])
_VIDEO_RULES: Final = {
    "thumbnail_loc": "VID717",
    "content_loc": "VID717",
    "player_loc": "VID717",
    "title": "VID701",
    "description": "VID701",
    "duration": "VID704",
    "rating": "VID705",
    "view_count": "VID716",
    "family_friendly": "VID709",
    "requires_subscription": "VID709",
    "live": "VID709",
    "uploader": "VID713",
    "uploader_info": "VID713",
    "tags": "VID712",
    "expiration_date": "VID710",
    "publication_date": "VID710",
}
# Google News: tags outside the current reference (NEWS808).
_NEWS_DEPRECATED: Final = frozenset(["access", "genres", "keywords", "stock_tickers"])
_NEWS_RULES: Final = {
    "news.publication.name": "NEWS807",
    "news.publication.language": "NEWS804",
    "news.publication_date": "NEWS805",
    "news.title": "NEWS807",
}
_MAX_REPORTED_NAMESPACES: Final = 100

_PRE, _HEAD, _XML, _TEXT, _DONE = range(5)


def _split(tag: str) -> tuple[str, str]:
    """``"{ns}local"`` → ``("ns", "local")``; a tag without namespace → ``("", tag)``."""
    if tag[:1] == "{":
        ns, _, local = tag[1:].partition("}")
        return ns, local
    return "", tag


def _pull_parser(events: tuple[Literal["start", "end"]], tag: str | None) -> etree.XMLPullParser:
    """lxml's push parser, hardened: no DTD, no entity expansion, no network, default
    size and depth limits, no recovery (see the module docstring)."""
    return etree.XMLPullParser(
        events=events,
        tag=tag,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        recover=False,
        remove_comments=True,
        remove_pis=True,
    )


def _tag(el: etree._Element) -> str:
    tag = el.tag
    return tag if isinstance(tag, str) else ""


def _q(ns: str, local: str) -> str:
    return f"{{{ns}}}{local}" if ns else local


def _ns_key(ns: str) -> str:
    """The namespace a near-miss URI meant: scheme case, https and a trailing slash ignored."""
    key = ns.strip().lower()
    if key.startswith("https://"):
        key = "http://" + key[8:]
    return key.rstrip("/")


_EXTENSION_KEYS: Final = {_ns_key(ns): ns for ns in _EXTENSIONS}


_new = object.__new__
_setattr = object.__setattr__
# The slot descriptors of the frozen model classes: setting through them directly is what
# the dataclass __init__ does (via object.__setattr__), minus the attribute lookup.
_URL_LOC, _URL_LASTMOD, _URL_CHANGEFREQ, _URL_PRIORITY = (
    Url.__dict__[name].__set__ for name in ("loc", "lastmod", "changefreq", "priority")
)
_IMAGE_LOC = Image.__dict__["loc"].__set__
_URL_IMAGES, _URL_VIDEOS, _URL_NEWS, _URL_ALTERNATES = (
    Url.__dict__[name].__set__ for name in ("images", "videos", "news", "alternates")
)


def _fast_url(loc: str, lastmod: str | None, cf: str | None, pr: str | None) -> Url | None:
    """The Url the model would build, when every value is already in canonical form.

    Returns ``None`` (take the slow path) unless each value passes a check that is at
    least as strict as the model's own: ``urls.is_canonical_loc``, ``LASTMOD_RE`` (calendar-exact,
    seconds and an offset), the changefreq set and the ten one-decimal priorities.
    ``tests/core/test_parse.py`` checks that both paths build identical objects.
    """
    loc = loc.strip(_XML_SPACE)
    if not is_canonical_loc(loc):
        return None
    if lastmod is not None:
        lastmod = lastmod.strip(_XML_SPACE)
        if _FAST_DATE.fullmatch(lastmod) is None:
            return None
        if lastmod[-1] == "Z":
            lastmod = lastmod[:-1] + "+00:00"
        elif lastmod.endswith("-00:00"):
            lastmod = lastmod[:-6] + "+00:00"
    if cf is not None:
        cf = cf.strip(_XML_SPACE)
        if cf not in CHANGEFREQS:
            return None
    priority = None
    if pr is not None:
        priority = _PRIORITIES.get(pr.strip(_XML_SPACE))
        if priority is None:
            return None
    url = _new(Url)
    _URL_LOC(url, loc)
    _URL_LASTMOD(url, lastmod)
    _URL_CHANGEFREQ(url, cf)
    _URL_PRIORITY(url, priority)
    _URL_IMAGES(url, ())
    _URL_VIDEOS(url, ())
    _URL_NEWS(url, None)
    _URL_ALTERNATES(url, ())
    return url


def _padded(value: str | None) -> bool:
    """Whether a non-empty value starts or ends with XML white space."""
    return value is not None and (value[0] in _XML_SPACE or value[-1] in _XML_SPACE)


def _fast_ref(loc: str, lastmod: str | None) -> SitemapRef | None:
    """``_fast_url`` for a ``<sitemap>`` entry of an index."""
    url = _fast_url(loc, lastmod, None, None)
    if url is None:
        return None
    ref = _new(SitemapRef)
    _setattr(ref, "loc", url.loc)
    _setattr(ref, "lastmod", url.lastmod)
    return ref


def _loc_rule(text: str) -> str:
    """The SM2xx rule a location the model refused breaks."""
    m = _SCHEME.match(text)
    if m is None:
        return "SM201"
    rest = text[m.end() :]
    if m.group()[:-1].lower() not in ("http", "https") or not rest.startswith("//"):
        return "SM202"
    if rest[2:3] in ("", "/", "?", "#"):
        return "SM201"
    try:
        uri = iri_to_uri(text)
    except ValueError:
        return "SM204"
    if not limits.MIN_LOC_LENGTH <= len(uri) <= limits.MAX_LOC_LENGTH:
        return "SM203"
    return "SM204"


def _clip(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


class SitemapParser:
    """An incremental, hardened reader for one sitemap document.

    Feed the bytes as they arrive (compressed or not); each call returns the records
    completed so far, in document order. ``close()`` returns the rest and runs the
    end-of-document checks. Problems are appended to ``findings``.

    ``source`` names the document in findings and errors; ``base_url`` (the sitemap's own
    URL) resolves relative locations, with a warning. ``kind`` becomes ``"urlset"``,
    ``"sitemapindex"``, ``"rss"``, ``"atom"`` or ``"text"`` once the content shows it.
    ``bytes_in`` counts decompressed bytes, ``entries`` the entry elements (``<url>``,
    ``<sitemap>``, ``<item>``, ``<entry>``, text lines holding a URL) read, kept or not.

    Raises :class:`~sitemapkit.errors.LimitError` when a budget is exceeded and
    :class:`~sitemapkit.errors.ParseError` when there is nothing to read (an HTML page, an
    unknown root element, ZIP data), or in strict mode at the first error finding. Any
    other exception is a bug.

    >>> p = SitemapParser(source="sitemap.xml")
    >>> recs = p.feed(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    ...               b'<url><loc>https://example.com/</loc></url></urlset>')
    >>> [u.loc for u in recs + p.close()], p.kind
    (['https://example.com/'], 'urlset')
    >>> [str(f) for f in p.findings]  # doctest: +ELLIPSIS
    ['sitemap.xml:1: SM010 warning: The document has no XML declaration; ...']
    """

    def __init__(
        self,
        *,
        source: str | None = None,
        base_url: str | None = None,
        strict: bool = False,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_findings: int = DEFAULT_MAX_FINDINGS,
        summarize: bool = True,
    ) -> None:
        if max_bytes < 1 or max_entries < 1:
            raise ValueError("max_bytes and max_entries must be positive")
        self.source = source
        #: Findings listed per rule (0: all); the rest are counted in :attr:`unlisted` and,
        #: with ``summarize``, in one last finding of their rule.
        self.max_findings = max_findings
        self.summarize = summarize
        self._rule_counts: dict[str, int] = {}
        self.base_url = base_url
        self.strict = strict
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.kind: Kind | None = None
        self.findings: list[Finding] = []
        self.bytes_in = 0
        self.entries = 0
        self._out: list[Record] = []
        self._closed = False
        self._error: SitemapError | None = None
        self._fast = True  # tests switch it off to compare both paths
        # compression
        self._magic = b""
        self._compression: str | None = None
        self._gz: zlib._Decompress | None = None
        self._gz_members = 0
        self._gz_member_out = 0
        self._truncated = False  # the plain data ended early: do not close the XML parser
        self._damaged = False  # a fatal error stopped reading
        # plain bytes
        self._state = _PRE
        self._pre = b""
        self._bom_checked = False
        self._ws = False
        self._line_off = 0
        self._col_off = 0
        self._head: list[bytes] = []
        self._sniff: etree.XMLPullParser | None = None
        self._xml: etree.XMLPullParser | None = None
        self._text_parts: list[bytes] = []
        self._text_line = 0
        self._sm006 = False
        # document
        self._core_ns = ""
        self._entry_tag = ""
        self._core: dict[str, str] = {}
        self._t_loc = self._t_lastmod = self._t_changefreq = self._t_priority = ""
        self._on_entry: Callable[[etree._Element], None] = self._on_sitemap
        self._container: etree._Element | None = None
        self._report_strays = True
        self._placed = 0
        self._news = 0
        self._reported: set[str] = set()
        self._prefix_reported = False
        #: True when the scanner read every entry of the document (all plain, see
        #: _scan_feed): nothing but the prolog, the root and its end went to libxml2.
        self.scanned_all = False
        #: True when a value the scanner read has white space around it (SM109).
        self.scanned_padded = False
        #: True when the scanner read extension elements (images) too.
        self.scanned_extensions = False
        # the scanner: on while it reads the entries (see _scan_feed)
        self._scan = False
        self._scan_ok = False
        self._scan_entry = _SCAN_ENTRY
        self._scan_image: re.Pattern[str] | None = None
        self._scan_buf = b""
        self._scan_line = 0  # line of the first byte after the root start tag
        self._scan_nl = 0  # line breaks scanned since then
        self._scan_col = 0  # bytes scanned since the last of them

    # -- public -------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> list[Record]:
        """Parse the next chunk of the document; return the records it completed."""
        self._check_open()
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise TypeError(f"feed() takes bytes, not {type(chunk).__name__}")
        try:
            self._feed_raw(bytes(chunk))
        except SitemapError as exc:
            self._error = exc
            raise
        out, self._out = self._out, []
        return out

    def close(self) -> list[Record]:
        """Finish the document: return the last records and run end-of-document checks."""
        self._check_open()
        self._closed = True
        try:
            self._finish()
        except SitemapError as exc:
            self._error = exc
            raise
        finally:
            self._count_unlisted()
        out, self._out = self._out, []
        return out

    @property
    def unlisted(self) -> dict[str, int]:
        """Findings per rule beyond ``max_findings``, not in :attr:`findings`."""
        cap = self.max_findings
        return {r: n - cap for r, n in self._rule_counts.items() if cap and n > cap}

    def _count_unlisted(self) -> None:
        if not self.summarize:
            return
        cap = self.max_findings
        for rule, n in self._rule_counts.items():
            if cap and n > cap:
                self.findings.append(
                    Finding(
                        rule,
                        _SEVERITY[rule],
                        f"{n - cap:,} more {rule} findings in this document are not listed "
                        f"(at most {cap:,} per rule)",
                        self.source,
                    )
                )

    # -- findings -----------------------------------------------------------------------

    def _add(
        self,
        rule: str,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        loc: str | None = None,
        severity: Severity | None = None,
        fatal: bool | None = None,
    ) -> None:
        sev = severity or _SEVERITY[rule]
        # a hostile document can hold millions of bad entries: list the first ones only
        n = self._rule_counts[rule] = self._rule_counts.get(rule, 0) + 1
        if not self.max_findings or n <= self.max_findings:
            self.findings.append(Finding(rule, sev, message, self.source, line, column, loc))
        if fatal if fatal is not None else (self.strict and sev == "error"):
            cls = UnsafeXMLError if rule == "SM011" else ParseError
            raise cls(f"{message} [{rule}]", where=self.source, line=line, column=column)

    def _once(self, key: str) -> bool:
        """True the first time ``key`` is seen (caps repeated per-document findings)."""
        if key in self._reported or len(self._reported) >= _MAX_REPORTED_NAMESPACES:
            return False
        self._reported.add(key)
        return True

    def _check_open(self) -> None:
        if self._error is not None:
            raise self._error
        if self._closed:
            raise ValueError("the parser is closed; create a new SitemapParser per document")

    # -- compression (SM007) ------------------------------------------------------------

    def _feed_raw(self, data: bytes, final: bool = False) -> None:
        if self._compression is None:
            self._magic += data
            if len(self._magic) < 6 and not final:
                return
            data, self._magic = self._magic, b""
            self._compression = "gzip" if data[:2] == b"\x1f\x8b" else "none"
            self._check_magic(data)
        if self._compression == "gzip":
            self._gunzip(data)
        elif self._compression == "none":
            self._feed_plain(data)
        # "failed": corrupt gzip, the rest of the input is ignored

    def _check_magic(self, data: bytes) -> None:
        for magic, name in _OTHER_COMPRESSION:
            if data.startswith(magic):
                self._add(
                    "SM007",
                    f"The document is {name}-compressed; sitemaps may only be compressed with gzip",
                    fatal=True,
                )
        if self.source is not None and self._compression == "none":
            path = self.source.split("?", 1)[0].split("#", 1)[0]
            if path.endswith(".gz"):
                self._add(
                    "SM008",
                    f"{self.source!r} is named .gz but its content is not gzip; "
                    "compress it or drop the .gz suffix",
                )

    def _gunzip(self, data: bytes) -> None:
        while True:
            if self._gz is None:
                if self._gz_members:  # RFC 1952 members may follow; zero padding is ignored
                    data = data.lstrip(b"\x00")
                if not data:
                    return
                self._gz = zlib.decompressobj(16 + zlib.MAX_WBITS)
                self._gz_member_out = 0
            gz = self._gz
            try:
                out = gz.decompress(data, _GZ_STEP)
            except zlib.error as exc:
                self._gzip_failed(str(exc))
                return
            if out:
                self._gz_member_out += len(out)
                self._feed_plain(out)
            if gz.eof:
                self._gz_members += 1
                self._gz = None
                data = gz.unused_data
                continue
            data = gz.unconsumed_tail
            if not data and len(out) < _GZ_STEP:
                return

    def _gzip_failed(self, reason: str) -> None:
        if self._gz_members and not self._gz_member_out:
            msg = (
                f"Unexpected bytes after the end of the gzip data ({reason}); they were "
                "ignored. Remove them"
            )
        else:
            self._truncated = self._damaged = True
            msg = (
                f"The gzip data is corrupt ({reason}); records before the damage were "
                "read. Recompress the file with gzip"
            )
        self._compression = "failed"
        self._gz = None
        self._add("SM007", msg)

    # -- plain bytes: BOM, leading space, format detection ------------------------------

    def _feed_plain(self, data: bytes) -> None:
        self.bytes_in += len(data)
        if self.bytes_in > self.max_bytes:
            raise LimitError(
                f"The document is larger than {self.max_bytes:,} bytes after decompression; "
                "raise max_bytes to read it",
                where=self.source,
            )
        # sitemaps.org: "no larger than 50MB (52,428,800 bytes)" uncompressed.
        if self.bytes_in > limits.MAX_BYTES and not self._sm006:
            self._sm006 = True
            self._add(
                "SM006",
                f"The document is larger than {limits.MAX_BYTES:,} bytes "
                "uncompressed, the protocol's limit; split it into several sitemaps",
            )
        state = self._state
        if state == _XML:
            self._feed_xml(data)
        elif state == _TEXT:
            self._feed_text(data)
        elif state == _HEAD:
            self._feed_head(data)
        elif state == _PRE:
            self._feed_pre(data, False)

    def _feed_pre(self, data: bytes, final: bool) -> None:
        buf = self._pre + data
        if not self._bom_checked:
            if len(buf) < 3 and _BOM.startswith(buf) and not final:
                self._pre = buf
                return
            self._bom_checked = True
            if buf.startswith(_BOM):
                buf = buf[3:]
                self._add(
                    "SM002",
                    "The document starts with a UTF-8 byte order mark; writers should not emit one",
                    line=1,
                )
            elif buf[:2] in (b"\xff\xfe", b"\xfe\xff"):
                self._add("SM001", "The document is UTF-16 encoded; sitemaps must be UTF-8", line=1)
                self._start_xml(buf)
                return
        rest = buf.lstrip(_SPACE)
        if len(rest) < len(buf):
            self._skip_space(buf[: len(buf) - len(rest)])
        if not rest or (rest[:1] == b"<" and len(rest) < 16 and not final):
            self._pre = rest
            return
        self._pre = b""
        if rest[:1] == b"<":
            if _HTML_START.match(rest):
                self._add(
                    "SM005",
                    "The document is an HTML page, not a sitemap; submit the sitemap's own URL",
                    line=self._line_off + 1,
                    fatal=True,
                )
            self._start_xml(rest)
        else:
            self._start_text(rest)

    def _skip_space(self, space: bytes) -> None:
        self._ws = True
        breaks = max(space.count(b"\n"), space.count(b"\r"))
        if breaks:
            self._line_off += breaks
            self._col_off = len(space) - max(space.rfind(b"\n"), space.rfind(b"\r")) - 1
        else:
            self._col_off += len(space)

    def _line(self, el: etree._Element) -> int | None:
        n = el.sourceline
        return None if n is None else n + self._line_off

    # -- XML: find the root, then stream the entries ------------------------------------

    def _start_xml(self, data: bytes) -> None:
        self._state = _HEAD
        self._sniff = _pull_parser(("start",), None)
        self._feed_head(data)

    def _feed_head(self, data: bytes) -> None:
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
            if root is not None or failed:
                head = b"".join(self._head)
                self._head = []
                self._sniff = None
                self._on_root(root, head)
                self._state = _XML
                self._begin_xml(head + data[i + _SNIFF_STEP :])
                return

    def _on_root(self, root: etree._Element | None, head: bytes) -> None:
        """Decide the format from the root element and report the prolog's problems."""
        entry = "{urn:sitemapkit:none}none"  # broken prolog: the parser reports the error
        if root is not None:
            ns, local = _split(_tag(root))
            if local.lower() == "html":
                self._add(
                    "SM005",
                    "The document is an HTML page, not a sitemap; submit the sitemap's own URL",
                    line=self._line(root),
                    fatal=True,
                )
            self._check_prolog(root, head)
            if local in ("urlset", "sitemapindex"):
                entry = self._setup_sitemap(root, ns, local)
            elif local == "rss" and not ns:
                self.kind = "rss"
                entry = "item"
                self._on_entry = self._on_item
                self._report_strays = False
            elif local == "feed" and ns in (ATOM_NS, ATOM03_NS):
                self.kind = "atom"
                self._core_ns = ns
                entry = _q(ns, "entry")
                self._on_entry = self._on_atom_entry
                self._report_strays = False
            else:
                self._add(
                    "SM101",
                    f"Unsupported root element <{local}>"
                    + (f" in namespace {ns!r}" if ns else "")
                    + "; a sitemap's root is <urlset> or <sitemapindex> in namespace "
                    f"{SITEMAP_NS!r} (RSS 2.0 and Atom feeds are read too)",
                    line=self._line(root),
                    fatal=True,
                )
        self._entry_tag = entry
        self._xml = _pull_parser(("end",), entry)
        if root is not None and self.kind == "urlset" and root.prefix is None:
            info = root.getroottree().docinfo
            decl = _XML_DECL.match(head)
            enc = decl.group(1) if decl is not None else None
            self._scan_ok = (
                not info.doctype
                and info.internalDTD is None
                and (enc is None or enc.lower() in (b"utf-8", b"utf8"))
            )
            prefix = next((p for p, uri in root.nsmap.items() if p and uri == IMAGE_NS), None)
            if prefix is not None:
                self._scan_entry, self._scan_image = _scan_patterns(prefix)

    def _check_prolog(self, root: etree._Element, head: bytes) -> None:
        has_decl = head.startswith(b"<?xml")
        if self._ws:
            if has_decl:
                self._add(
                    "SM003",
                    "Whitespace precedes the XML declaration; '<?xml' must "
                    "be the first bytes of the file",
                    line=1,
                )
            else:
                self._add(
                    "SM003",
                    "Whitespace precedes the root element; start the file with the XML declaration",
                    line=1,
                    severity="warning",
                )
        if not has_decl:
            if head[:2] not in (b"\xff\xfe", b"\xfe\xff"):
                self._add(
                    "SM010",
                    "The document has no XML declaration; start it with "
                    '<?xml version="1.0" encoding="UTF-8"?>',
                    line=self._line_off + 1,
                )
        else:
            m = _XML_DECL.match(head)
            enc = m.group(1) if m is not None else None
            if enc is not None and enc.lower() not in (b"utf-8", b"utf8"):
                self._add(
                    "SM001",
                    f"The XML declaration says encoding={enc.decode()!r}; "
                    "sitemaps must be UTF-8 encoded",
                    line=self._line_off + 1,
                )
        info = root.getroottree().docinfo
        if info.doctype or info.internalDTD is not None:
            at = head.find(b"<!DOCTYPE")
            line = head.count(b"\n", 0, at) + 1 + self._line_off if at >= 0 else None
            self._add(
                "SM011",
                "The document has a DOCTYPE; sitemaps never need one. Entities "
                "are not expanded and no DTD is loaded",
                line=line,
                fatal=self.strict,
            )

    def _setup_sitemap(self, root: etree._Element, ns: str, local: str) -> str:
        if ns != SITEMAP_NS:
            if ns == LEGACY_NS:
                why = f"the legacy Google namespace {ns!r}"
            elif not ns:
                why = "no namespace"
            else:
                why = f"namespace {ns!r}"
            self._add(
                "SM101", f'<{local}> uses {why}; use xmlns="{SITEMAP_NS}"', line=self._line(root)
            )
        self._core_ns = ns
        self._t_loc = _q(ns, "loc")
        self._t_lastmod = _q(ns, "lastmod")
        self._t_changefreq = _q(ns, "changefreq")
        self._t_priority = _q(ns, "priority")
        names: tuple[str, ...]
        if local == "urlset":
            self.kind = "urlset"
            names = ("loc", "lastmod", "changefreq", "priority")
            entry = "url"
        else:
            self.kind = "sitemapindex"
            self._on_entry = self._on_sitemap
            names = ("loc", "lastmod")
            entry = "sitemap"
        self._core = {_q(ns, n): n for n in names}
        return _q(ns, entry)

    def _begin_xml(self, data: bytes) -> None:
        """Feed the document from its first byte: libxml2 reads the prolog and the root
        start tag, then the scanner takes the entries when it can."""
        m = _SCAN_HEAD.match(data) if self._scan_ok and self._fast else None
        if m is None:
            self._feed_xml(data)
            return
        head = data[: m.end()]
        self._feed_xml(head)
        if self._state == _XML:
            self._scan = True
            self._scan_line = self._line_off + 1 + head.count(b"\n")
            self._scan_feed(data[m.end() :])

    # -- the scanner ----------------------------------------------------------------------
    #
    # Most sitemaps are long runs of plain entries. The scanner reads those with one
    # regular expression per entry (_SCAN_ENTRY) and builds each Url on the fast path;
    # the first thing it does not take (an extension, a comment, CDATA, a value the fast
    # path refuses, bad UTF-8, the end tag) hands the rest of the document to libxml2,
    # fed after padding of as many line breaks and spaces as the scanned bytes held, so
    # that its line and column numbers stay those of the document. Scanned or not, the
    # records and findings are the same (tests/core/test_parse.py compares them).

    def _scan_feed(self, data: bytes) -> None:
        buf = self._scan_buf + data if self._scan_buf else data
        self._scan_buf = b""
        done = 0
        end = buf.rfind(b"</url>") + 6
        if end >= 6:
            try:
                text = buf[:end].decode()
            except UnicodeDecodeError:
                self._scan_switch(buf)
                return
            stop = text.find("]]>")  # not allowed in character data: libxml2 reports it
            limit = len(text) if stop < 0 else stop
            i = self._scan_text(text, limit)
            done = end if i == len(text) else len(text[:i].encode())
            self._scan_advance(buf, done)
            if i < limit or stop >= 0:
                self._scan_switch(buf[done:])
                return
        rest = buf[done:]
        tail = rest.lstrip(_SPACE)
        if tail.startswith(b"</urlset"):
            self.scanned_all = True
        if len(rest) > _SCAN_PENDING or (
            tail and not (tail.startswith(b"<url>") or b"<url>".startswith(tail))
        ):
            self._scan_switch(rest)  # the end tag, a comment, anything else: libxml2 reads on
        else:
            self._scan_buf = rest

    def _scan_text(self, text: str, limit: int) -> int:
        """Read plain entries from ``text[:limit]``; return where the first other one starts."""
        match = self._scan_entry.match
        image_locs = self._scan_image
        append = self._out.append
        max_entries = self.max_entries
        pos = 0
        while pos < limit:
            m = match(text, pos, limit)
            if m is None:
                return pos
            loc, lastmod, changefreq, priority, images = m.groups()
            if "&" in loc:
                loc = unescape(loc)
            if lastmod is not None and "&" in lastmod:
                lastmod = unescape(lastmod)
            if changefreq is not None and "&" in changefreq:
                changefreq = unescape(changefreq)
            if priority is not None and "&" in priority:
                priority = unescape(priority)
            url = _fast_url(loc, lastmod, changefreq, priority)
            if url is None:
                return pos
            if images:
                assert image_locs is not None
                pictures = self._scan_images(image_locs.findall(images))
                if pictures is None:
                    return pos
                _URL_IMAGES(url, pictures)
                self.scanned_extensions = True
            # the fast path took the values stripped; the validator wants to know (SM109)
            if not self.scanned_padded and (
                _padded(loc) or _padded(lastmod) or _padded(changefreq) or _padded(priority)
            ):
                self.scanned_padded = True
            self.entries += 1
            if self.entries > max_entries:
                self._over_budget(self._scan_line_at(text, pos))
            self._placed += 1
            if self._placed == limits.MAX_URLS + 1:
                self._too_many(self._scan_line_at(text, pos))
            append(url)
            pos = m.end()
        return pos

    @staticmethod
    def _scan_images(locs: list[str]) -> tuple[Image, ...] | None:
        """The images of an entry, as the tree path builds them; None unless every loc
        is canonical (and at most the protocol's 1,000): then the tree path decides."""
        if len(locs) > limits.MAX_IMAGES:
            return None
        out = []
        for loc in locs:
            if "&" in loc:
                loc = unescape(loc)
            loc = loc.strip(_XML_SPACE)
            if not loc or not is_canonical_loc(loc):
                return None
            image = _new(Image)
            _IMAGE_LOC(image, loc)
            for name in ("caption", "geo_location", "title", "license"):
                _setattr(image, name, None)
            out.append(image)
        return tuple(out)

    def _scan_line_at(self, text: str, pos: int) -> int:
        """The line of the entry that starts (after white space) at ``text[pos]``."""
        tag = text.index("<url>", pos)
        return self._scan_line + self._scan_nl + text.count("\n", 0, tag)

    def _scan_advance(self, buf: bytes, done: int) -> None:
        """Count the line breaks of the ``done`` bytes just scanned."""
        breaks = buf.count(b"\n", 0, done)  # libxml2 counts LF only (CR LF is one break)
        if breaks:
            last = buf.rfind(b"\n", 0, done)
            self._scan_nl += breaks
            self._scan_col = done - last - 1
        else:
            self._scan_col += done

    def _scan_switch(self, rest: bytes) -> None:
        """Hand the rest of the document to libxml2, padded to keep its positions."""
        self._scan = False
        self._scan_buf = b""
        self._feed_xml(b"\n" * self._scan_nl + b" " * self._scan_col + rest)

    def _feed_xml(self, data: bytes) -> None:
        if self._scan:
            self._scan_feed(data)
            return
        parser = self._xml
        assert parser is not None
        for i in range(0, len(data), _XML_STEP):
            try:
                parser.feed(data[i : i + _XML_STEP])
            except etree.XMLSyntaxError as exc:
                self._drain(parser)
                self._xml_failed(parser, exc)
                return
            self._drain(parser)
            # lxml ignores undeclared entities when resolve_entities=False, but libxml2 has
            # stopped: its log is the only place that says so.
            if self._fatal_error(parser) is not None:
                self._xml_failed(parser, None)
                return

    def _drain(self, parser: etree.XMLPullParser) -> None:
        events = parser.read_events()
        if self.kind == "urlset":
            self._read_urls(events)
        else:
            on_entry = self._on_entry
            for _event, el in events:
                on_entry(el)

    @staticmethod
    def _fatal_error(parser: etree.XMLPullParser) -> etree._LogEntry | None:
        for entry in parser.feed_error_log:
            if entry.level >= _FATAL and entry.domain != _NS_DOMAIN:
                return entry
        return None

    def _xml_failed(self, parser: etree.XMLPullParser, exc: etree.XMLSyntaxError | None) -> None:
        """A fatal well-formedness error: report it and read nothing more."""
        self._state = _DONE
        self._xml = None
        self._damaged = True
        entry = self._fatal_error(parser)
        if entry is not None:
            message, type_name = entry.message, entry.type_name
            line, column = entry.line, entry.column
        else:
            assert exc is not None
            message, type_name = str(exc.msg), ""
            line, column = exc.position
        self._report_xml_error(message, type_name, line, column, stopped=True)

    def _report_xml_error(
        self, message: str, type_name: str, line: int, column: int, *, stopped: bool
    ) -> None:
        message = message.strip().rstrip(".")
        if column and line == 1:
            column += self._col_off
        at_line = line + self._line_off if line else None
        at_column = column or None
        tail = "; records before this point were read" if stopped else ""
        if "ENCODING" in type_name:
            self._add(
                "SM001",
                f"The document is not valid UTF-8: {message}{tail}",
                line=at_line,
                column=at_column,
            )
        elif ("ENTITY" in type_name and "ENTITYREF" not in type_name) or (
            "amplification" in message
        ):
            self._add(
                "SM004",
                f"The document is not well-formed XML: {message}{tail}. "
                "Sitemaps need no entities other than &amp; &lt; &gt; &quot; &apos;",
                line=at_line,
                column=at_column,
            )
        else:
            self._add(
                "SM004",
                f"The document is not well-formed XML: {message}{tail}. "
                "Escape & as &amp; and < as &lt;, and close every tag",
                line=at_line,
                column=at_column,
            )

    def _close_xml(self) -> None:
        parser = self._xml
        assert parser is not None
        root: etree._Element | None = None
        error: etree.XMLSyntaxError | None = None
        try:
            root = parser.close()
        except etree.XMLSyntaxError as exc:
            error = exc
        self._drain(parser)
        if self._fatal_error(parser) is not None:
            self._xml_failed(parser, error)
            return
        if error is not None:
            # Only namespace errors (an undeclared prefix) remain: libxml2 read everything.
            for entry in parser.feed_error_log:
                if entry.level >= 2:
                    if not self._prefix_reported:
                        self._report_xml_error(
                            entry.message, entry.type_name, entry.line, entry.column, stopped=False
                        )
                    break
        self._xml = None
        self._state = _DONE
        container = self._container
        if container is None and root is not None:
            container = root if self.kind != "rss" else root.find("channel")
        if container is not None and self._report_strays:
            for child in container:
                if child.tag != self._entry_tag:
                    self._stray(child)

    # -- XML entries ----------------------------------------------------------------------

    def _count(self, el: etree._Element) -> None:
        self.entries += 1
        if self.entries > self.max_entries:
            self._over_budget(self._line(el))

    def _over_budget(self, line: int | None) -> None:
        raise LimitError(
            f"The document has more than {self.max_entries:,} entries; raise max_entries "
            "to read it",
            where=self.source,
            line=line,
        )

    def _too_many(self, line: int | None) -> None:
        """The entry count just passed the protocol's 50,000 (SM110, SM503)."""
        if self.kind == "sitemapindex":
            self._add(
                "SM503",
                f"The index lists more than {limits.MAX_SITEMAPS:,} sitemaps; "
                "split it into several indexes",
                line=line,
            )
        elif self.kind in ("urlset", "text"):
            self._add(
                "SM110",
                f"The sitemap has more than {limits.MAX_URLS:,} URLs; split it "
                "into several sitemaps under an index",
                line=line,
            )

    def _adopt(self, el: etree._Element, parent: etree._Element | None) -> bool:
        """Place an entry: True if it sits where it belongs (its earlier siblings are
        dropped from the tree, reporting stray elements among them)."""
        if parent is not self._container:
            if self._container is None and parent is not None and self._is_container(parent):
                self._container = parent
            else:
                self._misplaced(el)
                return False
        assert parent is not None
        prev = el.getprevious()
        if prev is not None:
            if prev.getprevious() is None and prev.tag == self._entry_tag:
                del prev
                del parent[0]
            else:
                del prev
                self._purge(el, parent)
        self._placed += 1
        if self._placed == limits.MAX_URLS + 1:
            self._too_many(self._line(el))
        return True

    def _is_container(self, parent: etree._Element) -> bool:
        up = parent.getparent()
        if self.kind == "rss":
            return parent.tag == "channel" and up is not None and up.getparent() is None
        return up is None

    def _purge(self, el: etree._Element, parent: etree._Element) -> None:
        tag = self._entry_tag
        while True:
            first = parent[0]
            if first is el:
                return
            if self._report_strays and first.tag != tag:
                self._stray(first)
            del first
            del parent[0]

    def _misplaced(self, el: etree._Element) -> None:
        local = _split(self._entry_tag)[1]
        if self._report_strays:
            parent = el.getparent()
            where = f"<{_split(_tag(parent))[1]}>" if parent is not None else "the document"
            self._add(
                "SM107",
                f"<{local}> inside {where} is ignored; entries must be "
                f"direct children of <{self.kind}>",
                line=self._line(el),
            )
        el.clear()

    def _stray(self, el: etree._Element) -> None:
        tag = el.tag
        line = self._line(el)
        if not isinstance(tag, str):
            return
        ns, local = _split(tag)
        container = "urlset" if self.kind == "urlset" else "sitemapindex"
        if ns == self._core_ns:
            hint = (
                "an index lists <sitemap> entries, a sitemap lists <url> entries"
                if local in ("url", "sitemap")
                else "remove it"
            )
            self._add("SM107", f"Unexpected <{local}> in <{container}>; {hint}", line=line)
        elif _ns_key(ns) in _EXTENSION_KEYS:
            self._add(
                "SM107",
                f"Extension element <{local}> directly under <{container}> is "
                "meaningless; put it inside an entry",
                line=line,
            )
        elif self._once(f"SM107:{ns}"):
            self._add(
                "SM107",
                f"Elements of the unknown namespace {ns!r} are not validated; they were ignored",
                line=line,
                severity="warning",
            )

    def _value(self, el: etree._Element, loc: str | None) -> str | None:
        """The stripped text of a simple element, or None if it holds markup (reported)."""
        if len(el) == 0:
            text = el.text
            return "" if text is None else text.strip(_XML_SPACE)
        name = _split(_tag(el))[1]
        for child in el:
            if isinstance(child, etree._Entity):
                self._add(
                    "SM011",
                    f"<{name}> uses the entity {child.text}, which is never "
                    "expanded; the value was ignored",
                    line=self._line(el),
                    loc=loc,
                )
                return None
        self._add(
            "SM107",
            f"<{name}> must hold text only, not elements; the value was ignored",
            line=self._line(el),
            loc=loc,
        )
        return None

    def _peek(self, el: etree._Element, tag: str) -> str | None:
        for child in el:
            if child.tag == tag:
                text = child.text
                return text.strip(_XML_SPACE) if text else None
        return None

    def _absolute(self, text: str, line: int | None, raw: str | None, what: str) -> str | None:
        """An absolute location for ``text`` (resolved against base_url), or None.

        sitemaps.org <loc>: "This URL must begin with the protocol (such as http)".
        """
        if _SCHEME.match(text):
            return text
        if _MALFORMED_ABSOLUTE.match(text):
            rule = "SM201" if text[:4].lower() == "www." else "SM202"
            self._add(
                rule,
                f"<{what}> {_clip(text)!r} is a malformed absolute URL; write it as "
                "https://host/path. Entry skipped",
                line=line,
                loc=raw,
            )
            return None
        if self.base_url is None:
            self._add(
                "SM201",
                f"<{what}> {_clip(text)!r} is relative and there is no base URL "
                "to resolve it; sitemaps must list absolute URLs. Entry skipped",
                line=line,
                loc=raw,
            )
            return None
        resolved = resolve(text, self.base_url)
        self._add(
            "SM201",
            f"<{what}> {_clip(text)!r} is relative; resolved to "
            f"{_clip(resolved)!r}. Sitemaps must list absolute URLs",
            line=line,
            loc=raw,
            severity="error" if self.strict else "warning",
        )
        return resolved

    def _date(
        self, text: str, what: str, line: int | None, raw: str | None, rule: str | None = None
    ) -> str | None:
        """``text`` if the model accepts it as a date, else None (reported)."""
        if not text:
            self._add("SM111", f"Empty <{what}>; the value was ignored", line=line, loc=raw)
            return None
        if _W3C.fullmatch(text) is None:
            self._add(
                rule or "SM301",
                f"Invalid <{what}> {_clip(text)!r}: not a W3C Datetime; "
                "use YYYY-MM-DD or YYYY-MM-DDThh:mm:ss+hh:mm. The value was ignored",
                line=line,
                loc=raw,
            )
            return None
        try:
            parsed = parse_w3c(text)
        except ValueError as exc:
            self._add(
                rule or "SM304",
                f"Invalid <{what}>: {exc}. The value was ignored",
                line=line,
                loc=raw,
            )
            return None
        if parsed.granularity < 3:
            self._add(
                "SM302",
                f"<{what}> {text!r} is coarser than a day; give at least "
                "YYYY-MM-DD. The value was ignored",
                line=line,
                loc=raw,
            )
            return None
        return text

    def _read_urls(self, events: Iterator[tuple[str, etree._Element]]) -> None:
        """The entries of a <urlset>: the hot loop, millions of times per document.

        ``_count``, ``_adopt`` and the fast path are inlined; an entry that is anything but
        plain canonical loc/lastmod/changefreq/priority goes to ``_slow_url``.
        """
        t_loc, t_lastmod = self._t_loc, self._t_lastmod
        t_changefreq, t_priority = self._t_changefreq, self._t_priority
        max_entries = self.max_entries
        fast = self._fast
        append = self._out.append
        for _event, el in events:
            self.entries += 1
            if self.entries > max_entries:
                self._over_budget(self._line(el))
            parent = el.getparent()
            if parent is None or parent is not self._container:
                if not self._adopt(el, parent):
                    continue
            else:
                # Invariant: the last placed entry is the container's first child (all
                # before it were dropped), so a lone previous sibling can only be it.
                prev = el.getprevious()
                if prev is not None:
                    if prev.getprevious() is None:
                        del prev
                        del parent[0]
                    else:
                        del prev
                        self._purge(el, parent)
                self._placed += 1
                if self._placed == limits.MAX_URLS + 1:
                    self._too_many(self._line(el))
            if fast:
                # Anything unusual (a repeated or empty value, markup inside a value, an
                # unknown or extension child) breaks out to the slow path.
                loc = lastmod = changefreq = priority = None
                for child in el:
                    if len(child):
                        break
                    tag = child.tag
                    if tag == t_loc:
                        if loc is not None:
                            break
                        loc = child.text
                        if loc is None:
                            break
                    elif tag == t_lastmod:
                        if lastmod is not None:
                            break
                        lastmod = child.text
                        if lastmod is None:
                            break
                    elif tag == t_changefreq:
                        if changefreq is not None:
                            break
                        changefreq = child.text
                        if changefreq is None:
                            break
                    elif tag == t_priority:
                        if priority is not None:
                            break
                        priority = child.text
                        if priority is None:
                            break
                    else:
                        break
                else:
                    if loc is not None:
                        url = _fast_url(loc, lastmod, changefreq, priority)
                        if url is not None:
                            append(url)
                            continue
            self._slow_url(el)

    def _slow_url(self, el: etree._Element) -> None:
        """A <url> in full. Findings come in a fixed order: the core values (loc, lastmod,
        changefreq, priority), then everything else in document order."""
        raw = self._peek(el, self._t_loc)
        values: dict[str, tuple[str | None, int | None]] = {}
        rest: list[etree._Element] = []
        for child in el:
            tag = child.tag
            name = self._core.get(tag) if isinstance(tag, str) else None
            if name is not None and name not in values:
                values[name] = (self._value(child, raw), self._line(child))
            else:
                rest.append(child)
        url = None
        if self._fast:  # canonical core values with extensions: skip the model's checks
            core = [values.get(name) for name in ("loc", "lastmod", "changefreq", "priority")]
            if core[0] is not None and all(item is None or item[0] for item in core):
                loc, lastmod, changefreq, priority = (None if i is None else i[0] for i in core)
                assert loc is not None
                url = _fast_url(loc, lastmod, changefreq, priority)
        if url is None:
            url = self._core_url(el, values, raw)
            if url is None:
                return
        extensions: list[tuple[str, etree._Element, str]] = []
        for child in rest:
            tag = child.tag
            if not isinstance(tag, str):
                if isinstance(child, etree._Entity):
                    self._add(
                        "SM011",
                        f"The entity {child.text} inside <url> is never expanded; it was ignored",
                        line=self._line(el),
                        loc=raw,
                    )
                continue
            name = self._core.get(tag)
            if name is not None:
                self._add(
                    "SM103" if name == "loc" else "SM104",
                    f"<url> has more than one <{name}>; the first one was used",
                    line=self._line(child),
                    loc=raw,
                )
            elif tag != self._entry_tag:  # a nested <url> was reported when it ended
                ext = self._extension(child, tag, raw)
                if ext is not None:
                    extensions.append(ext)
        if extensions:
            url = self._extend(url, extensions, raw)
        self._out.append(url)

    def _core_url(
        self,
        el: etree._Element,
        values: dict[str, tuple[str | None, int | None]],
        raw: str | None,
    ) -> Url | None:
        loc_value = values.get("loc")
        if loc_value is None:
            self._add("SM103", "<url> has no <loc>; entry skipped", line=self._line(el))
            return None
        text, line = loc_value
        if text is None:
            return None
        if not text:
            self._add("SM111", "Empty <loc>; entry skipped", line=line)
            return None
        loc = self._absolute(text, line, raw, "loc")
        if loc is None:
            return None
        kw: dict[str, str] = {}
        lines: dict[str, int | None] = {}
        for name in ("lastmod", "changefreq", "priority"):
            item = values.get(name)
            if item is None or item[0] is None:
                continue
            value: str | None = item[0]
            lines[name] = item[1]
            if name == "lastmod" and value:
                if _FAST_DATE.fullmatch(value) is None:  # else the model surely accepts it
                    value = self._date(value, "lastmod", lines[name], raw)
            elif name == "priority" and value:
                value = self._lexical("priority", value, lines[name], raw)
            elif not value:
                self._add(
                    "SM111", f"Empty <{name}>; the value was ignored", line=lines[name], loc=raw
                )
                value = None
            if value is not None:
                kw[name] = value
        while True:
            try:
                return Url(loc, **kw)  # type: ignore[arg-type]
            except InvalidValue as exc:
                if exc.field == "loc":
                    self._add(
                        _loc_rule(loc),
                        f"Invalid <loc>: {exc.detail}. Entry skipped",
                        line=line,
                        loc=raw,
                    )
                    return None
                rule = {"lastmod": "SM301", "changefreq": "SM401"}.get(exc.field, "SM402")
                self._add(
                    rule,
                    f"Invalid <{exc.field}>: {exc.detail}. The value was ignored",
                    line=lines.get(exc.field),
                    loc=raw,
                )
                kw.pop(exc.field)

    def _extension(
        self, el: etree._Element, tag: str, raw: str | None
    ) -> tuple[str, etree._Element, str] | None:
        """Classify a child of <url> that is not a core tag; report what is not read."""
        ns, local = _split(tag)
        line = self._line(el)
        if not ns and ":" in local:
            prefix = local.split(":", 1)[0]
            if self._once(f"SM004:{prefix}"):
                self._prefix_reported = True
                self._add(
                    "SM004",
                    f"The namespace prefix {prefix!r} of <{local}> is not "
                    f'declared; add xmlns:{prefix}="…" to the root element',
                    line=line,
                    loc=raw,
                )
            return None
        if ns == self._core_ns or not ns:
            self._add(
                "SM107",
                f"Unknown element <{local}>{'' if ns else ' (no namespace)'} in <url>; "
                "it was ignored",
                line=line,
                loc=raw,
            )
            return None
        canonical = _EXTENSION_KEYS.get(_ns_key(ns))
        if canonical is None:
            if self._once(f"SM107:{ns}"):
                self._add(
                    "SM107",
                    f"Elements of the unknown namespace {ns!r} are not "
                    "validated; they were ignored",
                    line=line,
                    loc=raw,
                    severity="warning",
                )
            return None
        if canonical != ns and self._once(f"SM102:{ns}"):
            self._add(
                "SM102",
                f"Namespace {ns!r} should be {canonical!r}; it was read as that",
                line=line,
                loc=raw,
            )
        kind = _EXTENSIONS[canonical]
        if local != kind:
            self._add(
                "SM107",
                f"<{local}> of namespace {canonical!r} cannot be a child of <url>; it was ignored",
                line=line,
                loc=raw,
            )
            return None
        return kind, el, ns

    def _extend(
        self, url: Url, extensions: list[tuple[str, etree._Element, str]], raw: str | None
    ) -> Url:
        images: list[Image] = []
        videos: list[Video] = []
        alternates: list[Alternate] = []
        news: News | None = None
        news_seen = False
        for kind, el, ns in extensions:
            if kind == "image":
                image = self._image(el, ns, raw)
                if image is not None:
                    images.append(image)
            elif kind == "video":
                video = self._video(el, ns, raw)
                if video is not None:
                    videos.append(video)
            elif kind == "link":
                alternate = self._alternate(el, raw)
                if alternate is not None:
                    alternates.append(alternate)
            elif news_seen:
                self._add(
                    "NEWS802",
                    "<url> has more than one <news:news>; the first one was used",
                    line=self._line(el),
                    loc=raw,
                )
            else:
                news_seen = True
                news = self._news_item(el, ns, raw)
                if news is not None:
                    self._news += 1
                    if self._news == limits.MAX_NEWS + 1:
                        self._add(
                            "NEWS803",
                            f"The sitemap has more than {limits.MAX_NEWS:,} "
                            "<news:news> entries; split it",
                            line=self._line(el),
                            loc=raw,
                        )
        if len(images) > limits.MAX_IMAGES:
            self._add(
                "IMG602",
                f"<url> has {len(images):,} images; Google reads at most "
                f"{limits.MAX_IMAGES:,}. The rest were ignored",
                line=self._line(el),
                loc=raw,
            )
            del images[limits.MAX_IMAGES :]
        # Every part is a checked model object already (and the image count is capped
        # above), which is all Url.__post_init__ would check again: set the slots directly.
        full = _new(Url)
        _URL_LOC(full, url.loc)
        _URL_LASTMOD(full, url.lastmod)
        _URL_CHANGEFREQ(full, url.changefreq)
        _URL_PRIORITY(full, url.priority)
        _URL_IMAGES(full, tuple(images))
        _URL_VIDEOS(full, tuple(videos))
        _URL_NEWS(full, news)
        _URL_ALTERNATES(full, tuple(alternates))
        return full

    def _fields(
        self,
        el: etree._Element,
        ns: str,
        known: frozenset[str],
        what: str,
        rule: str,
        raw: str | None,
        multi: frozenset[str] = frozenset(),
        containers: frozenset[str] = frozenset(),
    ) -> tuple[
        dict[str, tuple[str | None, int | None, etree._Element]],
        list[tuple[str | None, int | None]],
    ]:
        """Children of an extension element by local name, with their text (None for
        ``containers``, elements with element children); repeats of ``multi`` listed."""
        fields: dict[str, tuple[str | None, int | None, etree._Element]] = {}
        repeated: list[tuple[str | None, int | None]] = []
        for child in el:
            tag = child.tag
            if not isinstance(tag, str):
                continue
            cns, local = _split(tag)
            line = self._line(child)
            if cns != ns or (local not in known and local not in multi):
                self._add(
                    rule, f"Unexpected <{local}> in <{what}>; it was ignored", line=line, loc=raw
                )
            elif local in multi:
                repeated.append((self._value(child, raw), line))
            elif local in fields:
                self._add(
                    rule,
                    f"<{what}> has more than one <{local}>; the first one was used",
                    line=line,
                    loc=raw,
                )
            else:
                value = None if local in containers else self._value(child, raw)
                fields[local] = (value, line, child)
        return fields, repeated

    def _optional(
        self,
        fields: dict[str, tuple[str | None, int | None, etree._Element]],
        name: str,
        what: str,
        raw: str | None,
    ) -> str | None:
        item = fields.get(name)
        if item is None or item[0] is None:
            return None
        if not item[0]:
            self._add(
                "SM111",
                f"Empty <{what}:{name}>; it was ignored",
                line=item[1],
                loc=raw,
                severity="warning",
            )
            return None
        return item[0]

    def _image(self, el: etree._Element, ns: str, raw: str | None) -> Image | None:
        fields, _ = self._fields(el, ns, _IMAGE_FIELDS, "image:image", "IMG605", raw)
        line = self._line(el)
        loc = fields.get("loc")
        if loc is None:
            self._add(
                "IMG601", "<image:image> has no <image:loc>; image skipped", line=line, loc=raw
            )
            return None
        if loc[0] is None:
            return None
        if not loc[0]:
            self._add("IMG601", "Empty <image:loc>; image skipped", line=loc[1], loc=raw)
            return None
        kw: dict[str, str] = {}
        for name in ("caption", "geo_location", "title", "license"):
            value = self._optional(fields, name, "image", raw)
            if value is not None:
                kw[name] = value
        if not kw and self._fast and is_canonical_loc(loc[0]):
            image = _new(Image)  # what Image(loc) builds, without checking it again
            _IMAGE_LOC(image, loc[0])
            for name in ("caption", "geo_location", "title", "license"):
                _setattr(image, name, None)
            return image
        while True:
            try:
                return Image(loc[0], **kw)
            except InvalidValue as exc:
                name = exc.field.removeprefix("image.")
                if name == "loc":
                    self._add(
                        "IMG603",
                        f"Invalid <image:loc>: {exc.detail}. Image skipped",
                        line=loc[1],
                        loc=raw,
                    )
                    return None
                self._add(
                    "IMG605",
                    f"Invalid <image:{name}>: {exc.detail}. The value was ignored",
                    line=fields[name][1],
                    loc=raw,
                )
                kw.pop(name)

    def _video(self, el: etree._Element, ns: str, raw: str | None) -> Video | None:
        known = _VIDEO_FIELDS | _VIDEO_DEPRECATED | _VIDEO_UNREAD
        fields, tags = self._fields(
            el,
            ns,
            known,
            "video:video",
            "VID715",
            raw,
            multi=frozenset(["tag"]),
            containers=frozenset(["tvshow"]),
        )
        line = self._line(el)
        for name in fields:
            if name in _VIDEO_DEPRECATED:
                self._add(
                    "VID714",
                    f"<video:{name}> was retired by Google in 2022 and has no "
                    "effect; it was ignored",
                    line=fields[name][1],
                    loc=raw,
                )
            elif name in _VIDEO_UNREAD:
                self._add(
                    "SM107",
                    f"<video:{name}> is not read by sitemapkit; it was ignored",
                    line=fields[name][1],
                    loc=raw,
                    severity="warning",
                )
        for name in _VIDEO_REQUIRED:
            item = fields.get(name)
            if item is None or not item[0]:
                if item is None or item[0] is not None:
                    state = "has no" if item is None else "has an empty"
                    self._add(
                        "VID701",
                        f"<video:video> {state} <video:{name}>; video skipped",
                        line=line if item is None else item[1],
                        loc=raw,
                    )
                return None
        if "content_loc" not in fields and "player_loc" not in fields:
            self._add(
                "VID701",
                "<video:video> needs <video:content_loc> or <video:player_loc>; video skipped",
                line=line,
                loc=raw,
            )
            return None
        kw: dict[str, object] = {}
        lines: dict[str, int | None] = {}
        for name in fields:
            if name not in _VIDEO_FIELDS or name in ("restriction", "platform"):
                continue
            value = self._optional(fields, name, "video", raw)
            if value is None:
                continue
            lines[name] = fields[name][1]
            if name in ("expiration_date", "publication_date"):
                value = self._date(value, f"video:{name}", lines[name], raw, "VID710")
            elif name in _LEXICAL:
                value = self._lexical(name, value, lines[name], raw, "video:")
            if value is not None:
                kw[name] = value
        player = fields.get("player_loc")
        if player is not None:
            for attr in ("allow_embed", "autoplay"):
                if player[2].get(attr) is not None:
                    self._add(
                        "VID714",
                        f"The {attr} attribute of <video:player_loc> was "
                        "retired by Google in 2022; it was ignored",
                        line=player[1],
                        loc=raw,
                    )
        uploader = fields.get("uploader")
        if uploader is not None and "uploader" in kw:
            info = uploader[2].get("info")
            if info is not None:
                kw["uploader_info"] = info.strip()
                lines["uploader_info"] = uploader[1]
        for name, cls, rule in (
            ("restriction", VideoRestriction, "VID707"),
            ("platform", VideoPlatform, "VID708"),
        ):
            item = fields.get(name)
            if item is None or item[0] is None:
                continue
            relationship = item[2].get("relationship")
            if relationship is None:
                self._add(
                    rule,
                    f"<video:{name}> has no relationship attribute (allow or deny); it was ignored",
                    line=item[1],
                    loc=raw,
                )
                continue
            try:
                kw[name] = cls(relationship.strip(), item[0])  # type: ignore[arg-type]
            except InvalidValue as exc:
                self._add(
                    rule,
                    f"Invalid <video:{name}>: {exc.detail}. It was ignored",
                    line=item[1],
                    loc=raw,
                )
        words: list[tuple[str, int | None]] = []
        for value, tag_line in tags:
            if value:
                words.append((value, tag_line))
            elif value is not None:
                self._add(
                    "SM111",
                    "Empty <video:tag>; it was ignored",
                    line=tag_line,
                    loc=raw,
                    severity="warning",
                )
        if len(words) > limits.MAX_VIDEO_TAGS:
            self._add(
                "VID712",
                f"<video:video> has {len(words)} <video:tag> elements; at most "
                f"{limits.MAX_VIDEO_TAGS} are allowed. The rest were ignored",
                line=words[limits.MAX_VIDEO_TAGS][1],
                loc=raw,
            )
            del words[limits.MAX_VIDEO_TAGS :]
        if words:
            kw["tags"] = tuple(w for w, _ in words)
        title = kw.get("title")
        if isinstance(title, str) and len(title.strip()) > limits.MAX_VIDEO_TITLE:
            self._add(
                "VID703",
                f"<video:title> is {len(title.strip())} characters long; the video schema "
                f"allows {limits.MAX_VIDEO_TITLE} (Google sets no limit). Kept",
                line=lines.get("title", line),
                loc=raw,
            )
        while True:
            try:
                return Video(**kw)  # type: ignore[arg-type]
            except InvalidValue as exc:
                name = exc.field.removeprefix("video.")
                name = "tags" if name == "tag" else name
                rule = _VIDEO_RULES.get(name, "VID715")
                if name not in kw:
                    rule = "VID701"  # "needs content_loc or player_loc"
                elif name == "title" and len(str(kw["title"])) > limits.MAX_VIDEO_TITLE:
                    rule = "VID703"
                elif name == "description" and len(str(kw[name])) > limits.MAX_VIDEO_DESCRIPTION:
                    rule = "VID702"
                if name in kw and name not in _VIDEO_REQUIRED:
                    self._add(
                        rule,
                        f"Invalid <video:{name}>: {exc.detail}. The value was ignored",
                        line=lines.get(name, line),
                        loc=raw,
                    )
                    kw.pop(name)
                    continue
                self._add(
                    rule,
                    f"Invalid <video:video>: {exc.detail}. Video skipped",
                    line=lines.get(name, line),
                    loc=raw,
                    severity="error",
                )
                return None

    def _news_item(self, el: etree._Element, ns: str, raw: str | None) -> News | None:
        known = frozenset(["publication", "publication_date", "title"]) | _NEWS_DEPRECATED
        fields, _ = self._fields(
            el, ns, known, "news:news", "SM107", raw, containers=frozenset(["publication"])
        )
        line = self._line(el)
        for name in [n for n in fields if n in _NEWS_DEPRECATED]:
            self._add(
                "NEWS808",
                f"<news:{name}> is not in Google's current news sitemap reference; it was ignored",
                line=fields[name][1],
                loc=raw,
            )
        publication = fields.get("publication")
        pub: dict[str, tuple[str | None, int | None, etree._Element]] = {}
        if publication is not None:
            pub, _ = self._fields(
                publication[2],
                ns,
                frozenset(["name", "language"]),
                "news:publication",
                "SM107",
                raw,
            )
        values: dict[str, str] = {}
        for key, source, what in (
            ("name", pub, "news:name"),
            ("language", pub, "news:language"),
            ("publication_date", fields, "news:publication_date"),
            ("title", fields, "news:title"),
        ):
            item = source.get(key)
            if item is None:
                missing = (
                    "<news:publication>" if publication is None and source is pub else (f"<{what}>")
                )
                self._add(
                    "NEWS801", f"<news:news> has no {missing}; news skipped", line=line, loc=raw
                )
                return None
            if item[0] is None:
                return None
            if not item[0]:
                self._add("NEWS807", f"Empty <{what}>; news skipped", line=item[1], loc=raw)
                return None
            values[key] = item[0]
        date = self._date(
            values["publication_date"],
            "news:publication_date",
            fields["publication_date"][1],
            raw,
            "NEWS805",
        )
        if date is None:
            return None
        try:
            return News(values["name"], values["language"], date, values["title"])
        except InvalidValue as exc:
            self._add(
                _NEWS_RULES.get(exc.field, "NEWS801"),
                f"Invalid <news:news>: {exc.detail}. News skipped",
                line=line,
                loc=raw,
            )
            return None

    def _alternate(self, el: etree._Element, raw: str | None) -> Alternate | None:
        line = self._line(el)
        rel, hreflang, href = (el.get(a) for a in ("rel", "hreflang", "href"))
        if rel is None or rel.strip() != "alternate":
            self._add(
                "HRE901",
                f'<xhtml:link> needs rel="alternate", not {rel!r}; it was ignored',
                line=line,
                loc=raw,
            )
            return None
        if hreflang is None or href is None:
            missing = "hreflang" if hreflang is None else "href"
            self._add(
                "HRE901",
                f"<xhtml:link> has no {missing} attribute; it was ignored",
                line=line,
                loc=raw,
            )
            return None
        try:
            return Alternate(hreflang, href.strip())
        except InvalidValue as exc:
            rule = "HRE902" if exc.field == "alternate.hreflang" else "HRE903"
            self._add(
                rule, f"Invalid <xhtml:link>: {exc.detail}. It was ignored", line=line, loc=raw
            )
            return None

    def _lexical(
        self, name: str, value: str, line: int | None, raw: str | None, prefix: str = ""
    ) -> str | None:
        """``value`` if it has the XSD lexical form of field ``name``, else None (reported)."""
        pattern, form, rule = _LEXICAL[name]
        if pattern.fullmatch(value):
            return value
        self._add(
            rule,
            f"Invalid <{prefix}{name}> {_clip(value)!r}: not {form}. The value was ignored",
            line=line,
            loc=raw,
        )
        return None

    def _on_sitemap(self, el: etree._Element) -> None:
        self._count(el)
        if not self._adopt(el, el.getparent()):
            return
        if self._fast:
            t_loc, t_lastmod = self._t_loc, self._t_lastmod
            loc = lastmod = None
            n = 0
            for n, child in enumerate(el, 1):  # noqa: B007 (n is read after the loop)
                if len(child):
                    break
                tag = child.tag
                if tag == t_loc:
                    loc = child.text
                elif tag == t_lastmod:
                    lastmod = child.text
                else:
                    break
            else:
                if loc is not None and n == 1 + (lastmod is not None):
                    ref = _fast_ref(loc, lastmod)
                    if ref is not None:
                        self._out.append(ref)
                        return
        self._slow_sitemap(el)

    def _slow_sitemap(self, el: etree._Element) -> None:
        raw = self._peek(el, self._t_loc)
        values: dict[str, tuple[str | None, int | None]] = {}
        for child in el:
            tag = child.tag
            if not isinstance(tag, str):
                continue
            name = self._core.get(tag)
            line = self._line(child)
            if name is None:
                ns, local = _split(tag)
                if ns == self._core_ns:
                    self._add(
                        "SM501",
                        f"<sitemap> may hold only <loc> and <lastmod>, not "
                        f"<{local}>; it was ignored",
                        line=line,
                        loc=raw,
                    )
                elif self._once(f"SM107:{ns}"):
                    self._add(
                        "SM107",
                        f"Elements of the namespace {ns!r} are not read in an "
                        "index; they were ignored",
                        line=line,
                        loc=raw,
                        severity="warning",
                    )
            elif name in values:
                self._add(
                    "SM501",
                    f"<sitemap> has more than one <{name}>; the first one was used",
                    line=line,
                    loc=raw,
                )
            else:
                values[name] = (self._value(child, raw), line)
        loc_value = values.get("loc")
        if loc_value is None:
            self._add("SM501", "<sitemap> has no <loc>; entry skipped", line=self._line(el))
            return
        text, line = loc_value
        if text is None:
            return
        if not text:
            self._add("SM111", "Empty <loc>; entry skipped", line=line)
            return
        loc = self._absolute(text, line, raw, "loc")
        if loc is None:
            return
        lastmod = None
        item = values.get("lastmod")
        if item is not None and item[0] is not None:
            lastmod = self._date(item[0], "lastmod", item[1], raw)
        try:
            self._out.append(SitemapRef(loc, lastmod))
        except InvalidValue as exc:
            self._add(
                _loc_rule(loc), f"Invalid <loc>: {exc.detail}. Entry skipped", line=line, loc=raw
            )

    def _feed_url(self, link: str, line: int | None, lastmod: str | dt.datetime | None) -> None:
        """Append the Url of a feed item (RSS, Atom) whose link is already absolute."""
        try:
            self._out.append(Url(link, lastmod=lastmod))
        except InvalidValue as exc:
            self._add(
                _loc_rule(link), f"Invalid link: {exc.detail}. Entry skipped", line=line, loc=link
            )

    def _on_item(self, el: etree._Element) -> None:
        """RSS 2.0 ``<item>``: ``<link>`` is the URL, ``<pubDate>`` (RFC 822) the lastmod."""
        self._count(el)
        if not self._adopt(el, el.getparent()):
            return
        link = date = None
        link_line = date_line = None
        for child in el:
            if child.tag == "link" and link is None:
                link, link_line = self._value(child, None), self._line(child)
            elif child.tag == "pubDate" and date is None:
                date, date_line = self._value(child, None), self._line(child)
        if not link:
            self._add(
                "SM103" if link is None else "SM111",
                "RSS <item> has no <link>; entry skipped",
                line=self._line(el),
            )
            return
        loc = self._absolute(link, link_line, link, "link")
        if loc is None:
            return
        lastmod: dt.datetime | None = None
        if date:
            import email.utils  # only RSS needs it; it costs ~20 ms to import

            try:
                lastmod = email.utils.parsedate_to_datetime(date)
            except (TypeError, ValueError, IndexError):
                self._add(
                    "SM301",
                    f"Invalid <pubDate> {_clip(date)!r}: not an RFC 822 date "
                    "such as 'Wed, 01 May 2024 10:00:00 +0000'. The value was ignored",
                    line=date_line,
                    loc=link,
                )
            else:
                if lastmod.tzinfo is None:  # "-0000": UTC, local zone unknown (RFC 2822)
                    lastmod = lastmod.replace(tzinfo=dt.UTC)
        self._feed_url(loc, link_line, lastmod)

    def _on_atom_entry(self, el: etree._Element) -> None:
        """Atom ``<entry>``: ``<link rel="alternate">`` is the URL, ``<updated>`` (1.0) or
        ``<modified>`` (0.3) the lastmod."""
        self._count(el)
        if not self._adopt(el, el.getparent()):
            return
        ns = self._core_ns
        t_link, t_updated, t_modified = _q(ns, "link"), _q(ns, "updated"), _q(ns, "modified")
        href = date = None
        link_line = date_line = None
        for child in el:
            tag = child.tag
            if tag == t_link and href is None:
                rel = child.get("rel")
                if rel is None or rel.strip() == "alternate":
                    value = child.get("href")
                    href, link_line = (value.strip() if value else ""), self._line(child)
            elif tag in (t_updated, t_modified) and date is None:
                date, date_line = self._value(child, None), self._line(child)
        if not href:
            self._add(
                "SM103",
                'Atom <entry> has no <link rel="alternate" href=…>; entry skipped',
                line=self._line(el),
            )
            return
        loc = self._absolute(href, link_line, href, "link")
        if loc is None:
            return
        lastmod = None
        if date:
            # RFC 3339 allows lowercase t and z; W3C Datetime does not.
            lastmod = self._date(date.upper(), "updated", date_line, href)
        self._feed_url(loc, link_line, lastmod)

    # -- text sitemaps (SM009) ----------------------------------------------------------

    def _start_text(self, data: bytes) -> None:
        self.kind = "text"
        self._state = _TEXT
        self._text_line = self._line_off
        self._feed_text(data)

    def _feed_text(self, data: bytes) -> None:
        self._text_parts.append(data)
        if b"\n" not in data and b"\r" not in data:
            return
        buf = b"".join(self._text_parts)
        hold = b""
        if buf[-1:] == b"\r":  # maybe the first half of a CRLF: decide with the next chunk
            buf, hold = buf[:-1], b"\r"
        lines = _LINE_BREAK.split(buf)
        self._text_parts = [lines.pop() + hold]
        for raw in lines:
            self._text_line += 1
            self._on_text_line(raw)

    def _on_text_line(self, raw: bytes) -> None:
        stripped = raw.strip()
        if not stripped:
            return
        line = self._text_line
        try:
            text = stripped.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._add(
                "SM001",
                f"Line is not valid UTF-8 ({exc.reason} at byte {exc.start}); "
                "text sitemaps must be UTF-8. Line skipped",
                line=line,
            )
            return
        if _TEXT_URL.match(text) is None:
            self._add(
                "SM009",
                f"Line {_clip(text)!r} is not a URL; a text sitemap holds one "
                "absolute URL per line and nothing else. Line skipped",
                line=line,
            )
            return
        self.entries += 1
        if self.entries > self.max_entries:
            self._over_budget(line)
        self._placed += 1
        if self._placed == limits.MAX_URLS + 1:
            self._too_many(line)
        url = _fast_url(text, None, None, None) if self._fast else None
        if url is None:
            try:
                url = Url(text)
            except InvalidValue as exc:
                self._add(
                    _loc_rule(text), f"Invalid URL: {exc.detail}. Line skipped", line=line, loc=text
                )
                return
        self._out.append(url)

    # -- end of document ----------------------------------------------------------------

    def _finish(self) -> None:
        if self._compression is None:
            self._feed_raw(b"", final=True)
        if self._compression == "gzip" and self._gz is not None:
            self._gzip_failed("it ends early; the file is truncated")
        if self._state == _PRE:
            self._feed_pre(b"", final=True)
        if self._truncated:
            self._state = _DONE
        state = self._state
        if state == _PRE:
            self._add(
                "SM004",
                "The document is empty; a sitemap holds at least its root element",
                line=self._line_off + 1 if self.bytes_in else None,
            )
            self._state = _DONE
            return
        if state == _HEAD:
            self._state = _XML
            sniff = self._sniff
            assert sniff is not None
            root = None
            with contextlib.suppress(etree.XMLSyntaxError):
                sniff.close()
            for _event, el in sniff.read_events():
                root = el
                break
            head = b"".join(self._head)
            self._head = []
            self._sniff = None
            self._on_root(root, head)
            self._begin_xml(head)
        if self._scan and self._state == _XML:
            self._scan_switch(self._scan_buf)
        if self._state == _XML:
            self._close_xml()
        elif self._state == _TEXT:
            last = b"".join(self._text_parts)
            self._text_parts = []
            self._text_line += 1
            self._on_text_line(last)
            self._state = _DONE
        if self.kind is not None and self.entries == 0 and not self._damaged:
            self._add("SM106", f"The {self._kind_name()} lists no entries")

    def _kind_name(self) -> str:
        return {
            "urlset": "sitemap",
            "sitemapindex": "sitemap index",
            "rss": "RSS feed",
            "atom": "Atom feed",
            "text": "text sitemap",
        }.get(self.kind or "", "document")


def parse_bytes(
    data: bytes,
    *,
    source: str | None = None,
    base_url: str | None = None,
    strict: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_entries: int = DEFAULT_MAX_ENTRIES,
) -> tuple[list[Record], list[Finding], Kind | None]:
    """Parse a whole (small) document: ``(records, findings, kind)``.

    >>> recs, findings, kind = parse_bytes(b"https://example.com/a\\nnot a url\\n")
    >>> [u.loc for u in recs], [f.rule for f in findings], kind
    (['https://example.com/a'], ['SM009'], 'text')
    """
    parser = SitemapParser(
        source=source,
        base_url=base_url,
        strict=strict,
        max_bytes=max_bytes,
        max_entries=max_entries,
    )
    records = parser.feed(data)
    records += parser.close()
    return records, parser.findings, parser.kind


def iter_parse(
    chunks: Iterable[bytes],
    *,
    on_finding: Callable[[Finding], object] | None = None,
    source: str | None = None,
    base_url: str | None = None,
    strict: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_entries: int = DEFAULT_MAX_ENTRIES,
) -> Iterator[Record]:
    """Stream the records of a document given as chunks of bytes.

    Each finding is passed to ``on_finding`` as soon as it is made (before the records
    of the same chunk are yielded, and also when an error ends the iteration). Use
    :class:`SitemapParser` directly to learn the document's ``kind``.

    >>> seen = []
    >>> [u.loc for u in iter_parse([b"https://example.com/\\n", b"oops\\n"],
    ...                            on_finding=seen.append)]
    ['https://example.com/']
    >>> [f.rule for f in seen]
    ['SM009']
    """
    parser = SitemapParser(
        source=source,
        base_url=base_url,
        strict=strict,
        max_bytes=max_bytes,
        max_entries=max_entries,
    )
    reported = 0

    def report() -> None:
        nonlocal reported
        if on_finding is not None:
            while reported < len(parser.findings):
                reported += 1
                on_finding(parser.findings[reported - 1])

    try:
        for chunk in chunks:
            records = parser.feed(chunk)
            report()
            yield from records
        records = parser.close()
        report()
        yield from records
    finally:
        report()
