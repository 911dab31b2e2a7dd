"""core: what a crawler learns from one URL's answer. Pure: never does I/O.

The online checks of ``validate`` (:mod:`sitemapkit.io.urlcheck` makes the requests,
:mod:`sitemapkit.lint.online` turns the result into findings) share these decisions:

* **robots.txt**: how its fetch status is read (RFC 9309 §2.3.1, :func:`robots_state`);
* **HEAD or GET**: when a HEAD answer does not count (:func:`head_refused`), which answers
  are retried (:func:`retryable`) and where a redirect leads (:func:`redirect_target`);
* **indexing signals**: ``X-Robots-Tag`` (:func:`robots_directives`), ``<meta name="robots">``
  and ``<link rel="canonical">`` in the head of an HTML page (:class:`HeadScanner`), the
  ``Link: <…>; rel="canonical"`` header (:func:`link_canonical`);
* **image size** from the first bytes of a PNG, GIF, WebP or JPEG file (:func:`sniff_image`);
* the data that carries all of it: :class:`Probe`.

Every parser here takes untrusted text or bytes and never raises on them.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Final, Literal
from urllib.parse import urljoin, urlsplit

__all__ = [
    "HEAD_BYTES",
    "IMAGE_BYTES",
    "Failure",
    "HeadScanner",
    "ImageSize",
    "Probe",
    "Purpose",
    "RobotsAnswer",
    "RobotsState",
    "head_refused",
    "is_html",
    "is_http",
    "is_noindex",
    "link_canonical",
    "meta_directives",
    "redirect_target",
    "retryable",
    "robots_directives",
    "robots_state",
    "sniff_image",
]

#: How much of an HTML page is read for its ``<head>``: a head that is not over after this
#: many bytes is read no further (Google reads the first 2 MB of an HTML page; the robots
#: and canonical tags of real pages are within the first few kilobytes).
HEAD_BYTES: Final = 256 * 1024
#: How much of a thumbnail is read for its size. PNG, GIF and WebP give it in their first
#: 30 bytes; a JPEG after its metadata segments (Exif, ICC), rarely more than 64 KiB.
IMAGE_BYTES: Final = 128 * 1024

#: What a URL is checked for: ``page`` (a ``<loc>`` or hreflang alternate: status,
#: redirects, noindex, canonical), ``media`` (video content/player: status only),
#: ``thumbnail`` (status and pixel size), ``sitemap`` (a sitemap's published URL: status).
Purpose = Literal["page", "media", "thumbnail", "sitemap"]

#: Why a check has no final answer: disallowed by robots.txt (not requested), a redirect
#: loop, more redirects than allowed, a redirect to nowhere, no answer in time, no
#: connection at all.
Failure = Literal["blocked", "loop", "too-many-redirects", "bad-redirect", "timeout", "connection"]

_REDIRECTS: Final = frozenset([301, 302, 303, 307, 308])


# -- robots.txt -----------------------------------------------------------------------------

#: ``parse``: use the rules; ``allow-all``: there are no rules; ``unreachable``: the
#: server failed, and a crawler must assume everything is disallowed for now.
RobotsState = Literal["parse", "allow-all", "unreachable"]


def robots_state(status: int | None) -> RobotsState:
    """How a crawler reads a robots.txt answer (after redirects), per RFC 9309 §2.3.1.

    2xx: parse it. 4xx ("unavailable"): "the crawler MAY access any resources on the
    server". 5xx or no answer ("unreachable"): "the crawler MUST assume complete
    disallow". Google reads 429 like a 5xx (spec/DISCOVERY.md RB012).

    >>> [robots_state(s) for s in (200, 404, 429, 503, None)]
    ['parse', 'allow-all', 'unreachable', 'unreachable', 'unreachable']
    """
    if status is None or status == 429 or status >= 500:
        return "unreachable"
    if 200 <= status < 300:
        return "parse"
    return "allow-all"  # 4xx; a 3xx here means the redirects ran out: nothing to read


@dataclass(frozen=True, slots=True)
class RobotsAnswer:
    """How the robots.txt of an origin answered: its URL, the status (``None`` without an
    answer) and, without an answer, why."""

    url: str
    status: int | None
    error: str | None = None

    @property
    def state(self) -> RobotsState:
        return robots_state(self.status)

    def describe(self) -> str:
        """``HTTP 503`` or the error, for messages."""
        if self.status is not None:
            return f"HTTP {self.status}"
        return self.error or "no answer"


# -- requests -------------------------------------------------------------------------------


def head_refused(status: int) -> bool:
    """True when a HEAD answer must be confirmed with a GET.

    405 (Method Not Allowed) and 501 (Not Implemented) say the server does not do HEAD.
    Other 4xx and 5xx answers are confirmed too: some servers and CDNs route only GET (a
    HEAD gets 403 or 404 from a page that exists), and a failure is reported only when a
    crawler's GET would see it. 429 is retried instead, not confirmed.

    >>> [head_refused(s) for s in (200, 301, 404, 405, 429, 501)]
    [False, False, True, True, False, True]
    """
    return status >= 400 and status != 429


def retryable(status: int) -> bool:
    """429 Too Many Requests and 503 Service Unavailable are worth a later retry."""
    return status in (429, 503)


def redirect_target(status: int, location: str | None, url: str) -> str | None:
    """Where a redirect answer leads (absolute, fragment dropped), or None when it is not
    a redirect. A redirect without ``Location`` is not followed: it is the final answer.

    >>> redirect_target(301, "/b?x=1#top", "https://example.com/a")
    'https://example.com/b?x=1'
    >>> redirect_target(200, "/b", "https://example.com/a") is None
    True
    """
    if status not in _REDIRECTS or location is None or not location.strip():
        return None
    try:
        target = urljoin(url, location.strip())
    except ValueError:
        return ""
    return target.split("#", 1)[0]


def is_http(url: str) -> bool:
    """An absolute http(s) URL with a host: the only URLs the checks request."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)


def is_html(content_type: str | None) -> bool:
    """True for ``text/html`` and ``application/xhtml+xml``, and when the type is not given
    (the page may still be HTML; reading its head tells)."""
    if content_type is None or not content_type.strip():
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return media in ("text/html", "application/xhtml+xml")


# -- X-Robots-Tag and meta robots ----------------------------------------------------------

# Google's robots directives that take a value after a colon; any other "name:" before a
# directive is a user agent ("X-Robots-Tag: googlebot: noindex").
_VALUED: Final = frozenset(
    ["unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"]
)
_AGENT: Final = re.compile(r"[a-z0-9][a-z0-9_-]*")


def robots_directives(values: Iterable[str], agent: str) -> frozenset[str]:
    """The directives of ``X-Robots-Tag`` header values that apply to ``agent``, lowercased.

    Google: the header may repeat; a value is a comma-separated list of directives, and a
    user agent followed by a colon scopes the directives after it ("``X-Robots-Tag:
    otherbot: noindex, nofollow``" speaks to otherbot only). Directives without a user agent
    apply to every crawler. Valued directives keep only their name
    (``max-snippet:20`` → ``max-snippet``).

    >>> sorted(robots_directives(["noarchive", "googlebot: noindex, nofollow",
    ...                           "otherbot: none"], "Googlebot"))
    ['noarchive', 'nofollow', 'noindex']
    """
    me = agent.strip().lower()
    out: set[str] = set()
    for value in values:
        scope: str | None = None
        for token in value.split(","):
            name, colon, rest = token.partition(":")
            key = name.strip().lower()
            if colon and key not in _VALUED and _AGENT.fullmatch(key):
                scope = key
                name, colon, rest = rest.partition(":")
                key = name.strip().lower()
            if key and (scope is None or scope == me):
                out.add(key)
    return frozenset(out)


def meta_directives(content: str) -> frozenset[str]:
    """The directives of a ``<meta name="robots" content="…">``, lowercased.

    >>> sorted(meta_directives("NoIndex, max-snippet:50"))
    ['max-snippet', 'noindex']
    """
    out = set()
    for token in content.split(","):
        key = token.partition(":")[0].strip().lower()
        if key:
            out.add(key)
    return frozenset(out)


def is_noindex(directives: frozenset[str]) -> bool:
    """``noindex``, or ``none`` (Google: "equivalent to noindex, nofollow")."""
    return "noindex" in directives or "none" in directives


# -- canonical ------------------------------------------------------------------------------

_LINK_VALUE: Final = re.compile(r"<([^>]*)>((?:\s*;\s*[^;,]*)*+)")
_LINK_PARAM: Final = re.compile(r';\s*([A-Za-z0-9!#$&+.^_`|~-]+)\s*=\s*("[^"]*"|[^;,\s]*)')


def link_canonical(values: Iterable[str], url: str) -> str | None:
    """The target of the first ``rel="canonical"`` link in ``Link`` header values
    (RFC 8288), resolved against ``url``; None when there is none.

    >>> link_canonical(['<https://example.com/a>; rel="alternate"; hreflang=de, '
    ...                 '</b>; rel="canonical"'], "https://example.com/x")
    'https://example.com/b'
    """
    for value in values:
        for m in _LINK_VALUE.finditer(value):
            for name, raw in _LINK_PARAM.findall(m.group(2)):
                if name.lower() != "rel":
                    continue
                rels = raw.strip('"').lower().split()
                if "canonical" in rels:
                    return _absolute(m.group(1).strip(), url)
    return None


def _absolute(href: str, base: str) -> str | None:
    if not href:
        return None
    try:
        return urljoin(base, href).split("#", 1)[0]
    except ValueError:
        return None


# -- the head of an HTML page ---------------------------------------------------------------


# HTML's "in head" insertion mode: any other start tag ends the head implicitly, and
# Google reads robots meta tags and canonical links only in the head.
_HEAD_TAGS: Final = frozenset(
    ["html", "head", "title", "base", "link", "meta", "style", "script", "noscript", "template"]
)


class _Head(HTMLParser):
    def __init__(self, agent: str) -> None:
        super().__init__(convert_charrefs=True)
        self.names = ("robots", agent.strip().lower())
        self.done = False
        self.meta: list[tuple[str, str]] = []  # (name, content) of the robots meta tags
        self.canonical: str | None = None
        self.base: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.done:
            return
        if tag not in _HEAD_TAGS:
            self.done = True
            return
        values = {k.lower(): (v or "") for k, v in attrs}
        if tag == "meta":
            name = values.get("name", "").strip().lower()
            if name in self.names:
                self.meta.append((name, values.get("content", "")))
        elif tag == "link":
            rels = values.get("rel", "").lower().split()
            if "canonical" in rels and self.canonical is None and values.get("href", "").strip():
                self.canonical = values["href"].strip()
        elif tag == "base" and self.base is None and values.get("href", "").strip():
            self.base = values["href"].strip()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "head":
            self.done = True


class HeadScanner:
    """Reads the start of an HTML page for the indexing signals in its ``<head>``.

    Feed the body's bytes as they arrive; :meth:`feed` returns True once nothing more is
    needed: the head ended (``</head>``, ``<body>`` or any element that cannot be in a
    head) or ``limit`` bytes were read. Then
    :attr:`meta` holds the ``<meta name="robots">`` (or ``name=`` the robots agent) tags
    as ``(name, content)``, :meth:`canonical` the ``<link rel="canonical">`` target.
    ``charset`` is the one of the ``Content-Type`` header (default UTF-8; undecodable
    bytes are replaced).

    >>> s = HeadScanner(agent="Googlebot")
    >>> s.feed(b'<html><head><META NAME="googlebot" content="noindex">'
    ...        b'<link rel="canonical" href="/a"></head><body>')
    True
    >>> s.meta, s.canonical("https://example.com/b")
    ([('googlebot', 'noindex')], 'https://example.com/a')
    >>> s.noindex()
    '<meta name="googlebot" content="noindex">'
    """

    def __init__(self, *, agent: str, charset: str | None = None, limit: int = HEAD_BYTES) -> None:
        try:
            factory = codecs.getincrementaldecoder(charset or "utf-8")
        except LookupError:
            factory = codecs.getincrementaldecoder("utf-8")
        self._decoder = factory(errors="replace")
        self._parser = _Head(agent)
        self._limit = limit
        self._read = 0
        self._over = False

    @property
    def done(self) -> bool:
        return self._parser.done or self._over

    @property
    def meta(self) -> list[tuple[str, str]]:
        return self._parser.meta

    def feed(self, data: bytes) -> bool:
        """Read more of the page; True when nothing more is needed."""
        if self.done:
            return True
        room = self._limit - self._read
        if len(data) >= room:
            data = data[:room]
            self._over = True
        self._read += len(data)
        try:
            self._parser.feed(self._decoder.decode(data))
        except (AssertionError, ValueError, LookupError):  # pragma: no cover - html.parser quirks
            self._over = True
        return self.done

    def noindex(self) -> str | None:
        """The first meta tag that says noindex, as written for a message; or None."""
        for name, content in self.meta:
            if is_noindex(meta_directives(content)):
                return f'<meta name="{name}" content="{content.strip()}">'
        return None

    def canonical(self, url: str) -> str | None:
        """The canonical link's target, resolved against ``<base href>`` and ``url``."""
        href = self._parser.canonical
        if href is None:
            return None
        base = url
        if self._parser.base is not None:
            base = _absolute(self._parser.base, url) or url
        return _absolute(href, base)


# -- image size -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ImageSize:
    """The pixel size of an image and its format (``PNG``, ``GIF``, ``WebP``, ``JPEG``)."""

    format: str
    width: int
    height: int

    def __str__(self) -> str:
        return f"{self.width}×{self.height} px ({self.format})"


_PNG: Final = b"\x89PNG\r\n\x1a\n"
_SIGNATURES: Final = (_PNG, b"GIF87a", b"GIF89a", b"RIFF", b"\xff\xd8")
# Start-of-frame markers, which carry the size: C0-CF except DHT (C4), JPG (C8), DAC (CC).
_SOF: Final = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# Markers without a length: TEM, RST0-7, SOI.
_STANDALONE: Final = frozenset([0x01, *range(0xD0, 0xD9)])


def sniff_image(data: bytes) -> ImageSize | Literal["more", "unknown"]:
    """The size of the image whose first bytes are ``data``.

    ``"more"`` when the bytes end before the size is known, ``"unknown"`` when they are
    not a PNG, GIF, WebP or JPEG file (or a damaged one). Nothing past the headers is read.

    >>> import struct
    >>> sniff_image(b"\\x89PNG\\r\\n\\x1a\\n" + struct.pack(">I", 13) + b"IHDR"
    ...             + struct.pack(">II", 640, 360))
    ImageSize(format='PNG', width=640, height=360)
    >>> sniff_image(b"GIF8"), sniff_image(b"%PDF-1.7")
    ('more', 'unknown')
    """
    if data.startswith(_PNG):
        if len(data) < 24:
            return "more"
        if data[12:16] != b"IHDR":
            return "unknown"
        return ImageSize("PNG", int.from_bytes(data[16:20]), int.from_bytes(data[20:24]))
    if data[:6] in (b"GIF87a", b"GIF89a"):
        if len(data) < 10:
            return "more"
        width = int.from_bytes(data[6:8], "little")
        return ImageSize("GIF", width, int.from_bytes(data[8:10], "little"))
    if data.startswith(b"RIFF"):
        return _webp(data)
    if data.startswith(b"\xff\xd8"):
        return _jpeg(data)
    if len(data) < 8 and any(sig.startswith(data) for sig in _SIGNATURES):
        return "more"
    return "unknown"


def _webp(data: bytes) -> ImageSize | Literal["more", "unknown"]:
    """RFC 9649 (WebP): the first chunk after ``RIFF size WEBP`` holds the size."""
    if len(data) < 16:
        return "more" if b"WEBP".startswith(data[8:12]) else "unknown"
    if data[8:12] != b"WEBP":
        return "unknown"
    if len(data) < 30:
        return "more"
    chunk = data[12:16]
    if chunk == b"VP8 ":  # lossy: a key frame's start code, then 14-bit width and height
        if data[23:26] != b"\x9d\x01\x2a":
            return "unknown"
        width = int.from_bytes(data[26:28], "little") & 0x3FFF
        return ImageSize("WebP", width, int.from_bytes(data[28:30], "little") & 0x3FFF)
    if chunk == b"VP8L":  # lossless: signature 0x2f, then width-1 and height-1 in 14 bits
        if data[20] != 0x2F:
            return "unknown"
        bits = int.from_bytes(data[21:25], "little")
        return ImageSize("WebP", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X":  # extended: canvas width-1 and height-1 in 24 bits
        width = int.from_bytes(data[24:27], "little") + 1
        return ImageSize("WebP", width, int.from_bytes(data[27:30], "little") + 1)
    return "unknown"


def _jpeg(data: bytes) -> ImageSize | Literal["more", "unknown"]:
    """ITU T.81 Annex B: walk the marker segments to the first start-of-frame."""
    n = len(data)
    i = 2
    while True:
        if i >= n:
            return "more"
        if data[i] != 0xFF:
            return "unknown"
        while i < n and data[i] == 0xFF:  # fill bytes
            i += 1
        if i >= n:
            return "more"
        marker = data[i]
        i += 1
        if marker in _STANDALONE:
            continue
        if marker in (0xD9, 0xDA, 0x00):  # end of image or scan data before any frame
            return "unknown"
        if i + 2 > n:
            return "more"
        length = int.from_bytes(data[i : i + 2])
        if length < 2:
            return "unknown"
        if marker in _SOF:
            if i + 7 > n:
                return "more"
            height = int.from_bytes(data[i + 3 : i + 5])
            return ImageSize("JPEG", int.from_bytes(data[i + 5 : i + 7]), height)
        i += length


# -- the result -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Probe:
    """What checking one URL found.

    ``status`` is the final answer's status (``None`` without one), at ``final_url``,
    reached through ``redirects`` (``(status, target)`` per hop). ``failure`` says why
    there is no final answer (:data:`Failure`) and ``detail`` adds the error text, the
    hops of a loop, or the robots.txt URL. ``robots`` is how the origin's robots.txt
    answered. ``noindex`` quotes the header or meta tag that says noindex; ``canonical``
    is the canonical URL the page names, from ``canonical_source`` (``Link header`` or
    ``<link rel="canonical">``); ``image`` the thumbnail's size when it was read.
    ``method`` is the method of the final request.
    """

    url: str
    purpose: Purpose
    status: int | None = None
    final_url: str = ""
    redirects: tuple[tuple[int, str], ...] = ()
    failure: Failure | None = None
    detail: str = ""
    robots: RobotsAnswer | None = None
    noindex: str | None = None
    canonical: str | None = None
    canonical_source: str = ""
    image: ImageSize | None = None
    method: str = "HEAD"
    content_type: str | None = None
