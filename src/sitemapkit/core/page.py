"""core: the facts of one HTML page that a sitemap needs. Pure: never does I/O.

:func:`read_page` takes a page's bytes and its URL and returns a :class:`Page`: whether
it may be indexed and why not, its canonical URL, its ``<base href>``, its images, its
hreflang alternates, its own modification date and its links. A built site folder
(:mod:`sitemapkit.io.sources.folder`) and a crawler read pages through it alike.

The HTML is parsed by libxml2 (``lxml``), which recovers from broken markup as browsers
do; nothing here raises on a page's content. URLs are resolved against the document's
base URL (HTML: "the first ``base`` element … that has an ``href`` attribute"), the
fragment dropped and non-ASCII percent-encoded as UTF-8 (:func:`~.urls.iri_to_uri`);
links are in comparison form (:func:`~.urls.normalize`), so ``/café/`` and
``/caf%C3%A9/`` are one page. The indexing directives are read as
:mod:`sitemapkit.core.probe` reads them for the online checks.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urljoin

from lxml import etree

from .limits import MAX_IMAGES
from .probe import is_noindex, meta_directives, robots_directives
from .urls import iri_to_uri, normalize
from .w3cdate import parse_w3c

__all__ = ["MAX_PAGE_BYTES", "Page", "read_page"]

#: Google: "Googlebot can crawl the first 15MB of an HTML file or supported text-based file";
#: what lies beyond is not indexed, so it is not read here either.
MAX_PAGE_BYTES: Final = 15 * 1024 * 1024

#: Whose ``<meta name=…>`` robots tags count: every crawler's and Google's.
AGENTS: Final = ("robots", "googlebot")

# HTML's "prescan a byte stream to determine its encoding" looks at the first 1024 bytes.
_CHARSET: Final = re.compile(rb"<meta[^>]*?charset\s*=", re.IGNORECASE)
# Schemes a link may carry that lead to no page.
_NOT_PAGES: Final = ("mailto:", "tel:", "javascript:", "data:", "sms:", "ftp:")
_SPACE: Final = " \t\n\r\f"
_ORIGIN: Final = re.compile(r"https?://[^/?#]+")
_TAGS: Final = ("base", "meta", "link", "script", "img")
_LINK_TAGS: Final = (*_TAGS, "a", "area")
# JSON-LD can nest; a page's own date is near the top. Deeper is not looked at.
_JSON_DEPTH: Final = 6
_PARSERS: dict[str | None, etree.HTMLParser] = {}


@dataclass(frozen=True, slots=True)
class Page:
    """What a sitemap needs from one HTML page.

    ``noindex`` says why the page may not be indexed (the tag or header that says so),
    ``None`` when it may; ``directives`` are the robots directives that apply to it.
    ``canonical`` is the target of its ``<link rel="canonical">`` (``None`` without one,
    or when several disagree: Google then ignores them all). ``images`` are absolute
    image URLs, ``alternates`` ``(hreflang, URL)`` pairs, ``modified`` the page's own
    W3C Datetime (a day at least), ``links`` the pages it links to.

    >>> p = read_page(b'<meta name="robots" content="noindex"><a href="b#x">b</a>',
    ...               "https://example.com/a")
    >>> p.noindex, p.links
    ('<meta name="robots" content="noindex">', ('https://example.com/b',))
    """

    url: str
    base: str
    noindex: str | None = None
    directives: frozenset[str] = frozenset()
    canonical: str | None = None
    images: tuple[str, ...] = ()
    alternates: tuple[tuple[str, str], ...] = ()
    modified: str | None = None
    links: tuple[str, ...] = ()

    @property
    def indexable(self) -> bool:
        return self.noindex is None

    def canonical_elsewhere(self, *aliases: str) -> bool:
        """True if the canonical URL is another page than this one (or its ``aliases``,
        other URLs that serve the same file, such as ``/blog/index.html`` for ``/blog/``)."""
        if self.canonical is None or self.canonical == self.url:
            return False
        target = normalize(self.canonical)
        return all(target != normalize(u) for u in (self.url, *aliases))


def _parser(encoding: str | None) -> etree.HTMLParser:
    parser = _PARSERS.get(encoding)
    if parser is None:
        parser = etree.HTMLParser(
            encoding=encoding,
            remove_comments=True,
            remove_pis=True,
            no_network=True,
            default_doctype=False,
            compact=True,
            # white space between elements carries nothing a sitemap needs; not building
            # those text nodes parses a page a fifth faster
            remove_blank_text=True,
            huge_tree=False,
        )
        _PARSERS[encoding] = parser
    return parser


def _root(data: bytes, charset: str | None) -> Any:
    """The document's root element, or ``None`` for a page with no elements."""
    encoding = None
    if charset is not None:
        # the Content-Type's charset wins over the page's own declaration (HTML's order);
        # a parser given an encoding ignores the page's
        encoding = "utf-8"
        with contextlib.suppress(LookupError):  # an unknown charset: the bytes as UTF-8
            data = data.decode(charset, "replace").encode("utf-8", "surrogatepass")
    elif not data.startswith(b"\xef\xbb\xbf") and not _CHARSET.search(data, 0, 1024):
        # libxml2 reads undeclared bytes as Latin-1; the web's pages (and every static site
        # generator's) are UTF-8
        encoding = "utf-8"
    try:
        return etree.fromstring(data, _parser(encoding))
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None


def _absolute(href: str | None, base: str) -> str | None:
    """``href`` resolved, fragment dropped, as a URI; ``None`` if it is no http(s) URL."""
    if not href:
        return None
    href = href.strip(_SPACE)
    if not href or href.startswith("#") or href.lower().startswith(_NOT_PAGES):
        return None
    try:
        url = iri_to_uri(_join(base, href).partition("#")[0])
    except ValueError:
        return None
    if not url.startswith(("http://", "https://")) or len(url) < 12:
        return None
    return url


def _join(base: str, href: str) -> str:
    """RFC 3986 resolution; the two commonest forms of a page's references, an
    absolute URL and a path from the root without dot segments, without ``urljoin``."""
    if href.startswith(("https://", "http://")):
        return href
    if href.startswith("/") and not href.startswith("//") and "/." not in href:
        m = _ORIGIN.match(base)
        if m is not None:
            return m.group() + href
    return urljoin(base, href)


def _srcset(value: str) -> Iterator[tuple[str, float, bool]]:
    """``(URL, size, is_width)`` of each candidate of a ``srcset`` (HTML's parsing rules
    simplified: a URL, then descriptors up to the next comma)."""
    i, n = 0, len(value)
    while i < n:
        while i < n and value[i] in _SPACE + ",":
            i += 1
        j = i
        while j < n and value[j] not in _SPACE:
            j += 1
        url, i = value[i:j], j
        desc = ""
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            k = value.find(",", i)
            k = n if k < 0 else k
            desc, i = value[i:k].strip(_SPACE).lower(), k + 1
        if not url:
            continue
        size, is_width = 1.0, False
        for d in desc.split():
            try:
                if d.endswith("w"):
                    size, is_width = float(d[:-1]), True
                elif d.endswith("x"):
                    size = float(d[:-1])
            except ValueError:
                pass
        yield url, size, is_width


def _largest(candidates: Iterable[tuple[str, float, bool]]) -> str | None:
    """The candidate with the greatest width, else the greatest density."""
    best: tuple[bool, float] | None = None
    found = None
    for url, size, is_width in candidates:
        key = (is_width, size)
        if best is None or key > best:
            best, found = key, url
    return found


def _pixel(img: Any) -> bool:
    """A tracking pixel: its ``width`` and ``height`` attributes both at most 1."""
    try:
        w = float(img.get("width", "").strip().removesuffix("px"))
        h = float(img.get("height", "").strip().removesuffix("px"))
    except ValueError:
        return False
    return w <= 1 and h <= 1


def _image(img: Any) -> str | None:
    """The source an ``<img>`` (with the ``<source>`` of its ``<picture>``) shows largest."""
    candidates: list[tuple[str, float, bool]] = []
    # libxml2's HTML 4 parser does not know <source> is void: it nests what follows it,
    # so the <img> of a <picture> may sit inside its <source> elements
    for up in img.iterancestors():
        if up.tag == "picture":
            for source in up.iter("source"):
                candidates.extend(_srcset(source.get("srcset") or ""))
            break
        if up.tag != "source":
            break
    candidates.extend(_srcset(img.get("srcset") or ""))
    src = (img.get("src") or "").strip(_SPACE)
    if src:
        candidates.append((src, 1.0, False))
    return _largest(c for c in candidates if not c[0].lower().startswith("data:"))


def _json_date(text: str | None) -> str | None:
    """The first ``dateModified`` of a JSON-LD block (depth first) that is a day or finer."""
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        obj, depth = stack.pop()
        if isinstance(obj, dict):
            date = _date(obj.get("dateModified"))
            if date is not None:
                return date
            children: Iterable[Any] = obj.values()
        elif isinstance(obj, list):
            children = obj
        else:
            continue
        if depth < _JSON_DEPTH:
            stack.extend((c, depth + 1) for c in reversed(list(children)))
    return None


def _date(value: object) -> str | None:
    """``value`` if it is a W3C Datetime naming a day or an instant (a lastmod)."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    try:
        parsed = parse_w3c(value)
    except ValueError:
        return None
    return value if parsed.granularity >= 3 else None


class _Scan:
    """The raw values of one pass over a page's elements, resolved afterwards (the
    document's base URL may come after the first relative URL)."""

    def __init__(self) -> None:
        self.base: str | None = None
        self.robots: list[tuple[str, str]] = []
        self.canonicals: list[str] = []
        self.alternates: list[tuple[str, str]] = []
        self.dates: dict[str, str] = {}
        self.json: list[str] = []
        self.hrefs: list[str] = []
        self.images: list[str] = []

    def element(self, el: Any, agents: tuple[str, ...], links: bool) -> None:
        tag = el.tag
        if tag in ("a", "area"):
            if links and (href := el.get("href")):
                self.hrefs.append(href)
        elif tag == "img":
            if not _pixel(el) and (src := _image(el)):
                self.images.append(src)
        elif tag == "meta":
            self._meta(el, agents)
        elif tag == "link":
            href = el.get("href")
            rels = (el.get("rel") or "").lower().split()
            if href and "canonical" in rels:
                self.canonicals.append(href)
            if href and "alternate" in rels and (lang := el.get("hreflang")):
                self.alternates.append((lang.strip(_SPACE), href))
        elif tag == "script":
            kind = (el.get("type") or "").split(";")[0].strip().lower()
            if kind == "application/ld+json":
                self.json.append(el.text or "")
        elif tag == "base" and self.base is None and (href := el.get("href")):
            self.base = href

    def _meta(self, el: Any, agents: tuple[str, ...]) -> None:
        name = (el.get("name") or "").strip().lower()
        content = el.get("content")
        if content is None:
            return
        if name in agents:
            self.robots.append((name, content))
        key = (el.get("property") or name).strip().lower()
        if key in ("article:modified_time", "og:updated_time"):
            self.dates.setdefault(key, content)


def read_page(
    data: bytes,
    url: str,
    *,
    x_robots_tag: Iterable[str] = (),
    charset: str | None = None,
    agents: tuple[str, ...] = AGENTS,
    links: bool = True,
) -> Page:
    """The facts of the HTML page ``data`` found at ``url``.

    ``x_robots_tag`` are the page's ``X-Robots-Tag`` header values (a crawler has them),
    read for ``agents`` (the names of ``<meta name=…>`` tags that speak to us, ``robots``
    first); ``charset`` is the one its ``Content-Type`` names, else the page's own
    declaration, else UTF-8. ``links=False`` skips collecting links (a folder needs none).
    Only the first :data:`MAX_PAGE_BYTES` are read.

    >>> p = read_page(b'<base href="https://cdn.example.com/s/"><img src="a.png">'
    ...               b'<img src="t.gif" width="1" height="1">'
    ...               b'<meta property="og:updated_time" content="2024-05-01T10:00:00Z">',
    ...               "https://example.com/x")
    >>> p.images, p.modified
    (('https://cdn.example.com/s/a.png',), '2024-05-01T10:00:00Z')
    """
    scan = _Scan()
    root = _root(data[:MAX_PAGE_BYTES], charset)
    agents = tuple(a.lower() for a in agents)
    header = list(x_robots_tag)
    if root is not None:
        for el in root.iter(*(_LINK_TAGS if links else _TAGS)):
            scan.element(el, agents, links)
    base = _absolute(scan.base, url) or url
    return Page(
        url=url,
        base=base,
        noindex=_noindex(scan.robots, header, agents),
        directives=_directives(scan.robots, header, agents),
        canonical=_canonical(scan.canonicals, base),
        images=_unique(_absolute(i, base) for i in scan.images)[:MAX_IMAGES],
        alternates=_alternates(scan.alternates, base),
        modified=_modified(scan),
        links=tuple(
            dict.fromkeys(normalize(u) for u in _unique(_absolute(h, base) for h in scan.hrefs))
        ),
    )


def _header(values: Iterable[str], agents: tuple[str, ...]) -> frozenset[str]:
    """The ``X-Robots-Tag`` directives for every crawler and for any of ``agents``."""
    out: set[str] = set()
    for agent in agents:
        out |= robots_directives(values, agent)
    return frozenset(out)


def _directives(
    robots: list[tuple[str, str]], header: list[str], agents: tuple[str, ...]
) -> frozenset[str]:
    out = set(_header(header, agents))
    for _, content in robots:
        out |= meta_directives(content)
    return frozenset(out)


def _noindex(
    robots: list[tuple[str, str]], header: list[str], agents: tuple[str, ...]
) -> str | None:
    """The first tag or header that forbids indexing, as written for a message."""
    for name, content in robots:
        if is_noindex(meta_directives(content)):
            return f'<meta name="{name}" content="{content.strip()}">'
    for value in header:
        if is_noindex(_header([value], agents)):
            return f"X-Robots-Tag: {value.strip()}"
    return None


def _canonical(hrefs: list[str], base: str) -> str | None:
    """The one canonical target; ``None`` when there is none or several disagree (Google:
    "if you specify multiple canonical URLs … Google will ignore all of them")."""
    found = _unique(_absolute(h, base) for h in hrefs)
    return found[0] if len(found) == 1 else None


def _alternates(pairs: list[tuple[str, str]], base: str) -> tuple[tuple[str, str], ...]:
    out: dict[tuple[str, str], None] = {}
    for lang, href in pairs:
        url = _absolute(href, base)
        if lang and url is not None:
            out[(lang, url)] = None
    return tuple(out)


def _modified(scan: _Scan) -> str | None:
    """The page's own date: JSON-LD ``dateModified``, then ``article:modified_time``,
    then ``og:updated_time``; a value that is not a W3C Datetime of a day is skipped."""
    for text in scan.json:
        date = _json_date(text)
        if date is not None:
            return date
    for key in ("article:modified_time", "og:updated_time"):
        date = _date(scan.dates.get(key))
        if date is not None:
            return date
    return None


def _unique(urls: Iterable[str | None]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(u for u in urls if u is not None))
