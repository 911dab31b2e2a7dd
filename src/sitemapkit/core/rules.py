"""core: the rule catalogue of ``spec/RULES.md`` as data, severities included. Pure.

It holds the robots.txt rules of ``spec/DISCOVERY.md`` too (RB003, RB007–RB011: the
``Sitemap:`` lines of a robots.txt; the other RB paragraphs there state facts, not checks).

One :class:`Rule` per id: its slug, severity, one-line summary and source, and where the
validator decides it (``checked_by``). Ids never change meaning; the command line selects
and ignores by id (or by an id prefix such as ``SM2`` or ``HRE``).

Where a rule is decided:

* ``parse``: :mod:`sitemapkit.core.parse` reports it while reading (the tolerant reader
  and the validator share one implementation);
* ``schema``: an error of the bundled XSDs, translated (:mod:`sitemapkit.lint.schema`);
* ``tree``: a check over the raw document (bytes and parsed tree) in
  :mod:`sitemapkit.lint.checks`;
* ``entry``: a check over the records of one document, in batches;
* ``file``: a check over a whole document's records (counts, heuristics);
* ``set``: a check over every document validated together (indexes, duplicates, hreflang);
* ``robots``: :mod:`sitemapkit.core.robots` reports it while reading a robots.txt;
* ``online``: decided from HTTP answers (:mod:`sitemapkit.lint.online`), only when validating with
  ``online=True`` / ``--online`` (off by default: offline means no network);
* ``audit``: decided by the coverage audit (:mod:`sitemapkit.lint.audit`), which holds the
  pages of a crawl or a build folder against the sitemaps (``sitemapkit audit``).

A rule that is a waiver rather than a check says so in ``exempt``.

This table is the one place a rule's severity is written: the tolerant reader, the
validator and the checks all ask :func:`severity`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

from .finding import Severity

__all__ = ["RULES", "Rule", "Where", "expand_ids", "severity"]

Where = Literal["parse", "schema", "tree", "entry", "file", "set", "robots", "online", "audit"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of ``spec/RULES.md``.

    ``strict`` rules are promoted from warning to error by ``--strict``; a rule with
    ``default=False`` runs only when selected explicitly; ``exempt`` says why a rule has
    no check (a waiver); ``online`` rules need HTTP answers.
    """

    id: str
    slug: str
    severity: Severity
    summary: str
    source: str
    checked_by: tuple[Where, ...] = ()
    strict: bool = False
    default: bool = True
    exempt: str = ""

    @property
    def online(self) -> bool:
        """Decided from HTTP answers: only with ``online=True`` (``--online``)."""
        return "online" in self.checked_by


def _r(
    id: str,
    slug: str,
    severity: Severity,
    summary: str,
    source: str,
    *checked_by: Where,
    strict: bool = False,
    default: bool = True,
    exempt: str = "",
) -> Rule:
    return Rule(id, slug, severity, summary, source, checked_by, strict, default, exempt)


# fmt: off
_CATALOGUE: Final = (
    # -- SM0xx file, encoding, transport ---------------------------------------------------
    _r("SM001", "not-utf8", "error", "The document must be UTF-8 encoded.",
       "[P] intro; [F] character encoding", "parse"),
    _r("SM002", "byte-order-mark", "warning", "A UTF-8 byte order mark precedes the document.",
       "XML 1.0 §4.3.3", "parse"),
    _r("SM003", "leading-whitespace", "error",
       "Nothing may precede the XML declaration (GSC 'Leading whitespace').",
       "XML 1.0 §2.8; [GSC]",
       "parse"),
    _r("SM004", "not-well-formed", "error", "The document must be well-formed XML.",
       "XML 1.0; [P] escaping; [GSC] 'Parsing error'", "parse"),
    _r("SM005", "html-document", "error", "The file is an HTML page, not a sitemap.",
       "[GSC] 'Sitemap is HTML'", "parse"),
    _r("SM006", "file-too-large", "error",
       "At most 52,428,800 bytes (50 MiB) uncompressed per file.",
       "[P] index section; [F]; [G-build]", "parse"),
    _r("SM007", "bad-compression", "error", "Compression, if any, must be valid gzip.",
       "[F] zip; [GSC] 'Compression error'", "parse"),
    _r("SM008", "gzip-name-mismatch", "warning",
       "A .gz name must hold gzip data, and gzip data should have a .gz name.",
       "derived from SM007; [GSC]", "parse", "tree"),
    _r("SM009", "text-sitemap-line", "error",
       "A text sitemap holds one absolute URL per line and nothing else.",
       "[P] other formats: text file", "parse"),
    _r("SM010", "no-xml-declaration", "warning",
       'The document should start with <?xml version="1.0" encoding="UTF-8"?>.',
       "XML 1.0; [P] examples", "parse"),
    _r("SM011", "doctype", "warning", "The document has a DOCTYPE; sitemaps never need one.",
       "security policy (derived)", "parse"),
    _r("SM012", "fetch-status", "warning",
       "The sitemap URL must answer 200 (after at most 5 redirects) and not be disallowed.",
       "[GSC] 'Couldn't fetch'; [G-build]", "online"),
    # -- SM1xx XML structure and namespaces ------------------------------------------------
    _r("SM101", "root-element", "error",
       "The root is <urlset> or <sitemapindex> in the sitemaps.org 0.9 namespace.",
       "[P]; [XSD]; [GSC] 'Incorrect namespace'", "parse", "schema"),
    _r("SM102", "extension-namespace", "error",
       "Extension elements must use the exact image, video, news and xhtml namespace URIs.",
       "[G-combine]; [G-img]; [G-vid]; [G-news]; [G-hreflang]", "parse", "tree"),
    _r("SM103", "url-loc-count", "error", "Each <url> has exactly one <loc>.",
       "[P] tag table; [XSD] tUrl", "parse", "schema"),
    _r("SM104", "url-child-repeated", "error",
       "Each <url> has at most one <lastmod>, <changefreq> and <priority>.",
       "[XSD]; [GSC] 'too many tags'", "parse", "schema"),
    _r("SM105", "child-order", "warning",
       "Children follow the XSD order: loc, lastmod, changefreq, priority, then extensions.",
       "[XSD] xsd:sequence", "schema", strict=True),
    _r("SM106", "empty-sitemap", "warning", "The sitemap lists no <url> (or <sitemap>).",
       "[XSD]; [GSC] 'Empty sitemap'; [G-news]", "parse", "schema"),
    _r("SM107", "unknown-element", "error",
       "No unknown elements, and no entries where they do not belong.",
       "[XSD]; [P] extending the protocol", "parse", "schema"),
    _r("SM108", "character-data", "error",
       "No text directly inside urlset, url, sitemapindex, sitemap or extension containers.",
       "[XSD] element-only content", "schema"),
    _r("SM109", "padded-value", "warning",
       "Values carry no leading or trailing whitespace (an error for enumerations in strict mode).",
       "[XSD] whitespace facets", "tree", "schema"),
    _r("SM110", "too-many-urls", "error", "A sitemap lists at most 50,000 URLs.",
       "[P]; [F]; [G-build]", "parse"),
    _r("SM111", "empty-value", "error", "A required element has an empty value.",
       "[XSD]; [GSC] 'Invalid tag value'", "parse", "schema"),
    _r("SM112", "schema-location", "warning",
       "xsi:schemaLocation hints to non-canonical schema URLs are ignored.",
       "policy (offline validation)", "tree"),
    # -- SM2xx <loc> and URLs --------------------------------------------------------------
    _r("SM201", "relative-url", "error", "A <loc> is an absolute URL with scheme and host.",
       "[P] <loc>; [F]; [G-build]", "parse"),
    _r("SM202", "url-scheme", "error", "A <loc> uses http or https.", "[P] <loc>; [GSC]", "parse"),
    _r("SM203", "url-length", "error",
       "A <loc> has fewer than 2,048 characters (and at least the XSD's 12).", "[P] <loc>; [XSD]",
       "parse", "schema"),
    _r("SM204", "url-syntax", "error", "A <loc> is a valid RFC 3986 URI.",
       "[P] escaping; [F]; [GSC] 'Invalid URL'", "parse", "schema", "tree"),
    _r("SM205", "non-ascii-url", "warning",
       "URLs are written as URIs: non-ASCII characters percent-encoded, hosts in punycode.",
       "[P] escaping; RFC 3987 §3.1", "tree"),
    _r("SM206", "url-escaping", "error",
       "URLs are entity-escaped text; a raw & or < breaks the XML (SM004), CDATA is "
       "not recommended.",
       "[P] entity escaping", "tree"),
    _r("SM207", "double-escaped", "warning", "A URL looks escaped twice (&amp;amp; or %25XX).",
       "derived from [P] escaping", "entry"),
    _r("SM208", "url-fragment", "warning", "A URL carries a #fragment.", "RFC 3986 §3.5", "entry"),
    _r("SM209", "session-id", "warning", "A URL carries a session identifier.", "[F] session IDs",
       "entry"),
    _r("SM210", "other-host", "error", "A <loc> is on the sitemap's host (waived by SM214).",
       "[P] sitemap file location; [GSC] 'URL not allowed'", "entry"),
    _r("SM211", "other-scheme", "error", "A <loc> uses the sitemap's scheme (waived by SM214).",
       "[P] sitemap file location", "entry"),
    _r("SM212", "other-port", "error", "A <loc> uses the sitemap's port (waived by SM214).",
       "[P] sitemap file location", "entry"),
    _r("SM213", "outside-directory", "error",
       "A <loc> lies under the sitemap's directory (waived by SM214).",
       "[P] sitemap file location; [G-build]", "entry"),
    _r("SM214", "cross-submission", "warning",
       "Cross-submission waiver of SM210-SM213, SM504 and SM505 (--allow-host, robots.txt).",
       "[P] cross submits; [G-build]; [G-index]",
       exempt="a waiver, not a check: applied to SM210-SM213, SM504, SM505 through "
       "--allow-host (robots.txt evidence is online)"),
    _r("SM215", "duplicate-url", "warning",
       "A URL is listed more than once (exactly, or after normalisation).",
       "[F] list only one version", "entry", "set"),
    _r("SM216", "url-variants", "warning",
       "http/https, www/non-www or trailing-slash variants of one page are listed.",
       "[F]; [G-build] canonical URLs", "entry", "set"),
    _r("SM217", "url-status", "warning",
       "A listed URL redirects, fails, is disallowed by robots.txt or is not canonical.",
       "[GSC]; [G-build]", "online", "audit"),
    _r("SM218", "url-over-1024", "warning",
       "A URL is longer than 1,024 characters (Yandex's limit).", "Yandex sitemap error reference",
       "entry"),
    # -- SM3xx dates -----------------------------------------------------------------------
    _r("SM301", "invalid-date", "error", "Dates follow the W3C Datetime grammar.",
       "[W3C-DT]; [P] <lastmod>; [GSC] 'Invalid date'", "parse", "schema"),
    _r("SM302", "coarse-date", "warning",
       "Dates are at least a complete date (YYYY-MM-DD); YYYY and YYYY-MM fail the XSD.",
       "[XSD]; [G-news]", "parse", "schema", strict=True),
    _r("SM303", "time-without-seconds", "warning",
       "A time without seconds (hh:mm) is W3C-valid but fails the XSD.", "[XSD]; [W3C-DT]",
       "schema", strict=True),
    _r("SM304", "impossible-date", "error",
       "Dates exist: month, day, hour 00-23, minute and second, offset within ±14:00.",
       "[W3C-DT]; [XSD]", "parse", "schema"),
    _r("SM305", "future-date", "warning", "A date lies in the future (beyond 24 h).",
       "[G-2023]; [B-2025]", "entry"),
    _r("SM306", "build-time-lastmod", "warning",
       "lastmod looks stamped at build time (nearly all identical, or the file's time).",
       "[G-2023]; [B-2023]", "file"),
    _r("SM307", "ancient-date", "warning",
       "A lastmod before 1994-01-01 is probably a zero or epoch default.", "derived heuristic",
       "entry"),
    # -- SM4xx changefreq and priority -----------------------------------------------------
    _r("SM401", "changefreq-value", "error",
       "changefreq is always, hourly, daily, weekly, monthly, yearly or never (lowercase).",
       "[P] <changefreq>; [XSD]", "parse", "schema"),
    _r("SM402", "priority-value", "error", "priority is a decimal from 0.0 to 1.0.",
       "[P] <priority>; [XSD]", "parse", "schema"),
    _r("SM403", "priority-form", "warning", "priority is written with one decimal (0.0 ... 1.0).",
       "[P] examples; [XSD]", "tree"),
    _r("SM404", "changefreq-priority-ignored", "warning",
       "changefreq and priority are ignored by Google and Bing (off by default).",
       "[G-build]; [G-2023]; [B-2025]", "file", default=False),
    _r("SM405", "priorities-equal", "warning",
       "Every URL has the same priority, which carries no information.", "[P] <priority>", "file"),
    # -- SM5xx sitemap indexes -------------------------------------------------------------
    _r("SM501", "index-entry", "error",
       "Each <sitemap> has one <loc>, at most one <lastmod>, nothing else.",
       "[P] index tags; [XSD] tSitemap", "parse", "schema"),
    _r("SM502", "nested-index", "error", "An index lists another index (nested indexing).",
       "[P]; [GSC] 'Nested indexing'", "set"),
    _r("SM503", "too-many-sitemaps", "error", "An index lists at most 50,000 sitemaps.",
       "[P] index; [G-index]", "parse"),
    _r("SM504", "child-other-site", "error",
       "Child sitemaps are on the index's site: scheme, host and port (waived by SM214).",
       "[P] index note; [G-index]", "entry"),
    _r("SM505", "child-outside-directory", "warning",
       "Child sitemaps live in the index's directory or below.", "[G-index]", "entry", strict=True),
    _r("SM506", "index-cycle", "error", "An index lists itself, or indexes form a cycle.",
       "derived", "set"),
    _r("SM507", "duplicate-child", "warning", "An index lists the same sitemap twice.", "derived",
       "entry"),
    _r("SM508", "index-lastmod", "warning",
       "An index lastmod should be the child file's modification time, and be given.",
       "[P] index <lastmod>", "file", "set"),
    _r("SM509", "child-in-several-indexes", "warning",
       "A child sitemap is listed by more than one index of the set.", "derived ([F])", "set"),
    # -- IMG6xx images ---------------------------------------------------------------------
    _r("IMG601", "image-loc", "error", "Every <image:image> holds exactly one <image:loc>.",
       "[G-img]; [XSD]", "parse", "schema"),
    _r("IMG602", "too-many-images", "error", "At most 1,000 <image:image> per <url>.", "[G-img]",
       "parse"),
    _r("IMG603", "image-url", "error", "<image:loc> is an absolute http(s) URL.", "[G-img]",
       "parse", "schema", "tree"),
    _r("IMG604", "image-deprecated", "warning",
       "image:caption, geo_location, title and license were retired in 2022.", "[G-2022]", "entry"),
    _r("IMG605", "image-structure", "error", "<image:image> holds only its XSD children, in order.",
       "[XSD]", "parse", "schema"),
    _r("IMG606", "image-repeated", "warning", "The same image URL is repeated under a <url>.",
       "derived", "entry"),
    # -- VID7xx videos ---------------------------------------------------------------------
    _r("VID701", "video-required", "error",
       "A video has thumbnail_loc, title, description and content_loc or player_loc.",
       "[G-vid]; [XSD]", "parse", "schema"),
    _r("VID702", "video-description-length", "error",
       "video:description has at most 2,048 characters.", "[G-vid]; [XSD]", "parse", "schema"),
    _r("VID703", "video-title-length", "warning", "video:title has at most 100 characters (XSD).",
       "[XSD]", "parse", "schema", strict=True),
    _r("VID704", "video-duration", "error", "video:duration is a whole number 1 ... 28,800.",
       "[G-vid]; [XSD]", "parse", "schema"),
    _r("VID705", "video-rating", "error", "video:rating is a decimal 0.0 ... 5.0.",
       "[G-vid]; [XSD]", "parse", "schema"),
    _r("VID706", "video-location", "error",
       "content_loc and player_loc differ from the page; content_loc is a media file.",
       "[G-vid]; [GSC]", "entry"),
    _r("VID707", "video-restriction", "error",
       "video:restriction: once, relationship allow|deny, ISO 3166-1 country codes.",
       "[G-vid]; [XSD]", "parse", "schema", "entry"),
    _r("VID708", "video-platform", "error",
       "video:platform: once, relationship allow|deny, values web, mobile, tv.", "[G-vid]; [XSD]",
       "parse", "schema"),
    _r("VID709", "video-yes-no", "error",
       "family_friendly, requires_subscription and live are yes or no.", "[G-vid]; [XSD]", "parse",
       "schema"),
    _r("VID710", "video-date", "error", "Video dates are valid W3C Datetimes.", "[G-vid]; [XSD]",
       "parse", "schema"),
    _r("VID711", "video-date-range", "warning",
       "expiration_date lies in the past, or publication_date in the future.", "[G-vid]", "entry"),
    _r("VID712", "too-many-video-tags", "error", "At most 32 video:tag per video.",
       "[G-vid]; [XSD]", "parse", "schema"),
    _r("VID713", "video-uploader", "error",
       "video:uploader: once, at most 255 characters; info on the page's domain.", "[G-vid]; [XSD]",
       "parse", "schema", "entry"),
    _r("VID714", "video-deprecated", "warning",
       "category, gallery_loc, price, tvshow and player_loc attributes were retired in 2022.",
       "[G-2022]", "parse"),
    _r("VID715", "video-structure", "warning", "Video children follow the XSD sequence.", "[XSD]",
       "parse", "schema", strict=True),
    _r("VID716", "video-values", "error",
       "view_count, category, price currency and id type have their XSD forms.", "[XSD]", "parse",
       "schema"),
    _r("VID717", "video-url", "error",
       "thumbnail_loc, content_loc and player_loc are absolute URLs.", "[G-vid]", "parse", "schema",
       "tree"),
    _r("VID718", "video-thumbnail-size", "warning", "The thumbnail is too small or too large.",
       "[G-vid]; [GSC]", "online"),
    _r("VID719", "video-blocked", "warning",
       "Video or thumbnail URLs are blocked by robots.txt or need a login.", "[G-vid]",
       "online"),
    # -- NEWS8xx news ----------------------------------------------------------------------
    _r("NEWS801", "news-required", "error",
       "news:news has publication (name, language), publication_date and title.", "[G-news]; [XSD]",
       "parse", "schema"),
    _r("NEWS802", "news-repeated", "error", "At most one news:news per <url>.", "[G-news]",
       "parse"),
    _r("NEWS803", "too-many-news", "error", "At most 1,000 news:news per sitemap.", "[G-news]",
       "parse"),
    _r("NEWS804", "news-language", "error",
       "news:language is an ISO 639 code (lowercase) or zh-cn / zh-tw.", "[G-news]; [XSD]", "parse",
       "schema", "entry"),
    _r("NEWS805", "news-date", "error", "news:publication_date is a valid W3C Datetime.",
       "[G-news]; [XSD]", "parse", "schema"),
    _r("NEWS806", "news-age", "warning",
       "The article is older than 48 hours, or dated in the future.", "[G-news]", "entry"),
    _r("NEWS807", "news-empty", "error", "news:name and news:title are not empty.",
       "[G-news]; [XSD]", "parse"),
    _r("NEWS808", "news-deprecated", "warning",
       "access, genres, keywords and stock_tickers are not in Google's reference.",
       "[XSD]; [G-news]", "parse", "schema"),
    _r("NEWS809", "news-title", "warning",
       "news:title is the article's title, without the publication name, dates or bylines.",
       "[G-news]", "entry"),
    # -- HRE9xx hreflang -------------------------------------------------------------------
    _r("HRE901", "hreflang-link", "error",
       'Annotations are empty <xhtml:link rel="alternate" hreflang href> children of <url>.',
       "[G-hreflang]; [XSD]", "parse", "schema"),
    _r("HRE902", "hreflang-code", "error",
       "hreflang is x-default or language[-Script][-REGION] with ISO codes.",
       "[G-hreflang]; BCP 47; ISO 639-1; ISO 3166-1", "parse", "schema", "entry"),
    _r("HRE903", "hreflang-href", "error", "href is an absolute URL.", "[G-hreflang]", "parse",
       "schema", "tree"),
    _r("HRE904", "hreflang-self", "error", "A <url> with alternates lists itself among them.",
       "[G-hreflang]", "entry"),
    _r("HRE905", "hreflang-reciprocal", "error",
       "Alternates point back (a target outside the set is a warning).", "[G-hreflang]", "set"),
    _r("HRE906", "hreflang-conflict", "error",
       "One hreflang value maps to one href within a <url>.", "[G-hreflang]", "entry"),
    _r("HRE907", "hreflang-cluster", "warning",
       "Members of a cluster list the same alternates; at most one x-default.", "[G-hreflang]",
       "entry", "set"),
    _r("HRE908", "hreflang-canonical", "warning",
       "An alternate is a non-canonical or redirecting URL.", "[G-hreflang]",
       # RULES.md's other half, hreflang without the xhtml namespace, is SM004/SM102.
       "online"),
    # -- AUD0xx the coverage audit: a crawl or a build folder held against the sitemaps ----
    _r("AUD001", "indexable-not-listed", "warning",
       "An indexable page that links reach (or that the build folder holds) is in no sitemap.",
       "[G-build] 'include the URLs you want to see in search results'; audit tools", "audit"),
    _r("AUD002", "orphan-url", "warning",
       "A listed URL that no link reaches (an orphan page), although it is indexable.",
       "audit tools (Screaming Frog 'Orphan URLs')", "audit"),
    _r("AUD003", "lastmod-drift", "warning",
       "A listed lastmod is over a day later than the page's own date or Last-Modified, "
       "or over 30 days earlier.",
       "[G-2023] lastmod 'consistently and verifiably accurate'; [B-2023]", "audit"),
    _r("AUD004", "listed-in-several-sitemaps", "warning",
       "A URL is listed in more than one sitemap of the set (after normalisation).",
       "audit tools (Screaming Frog 'URLs in Multiple Sitemaps')", "audit"),
    # -- RB0xx the Sitemap: lines of a robots.txt (spec/DISCOVERY.md) ----------------------
    _r("RB003", "robots-sitemap-not-absolute", "error",
       "A Sitemap: value is an absolute, fully-qualified http(s) URL.",
       "[P] 'should be the complete URL'; Google robots.txt spec", "robots"),
    _r("RB007", "robots-sitemap-not-uri", "warning",
       "A Sitemap: value is written as an RFC 3986 URI, with no '#' after it.",
       "google/robotstxt robots.cc", "robots"),
    _r("RB008", "robots-sitemap-typo", "warning",
       "The field is spelled 'Sitemap:' (Google tolerates 'site-map' and a missing colon).",
       "google/robotstxt robots.cc kAllowFrequentTypos", "robots"),
    _r("RB009", "robots-too-large", "warning",
       "Sitemap: lines lie within the first 500 KiB of the robots.txt.",
       "RFC 9309 §2.5; Google robots.txt spec", "robots"),
    _r("RB010", "robots-not-utf8", "warning", "The robots.txt is UTF-8 encoded.",
       "RFC 9309 §2.3", "robots"),
    _r("RB011", "robots-sitemap-disallowed", "warning",
       "A listed sitemap is not disallowed for crawling by the same robots.txt.",
       "Google robots.txt spec; [GSC] 'Couldn't fetch'", "robots"),
)
# fmt: on

#: Every rule, by id, in catalogue order.
RULES: Final[dict[str, Rule]] = {rule.id: rule for rule in _CATALOGUE}


def expand_ids(patterns: Iterable[str]) -> set[str]:
    """The rule ids a list of ids or id prefixes (``SM2``, ``HRE``) names.

    Raises ``ValueError`` for a pattern that names no rule.

    >>> sorted(expand_ids(["SM21"]))[:3]
    ['SM210', 'SM211', 'SM212']
    """
    out: set[str] = set()
    for raw in patterns:
        for token in raw.replace(",", " ").split():
            key = token.strip().upper()
            hits = {rid for rid in RULES if rid.startswith(key)}
            if not hits:
                raise ValueError(f"{token!r} names no rule; rule ids look like SM301 or HRE905")
            out |= hits
    return out


def severity(rule: str, *, strict: bool = False) -> Severity:
    """The severity of ``rule``: the catalogue's, or ``"error"`` for a strict rule when
    ``strict`` (``--strict``) is on.

    >>> severity("SM002"), severity("SM302"), severity("SM302", strict=True)
    ('warning', 'warning', 'error')
    """
    r = RULES[rule]
    return "error" if strict and r.strict else r.severity
