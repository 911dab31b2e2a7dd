"""core: the ``Sitemap:`` records of a robots.txt file. Pure: never does I/O.

sitemaps.org, "Specifying the Sitemap location in your robots.txt file": ``Sitemap:
<sitemap_location>`` on a line of its own, "independent of the user-agent line", so it
may appear anywhere in the file. The reader follows Google's robots.txt parser, which is
more lenient than the letter of RFC 9309 (``spec/DISCOVERY.md`` §1, rules RB002–RB011):

* the field name is case-insensitive, with optional white space around ``:``;
* ``#`` starts a comment; lines end with LF, CR or CRLF; a leading byte-order mark is
  skipped and decides the encoding (UTF-8, UTF-16 LE or BE; UTF-8 without one);
* the typos ``Site-map:`` and a missing colon (``Sitemap https://…``) are accepted, with a
  warning (RB008), as Google accepts them;
* only http(s) URLs are returned, normalised (:func:`~sitemapkit.core.urls.iri_to_uri`:
  scheme and host lower case, non-ASCII percent-encoded as UTF-8) and listed once; a
  relative value is resolved against the robots.txt URL with a warning (RB003: Google
  ignores it, other crawlers resolve it, as a browser would); bytes that are not UTF-8
  are kept, percent-encoded as they are (``%E9``), with a warning (RB010);
* every other line (groups, rules, unknown fields, junk) is ignored without a finding.

This one parser serves ``read`` of a robots.txt (local or fetched), ``discover`` and the
site targets.

Protego (the project's robots.txt matcher) drops a record on the first line after a BOM
and returns relative values, so the lines are read here; Protego only answers whether a
listed sitemap is disallowed for our user agent (RB011).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final
from urllib.parse import SplitResult, urljoin, urlsplit

from .finding import Finding, Severity
from .robotsfile import ABSOLUTE, MAX_ROBOTS_BYTES, split_record
from .rules import severity
from .urls import iri_to_uri

__all__ = [
    "MAX_ROBOTS_BYTES",
    "REPORTED",
    "RobotsSitemaps",
    "is_robots_name",
    "looks_like_robots",
    "parse_robots",
    "robots_url",
    "sitemaps_from_robots",
]

#: The rules this parser reports (the catalogue's ``robots`` rules; tests/lint/test_rules.py
#: checks both against the rule ids written in this module).
REPORTED: Final = frozenset(["RB003", "RB007", "RB008", "RB009", "RB010", "RB011"])

# RFC 9309 §2.2: "EOL = %x0D / %x0A / %x0D.0A".
_EOL: Final = re.compile(r"\r\n|\r|\n")
# google/robotstxt KeyIsSitemap: a case-insensitive prefix match on "sitemap" or
# "site-map"; we accept those two words (and a plural) rather than any prefix.
_SITEMAP_KEY: Final = re.compile(r"site-?maps?", re.IGNORECASE)
# The fields a robots.txt is made of (RFC 9309 §2.2, Google's and Yandex's extensions),
# for telling one apart from a text sitemap by its content.
_FIELD: Final = re.compile(
    r"\s*(?:user-?agent|disallow|allow|site-?maps?|crawl-delay|host|clean-param|"
    r"request-rate|visit-time|noindex)\s*:",
    re.IGNORECASE,
)
_BOMS: Final = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
# A byte that was not UTF-8, kept by the "surrogateescape" error handler.
_ESCAPED: Final = re.compile("[\udc80-\udcff]")


@dataclass(frozen=True, slots=True)
class RobotsSitemaps:
    """What a robots.txt says about sitemaps: the URLs in file order (duplicates
    dropped) and the findings about its ``Sitemap:`` lines."""

    sitemaps: tuple[str, ...]
    findings: tuple[Finding, ...]


def robots_url(url: str) -> str:
    """The robots.txt that speaks for ``url``'s origin (RFC 9309 §2.3, RB001).

    >>> robots_url("https://Example.com:8443/a/b?c")
    'https://example.com:8443/robots.txt'
    """
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an absolute http(s) URL")
    return f"{parts.scheme.lower()}://{parts.netloc.lower().rpartition('@')[2]}/robots.txt"


def is_robots_name(name: str) -> bool:
    """True when a file name or URL names a robots.txt (its last path segment).

    >>> is_robots_name("https://example.com/robots.txt"), is_robots_name("site/ROBOTS.TXT")
    (True, True)
    """
    path = urlsplit(name).path if "://" in name[:12] else name
    return path.replace("\\", "/").rsplit("/", 1)[-1].lower() == "robots.txt"


def looks_like_robots(head: bytes) -> bool:
    """True when the start of a document reads as a robots.txt: its first line that is
    neither blank nor a comment is a robots.txt field (``User-agent:``, ``Disallow:``,
    ``Sitemap:`` …). A text sitemap's first line is a URL; XML starts with ``<``.

    >>> looks_like_robots(b"# hi\\nUser-agent: *\\n"), looks_like_robots(b"https://e.com/\\n")
    (True, False)
    """
    text = _decode(head[:8192], "", [])
    for raw in _EOL.split(text):
        line = raw.partition("#")[0].strip()
        if line:
            return _FIELD.match(line) is not None
    return False


def _decode(data: str | bytes, where: str, findings: list[Finding]) -> str:
    if isinstance(data, str):
        return data.removeprefix("\ufeff")
    for bom, codec in _BOMS:
        if data.startswith(bom):
            if codec != "utf-8":
                return data[len(bom) :].decode(codec, "replace")
            data = data[len(bom) :]
            break
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        findings.append(
            Finding(
                "RB010",
                severity("RB010"),
                f"The robots.txt is not valid UTF-8 ({exc.reason} at byte {exc.start}); "
                "RFC 9309 requires UTF-8. Bytes that are not UTF-8 were kept "
                "percent-encoded in sitemap URLs (e.g. %E9); save the file as UTF-8",
                where,
            )
        )
        return data.decode("utf-8", "surrogateescape")


def parse_robots(
    data: str | bytes,
    base_url: str | None,
    *,
    user_agent: str = "sitemapkit",
    truncated: bool = False,
    where: str | None = None,
) -> RobotsSitemaps:
    """Read the ``Sitemap:`` records of a robots.txt fetched from ``base_url``.

    ``base_url`` is the robots.txt URL (or any URL of its origin); it names the file in
    findings, resolves relative values and answers RB011 (is the sitemap disallowed for
    ``user_agent``?). ``None`` for a local file of unknown URL: relative values are then
    dropped (RB003 error). ``where`` names the file in findings (``base_url`` if not
    given). ``truncated`` says the runner stopped reading at :data:`MAX_ROBOTS_BYTES`
    (RB009).

    >>> r = parse_robots(b"\\xef\\xbb\\xbfSitemap: https://example.com/a.xml\\r"
    ...                  b"user-agent: *\\nsite-map:https://example.com/b.xml # old\\n"
    ...                  b"Sitemap: /c.xml\\n", "https://example.com/robots.txt")
    >>> r.sitemaps
    ('https://example.com/a.xml', 'https://example.com/b.xml', 'https://example.com/c.xml')
    >>> [(f.rule, f.severity) for f in r.findings]
    [('RB008', 'warning'), ('RB003', 'warning')]
    """
    findings: list[Finding] = []
    where = where or base_url or "robots.txt"
    text = _decode(data, where, findings)
    found: list[str] = []
    seen: set[str] = set()
    for number, raw in enumerate(_EOL.split(text), 1):
        before, hash_mark, _comment = raw.partition("#")
        line = before.strip()
        if not line:
            continue
        record = split_record(line)
        if record is None:
            continue
        key, value, typo = record
        if _SITEMAP_KEY.fullmatch(key) is None:
            continue
        if key.lower() != "sitemap" or typo:
            findings.append(
                Finding(
                    "RB008",
                    severity("RB008"),
                    f"{line!r} is not spelled 'Sitemap: <URL>'; Google tolerates the typo, "
                    "other readers may not",
                    where,
                    number,
                    loc=value or None,
                )
            )
        glued = bool(hash_mark) and not before[-1].isspace()
        value = _ESCAPED.sub(lambda m: f"%{ord(m.group()) - 0xDC00:02X}", value)
        url = _check_value(value, base_url, where, number, glued, findings)
        if url is not None and url not in seen:
            seen.add(url)
            found.append(url)
    if truncated:
        findings.append(
            Finding(
                "RB009",
                severity("RB009"),
                f"The robots.txt is larger than {MAX_ROBOTS_BYTES:,} bytes; Google reads no "
                "further and neither did we. Put Sitemap: lines near the top",
                where,
            )
        )
    findings.extend(_disallowed(text, found, base_url, user_agent, where))
    return RobotsSitemaps(tuple(found), tuple(findings))


def _check_value(
    value: str,
    base_url: str | None,
    where: str,
    line: int,
    glued: bool,
    findings: list[Finding],
) -> str | None:
    """The absolute http(s) URI of a ``Sitemap:`` value, or None (reported). The checks
    run in turn, each reporting what it finds: present, absolute (or resolved), http(s),
    a valid IRI, written as a URI and not glued to a comment."""

    def report(rule: str, severity: Severity, message: str, loc: str | None) -> None:
        findings.append(Finding(rule, severity, message, where, line, loc=loc))

    if not value:
        report("RB003", severity("RB003"), "Sitemap: line without a URL; line ignored", None)
        return None
    absolute = _absolute(value, base_url, report)
    if absolute is None:
        return None
    uri = _http_uri(absolute, report)
    if uri is not None:
        _written_as_uri(absolute, uri, glued, report)
    return uri


_Report = Callable[[str, Severity, str, str | None], None]


def _absolute(value: str, base_url: str | None, report: _Report) -> str | None:
    """``value`` if absolute; else resolved against ``base_url`` (RB003 warning) or None
    (RB003 error) where it cannot be."""
    if ABSOLUTE.match(value) is not None:
        return value
    # sitemaps.org: "<sitemap_location> should be the complete URL to the Sitemap".
    base = base_url if base_url is not None and _is_http(base_url) else None
    if base is None or value.lower().startswith("www."):
        reason = (
            "it lacks the scheme; write 'https://' before it"
            if value.lower().startswith("www.")
            else "the robots.txt URL is unknown (give --published-at) to resolve it"
        )
        report(
            "RB003",
            severity("RB003"),
            f"Sitemap URL {value!r} is not absolute and was dropped: {reason}",
            value,
        )
        return None
    resolved = urljoin(base, value)
    report(
        "RB003",
        "warning",  # resolved, so nothing is lost; Google would still ignore the line
        f"Sitemap URL {value!r} is not absolute; it was resolved to {resolved!r} "
        "against the robots.txt URL, but Google ignores relative values: write the "
        "complete URL",
        value,
    )
    return resolved


def _http_uri(value: str, report: _Report) -> str | None:
    """The URI of an absolute ``value``, or None (RB003) when it is not http(s) or not a
    valid IRI."""
    scheme = value.split(":", 1)[0].lower()
    if scheme not in ("http", "https"):
        report(
            "RB003",
            severity("RB003"),
            f"Sitemap URL {value!r} is not an http(s) URL; it is not fetched",
            value,
        )
        return None
    try:
        return iri_to_uri(value)
    except ValueError as exc:
        report("RB003", severity("RB003"), f"Invalid sitemap URL: {exc}", value)
        return None


def _written_as_uri(value: str, uri: str, glued: bool, report: _Report) -> None:
    """RB007: ``value`` is not written as its ``uri``, or a ``#`` follows it directly."""
    if uri != value and uri.lower() != value.lower():
        report(
            "RB007",
            severity("RB007"),
            f"Sitemap URL {value!r} is not an RFC 3986 URI; Google takes it verbatim. "
            f"Write {uri!r}",
            value,
        )
    elif glued:
        # google/robotstxt strips comments before splitting key and value.
        report(
            "RB007",
            severity("RB007"),
            f"A '#' directly follows the sitemap URL {value!r}; robots.txt readers take "
            "it as the start of a comment, so the URL ends before it. Sitemap URLs must "
            "not contain '#'",
            value,
        )


def _is_http(url: str) -> bool:
    parts = _split(url)
    return parts is not None and parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def _split(url: str) -> SplitResult | None:
    """``urlsplit(url)``, or None where it raises (a ``[`` host that is no IPv6 address)."""
    try:
        return urlsplit(url)
    except ValueError:
        return None


def _disallowed(
    text: str, sitemaps: list[str], base_url: str | None, user_agent: str, where: str
) -> list[Finding]:
    """RB011: a listed sitemap on this origin that the same file disallows."""
    origin = None if base_url is None else _split(base_url)
    if origin is None:
        return []
    local = [
        url
        for url in sitemaps
        if (p := _split(url)) is not None
        and p.scheme == origin.scheme
        and p.netloc == origin.netloc.lower()
    ]
    if not local:
        return []
    if _ESCAPED.search(text):  # Protego takes text that encodes as UTF-8
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    from protego import Protego  # with its logging: imported only for this check

    matcher = Protego.parse(text)
    return [
        Finding(
            "RB011",
            severity("RB011"),
            f"{url!r} is disallowed for {user_agent!r} by this robots.txt; crawlers that obey "
            "it cannot fetch the sitemap",
            where,
            loc=url,
        )
        for url in local
        if not matcher.can_fetch(url, user_agent)
    ]


def sitemaps_from_robots(data: str | bytes, base_url: str) -> list[str]:
    """The absolute sitemap URLs a robots.txt lists, in file order, once each.

    Use :func:`parse_robots` to get the findings about bad lines too.

    >>> sitemaps_from_robots("SITEMAP : https://example.com/s.xml\\nSitemap: /x.xml",
    ...                      "https://example.com/robots.txt")
    ['https://example.com/s.xml', 'https://example.com/x.xml']
    """
    return list(parse_robots(data, base_url).sitemaps)
