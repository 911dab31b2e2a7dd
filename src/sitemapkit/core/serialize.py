"""core: the one serializer. Pure: model objects in, ``str`` chunks out.

It owns element order (the XSDs' sequences), namespaces (only those used, on the
root), escaping and number formatting; see the writer contract in
``spec/RULES.md``. Every entry is exactly one line, so a document's byte size is
the sum of its parts and a shard can be cut between any two lines.

:class:`BlockFormatter` is its fast path for plain rows (loc, lastmod, changefreq,
priority): a whole block of input lines becomes entry lines at once, byte-identical
to :func:`url_entry` of each row (tested), or ``None`` when any value is not plain.
"""

from __future__ import annotations

import itertools
import operator
import re
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any, BinaryIO, Final, NamedTuple
from urllib.parse import urlsplit

from .grammar import PRIORITY_TEXTS, decimal_text
from .lastmod import block_lastmods
from .limits import MAX_LOC_LENGTH, MIN_LOC_LENGTH
from .model import (
    CHANGEFREQS,
    Alternate,
    Image,
    InvalidValue,
    News,
    SitemapRef,
    Url,
    Video,
)
from .namespace import IMAGE_NS, NEWS_NS, SITEMAP_NS, VIDEO_NS, XHTML_NS
from .urls import escape
from .w3cdate import written

__all__ = [
    "BASIC_COLUMNS",
    "IMAGE",
    "NAMESPACES",
    "NEWS",
    "SITEMAP_NS",
    "VIDEO",
    "XHTML",
    "BlockFormatter",
    "EntryBlock",
    "dump",
    "dumps",
    "footer",
    "header",
    "iter_index",
    "iter_urlset",
    "sitemap_entry",
    "url_entry",
]


# Bit flags for the extension namespaces an entry uses.
XHTML: Final = 1
IMAGE: Final = 2
VIDEO: Final = 4
NEWS: Final = 8

#: (flag, prefix, URI) in the order they are declared on the root.
NAMESPACES: Final = (
    (XHTML, "xhtml", XHTML_NS),
    (IMAGE, "image", IMAGE_NS),
    (VIDEO, "video", VIDEO_NS),
    (NEWS, "news", NEWS_NS),
)

_DECL: Final = '<?xml version="1.0" encoding="UTF-8"?>\n'


def header(root: str = "urlset", namespaces: int = 0, stylesheet: str | None = None) -> str:
    """The document's start: declaration, optional stylesheet PI, root start tag."""
    parts = [_DECL]
    if stylesheet:
        parts.append(f'<?xml-stylesheet type="text/xsl" href="{escape(stylesheet)}"?>\n')
    parts.append(f'<{root} xmlns="{SITEMAP_NS}"')
    for flag, prefix, uri in NAMESPACES:
        if namespaces & flag:
            parts.append(f' xmlns:{prefix}="{uri}"')
    parts.append(">\n")
    return "".join(parts)


def footer(root: str = "urlset") -> str:
    """The document's end tag and final newline."""
    return f"</{root}>\n"


def _yes_no(value: bool) -> str:
    return "yes" if value else "no"


def _link(a: Alternate) -> str:
    """An alternate without hreflang (a mobile URL, an app link) or with a media query."""
    attrs = "" if a.hreflang is None else f' hreflang="{a.hreflang}"'
    if a.media is not None:
        attrs += f' media="{escape(a.media)}"'
    return f'<xhtml:link rel="alternate"{attrs} href="{escape(a.href)}"/>'


def _image(i: Image, keep_deprecated: bool) -> str:
    s = f"<image:image><image:loc>{escape(i.loc)}</image:loc>"
    if keep_deprecated:
        if i.caption is not None:
            s += f"<image:caption>{escape(i.caption)}</image:caption>"
        if i.geo_location is not None:
            s += f"<image:geo_location>{escape(i.geo_location)}</image:geo_location>"
        if i.title is not None:
            s += f"<image:title>{escape(i.title)}</image:title>"
        if i.license is not None:
            s += f"<image:license>{escape(i.license)}</image:license>"
    return s + "</image:image>"


#: The optional one-value elements of ``<video:video>`` before its tags, in the schema's
#: order, each with how its value is written.
_VIDEO_SCALARS: Final[tuple[tuple[str, Callable[[Any], str]], ...]] = (
    ("content_loc", escape),
    ("player_loc", escape),
    ("duration", str),
    ("expiration_date", str),
    ("rating", decimal_text),
    ("view_count", str),
    ("publication_date", str),
)


def _allow_deny(tag: str, relationship: str, items: tuple[str, ...]) -> str:
    """``<video:restriction>`` or ``<video:platform>``: a relationship and a list of codes."""
    return f'<video:{tag} relationship="{relationship}">{" ".join(items)}</video:{tag}>'


def _video(v: Video) -> str:
    # sitemap-video.xsd sequence: thumbnail_loc, title, description, content_loc,
    # player_loc, duration, expiration_date, rating, content_segment_loc, view_count,
    # publication_date, tag, category, family_friendly, restriction, gallery_loc,
    # price, requires_subscription, uploader, tvshow, platform, live, id.
    p = [
        "<video:video>",
        f"<video:thumbnail_loc>{escape(v.thumbnail_loc)}</video:thumbnail_loc>",
        f"<video:title>{escape(v.title)}</video:title>",
        f"<video:description>{escape(v.description)}</video:description>",
    ]
    for name, text in _VIDEO_SCALARS:
        value = getattr(v, name)
        if value is not None:
            p.append(f"<video:{name}>{text(value)}</video:{name}>")
    p.extend(f"<video:tag>{escape(t)}</video:tag>" for t in v.tags)
    if v.family_friendly is not None:
        p.append(f"<video:family_friendly>{_yes_no(v.family_friendly)}</video:family_friendly>")
    if v.restriction is not None:
        p.append(_allow_deny("restriction", v.restriction.relationship, v.restriction.countries))
    if v.requires_subscription is not None:
        p.append(
            f"<video:requires_subscription>{_yes_no(v.requires_subscription)}"
            "</video:requires_subscription>"
        )
    if v.uploader is not None:
        info = f' info="{escape(v.uploader_info)}"' if v.uploader_info is not None else ""
        p.append(f"<video:uploader{info}>{escape(v.uploader)}</video:uploader>")
    if v.platform is not None:
        p.append(_allow_deny("platform", v.platform.relationship, v.platform.platforms))
    if v.live is not None:
        p.append(f"<video:live>{_yes_no(v.live)}</video:live>")
    p.append("</video:video>")
    return "".join(p)


def _news(n: News) -> str:
    return (
        "<news:news><news:publication>"
        f"<news:name>{escape(n.publication_name)}</news:name>"
        f"<news:language>{n.publication_language}</news:language>"
        "</news:publication>"
        f"<news:publication_date>{n.publication_date}</news:publication_date>"
        f"<news:title>{escape(n.title)}</news:title>"
        "</news:news>"
    )


def url_entry(
    url: Url, *, keep_deprecated: bool = False, lastmod: str | bool | None = True
) -> tuple[str, int]:
    """One ``<url>`` line and the extension namespaces it uses (bit flags).

    ``lastmod`` replaces the URL's own (``True``: keep it; ``None``: leave it out); it is
    written in the writer's form (``format_lastmod``): a reader's record may hold a
    lastmod as its document wrote it, and one the writer cannot emit (``2024-05``, a time
    without zone) raises :class:`~sitemapkit.core.model.InvalidValue`.
    """
    s = f"<url><loc>{escape(url.loc)}</loc>"
    stamp = url.lastmod if lastmod is True else lastmod
    if stamp is not None and stamp is not False:
        s += f"<lastmod>{_lastmod(str(stamp), 'lastmod')}</lastmod>"
    if url.changefreq is not None:
        s += f"<changefreq>{url.changefreq}</changefreq>"
    if url.priority is not None:
        s += f"<priority>{decimal_text(url.priority)}</priority>"  # a model's: checked
    ns = 0
    if url.alternates:
        ns |= XHTML
        s += "".join(
            f'<xhtml:link rel="alternate" hreflang="{a.hreflang}" href="{escape(a.href)}"/>'
            if a.media is None and a.hreflang is not None
            else _link(a)
            for a in url.alternates
        )
    if url.images:
        ns |= IMAGE
        s += "".join(_image(i, keep_deprecated) for i in url.images)
    if url.videos:
        ns |= VIDEO
        s += "".join(_video(v) for v in url.videos)
    if url.news is not None:
        ns |= NEWS
        s += _news(url.news)
    return s + "</url>\n", ns


def _lastmod(text: str, name: str) -> str:
    """A record's lastmod as the writer emits it (see :func:`url_entry`)."""
    try:
        return written(text)
    except ValueError as exc:
        raise InvalidValue(name, str(exc)) from None


def sitemap_entry(ref: SitemapRef) -> str:
    """One ``<sitemap>`` line of an index."""
    if ref.lastmod is None:
        return f"<sitemap><loc>{escape(ref.loc)}</loc></sitemap>\n"
    lastmod = _lastmod(str(ref.lastmod), "sitemap.lastmod")
    return f"<sitemap><loc>{escape(ref.loc)}</loc><lastmod>{lastmod}</lastmod></sitemap>\n"


def iter_urlset(
    urls: Iterable[Url], *, stylesheet: str | None = None, keep_deprecated: bool = False
) -> Iterator[str]:
    """A whole ``<urlset>`` document as chunks (the entries are held to know the namespaces)."""
    entries = [url_entry(u, keep_deprecated=keep_deprecated) for u in urls]
    ns = 0
    for _, flags in entries:
        ns |= flags
    yield header("urlset", ns, stylesheet)
    for text, _ in entries:
        yield text
    yield footer("urlset")


def iter_index(refs: Iterable[SitemapRef], *, stylesheet: str | None = None) -> Iterator[str]:
    """A whole ``<sitemapindex>`` document as chunks."""
    yield header("sitemapindex", 0, stylesheet)
    for ref in refs:
        yield sitemap_entry(ref)
    yield footer("sitemapindex")


def dumps(
    items: Iterable[Url] | Iterable[SitemapRef],
    *,
    stylesheet: str | None = None,
    keep_deprecated: bool = False,
) -> bytes:
    """Serialize one small document: ``Url`` items give a urlset, ``SitemapRef`` an index.

    No limits are applied here; use :class:`sitemapkit.SitemapWriter` for output that
    may need splitting.

    >>> dumps([Url("https://example.com/")])[:38]
    b'<?xml version="1.0" encoding="UTF-8"?>'
    """
    seq = list(items)
    if seq and all(isinstance(i, SitemapRef) for i in seq):
        chunks = iter_index(seq, stylesheet=stylesheet)  # type: ignore[arg-type]
    elif all(isinstance(i, Url) for i in seq):
        chunks = iter_urlset(seq, stylesheet=stylesheet, keep_deprecated=keep_deprecated)  # type: ignore[arg-type]
    else:
        raise TypeError("dumps() takes only Url objects or only SitemapRef objects")
    return "".join(chunks).encode("utf-8")


def dump(
    items: Iterable[Url] | Iterable[SitemapRef],
    fp: BinaryIO,
    *,
    stylesheet: str | None = None,
    keep_deprecated: bool = False,
) -> None:
    """Serialize one small document into a binary file object (see :func:`dumps`)."""
    fp.write(dumps(items, stylesheet=stylesheet, keep_deprecated=keep_deprecated))


# -- the fast path: blocks of plain rows -------------------------------------------

#: The columns of a plain row, in the order their elements stand in ``<url>``.
BASIC_COLUMNS: Final = ("loc", "lastmod", "changefreq", "priority")
_OPEN: Final = {c: f"<{c}>" for c in BASIC_COLUMNS}
# URI characters (RFC 3986 unreserved, reserved and "%"), and the line end
_URI_BYTES: Final = (
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%\n"
)
_HIGH_BYTES: Final = bytes(range(128, 256))
_BAD_PCT: Final = re.compile(rb"%(?![0-9A-Fa-f]{2})")
# what escape() makes of the URI characters it changes ("&" first, as it does)
_LOC_ESCAPES: Final = tuple(
    (c.encode(), escape(c).encode())
    for c in sorted(set(_URI_BYTES.decode()) - {"\n"}, key=lambda c: (c != "&", c))
    if escape(c) != c
)
_PRIORITIES: Final = frozenset(p.encode() for p in PRIORITY_TEXTS)
_CHANGEFREQS: Final = frozenset(c.encode() for c in CHANGEFREQS)
#: The columns whose values are among a few (checked for each block).
_DOMAINS: Final = {"changefreq": _CHANGEFREQS, "priority": _PRIORITIES}
_HEAD: Final = b"<url><loc>"


class EntryBlock(NamedTuple):
    """Ready entry lines, how many, and ``hash()`` of each loc as escaped in the file.

    ``lastmods``: each entry's lastmod as written, in order, ``b""`` for an entry without
    one (``None``: the rows have no lastmod column).
    """

    data: bytes
    entries: int
    hashes: array[int]
    lastmods: list[bytes] | None = None


class BlockFormatter:
    """Entry lines for blocks of plain rows of ``columns`` (a subset of :data:`BASIC_COLUMNS`).

    ``base_url`` is the writer's (ending in ``/``); ``txt``: a text sitemap's lines.
    Pure, so it also runs in forked processes.
    """

    def __init__(
        self, base_url: str, columns: list[str], *, txt: bool = False, csv: bool = False
    ) -> None:
        self.columns = columns
        self.txt = txt
        # csv: rows of a CSV file, where a block whose every field is quoted (csv.QUOTE_ALL,
        # spreadsheet exports) is the same block unquoted when no field holds a quote, a
        # comma or a line break (anything else is the csv module's to read)
        self.quoted = (
            re.compile(rb'(?:"[^",\n]*+"(?:,"[^",\n]*+"){%d}\n)++' % (len(columns) - 1))
            if csv
            else None
        )
        # Every line must start with the base URL (lowercase scheme and host, so the
        # slow path would not change it) whether or not locations are checked:
        # anything else takes the slow path.
        self.base = base_url.encode()
        self.prefix = b"\n" + self.base
        # Dot segments ("/./", "/../") may climb out of a base folder, which the row
        # path's location check finds; under a root base every path stays inside.
        self.dots = urlsplit(base_url).path != "/"
        order = [c for c in BASIC_COLUMNS if c in columns]
        # The free columns (loc, lastmod) come first in the element order; each entry's
        # end, from the last free value's end tag to the next entry's <url><loc>, is one
        # of a few byte strings, as changefreq and priority take a few values (checked
        # in format()): a join of 4 parts an entry instead of 9 (a third of the time).
        free = [c for c in order if c not in _DOMAINS]
        self.free = free
        self.fixed = [c for c in order if c in _DOMAINS]
        # [LOC, </loc><lastmod>, LASTMOD, </lastmod>...</url>\n<url><loc>] for each entry
        parts = [b""] * (2 * len(free))
        for i, c in enumerate(free[:-1]):
            parts[2 * i + 1] = f"</{c}>{_OPEN[free[i + 1]]}".encode()
        self.template = parts
        # The end for the fixed values: ends[a] with one fixed column, ends[a][b] with two;
        # an empty field (b"") has no element. A value outside its domain has no end: the
        # lookup's KeyError is the check.
        self.ends: dict[bytes, Any] = {}
        end_of: dict[tuple[bytes, ...], bytes] = {}
        for values in itertools.product(*([b"", *sorted(_DOMAINS[c])] for c in self.fixed)):
            inner = b"".join(
                b"<%s>%s</%s>" % (c.encode(), v, c.encode())
                for c, v in zip(self.fixed, values, strict=True)
                if v
            )
            end = b"</%s>%s</url>\n%s" % (free[-1].encode(), inner, _HEAD)
            end_of[values] = end
            if len(values) == 1:
                self.ends[values[0]] = end
            elif len(values) == 2:
                self.ends.setdefault(values[0], {})[values[1]] = end
        parts[-1] = end_of[()] if not self.fixed else b""

    def format(self, data: bytes) -> EntryBlock | None:
        """Entry lines, their count and loc hashes for a block of whole input lines.

        ``None`` when a value is not plain: the caller then takes the row path (which
        also reports what is wrong, with its line).

        Works on the UTF-8 bytes. URL checks, percent-encoding and escaping run on the
        whole block at once: the other columns may only hold characters that none of
        these steps touch, and they are checked to hold exactly that afterwards.
        """
        if b"\r" in data:  # lines that end in CR LF (Windows, Python's csv module) end in LF
            data = data.replace(b"\r\n", b"\n")
            if b"\r" in data:  # a CR that ends no line is the row path's
                return None
        if b'"' in data:
            if self.quoted is None or self.quoted.fullmatch(data) is None:
                return None
            data = data.replace(b'"', b"")
        n = data.count(b"\n")
        # blank lines fail the check that every line starts with the base URL, below
        if not n or data[0] == 10 or data[-1] != 10:
            return None
        # only escapes of the input can be broken: the ones made here are whole
        escapes = b"%" in data
        # what is not a URI character must be the UTF-8 of non-ASCII characters
        other = data.translate(None, _URI_BYTES)
        if other:
            if other.translate(None, _HIGH_BYTES):
                return None
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                return None
            # IRI -> URI: each byte of a non-ASCII character's UTF-8 is percent-encoded
            # (a pass a byte: a one-byte replace is faster than one of a character's bytes)
            for byte in set(other):
                data = data.replace(bytes((byte,)), b"%%%02X" % byte)
        if (
            (escapes and _BAD_PCT.search(data) is not None)
            or (self.dots and b"/." in data)
            or not data.startswith(self.base)
            or data.count(self.prefix) != n - 1
        ):
            return None
        if not self.txt:
            for char, ref in _LOC_ESCAPES:
                if char in data:
                    data = data.replace(char, ref)
        ncol = len(self.columns)
        fields = data.split(b"\n") if ncol == 1 else data.replace(b"\n", b",").split(b",")
        if len(fields) != n * ncol + 1:
            return None
        fields.pop()  # after the last newline
        cols = {c: fields[i::ncol] for i, c in enumerate(self.columns)}
        loc_list = cols["loc"]
        # escaped lengths are an upper bound of the real ones: exact checks on the row path;
        # every loc starts with the base URL, so none is shorter than it
        if max(map(len, loc_list)) > MAX_LOC_LENGTH or (
            len(self.base) < MIN_LOC_LENGTH and min(map(len, loc_list)) < MIN_LOC_LENGTH
        ):
            return None
        # from a list: array() of an iterator appends item by item (twice the time)
        hashes = array("q", list(map(hash, loc_list)))
        if self.txt:
            return EntryBlock(data if ncol == 1 else b"\n".join(loc_list) + b"\n", n, hashes)
        values: dict[str, list[bytes]] = {"loc": loc_list}
        bare = False  # an entry without a lastmod: its empty element is dropped below
        if "lastmod" in cols:
            lm = block_lastmods(cols["lastmod"])
            if lm is None:
                return None
            values["lastmod"] = lm
            bare = b"" in lm
        w = len(self.template)
        out = self.template * n
        for i, c in enumerate(self.free):
            out[2 * i :: w] = values[c]
        fixed = [cols[c] for c in self.fixed]
        try:  # a changefreq or priority outside its few values has no end: a KeyError
            if len(fixed) == 1:
                out[w - 1 :: w] = map(self.ends.__getitem__, fixed[0])
            elif fixed:
                by_first = map(self.ends.__getitem__, fixed[0])
                out[w - 1 :: w] = map(operator.getitem, by_first, fixed[1])
        except KeyError:
            return None
        out[-1] = out[-1][: -len(_HEAD)]  # no entry after the last
        data = _HEAD + b"".join(out)
        if bare:  # (a loc holds no "<": escaped)
            data = data.replace(b"<lastmod></lastmod>", b"")
        return EntryBlock(data, n, hashes, values.get("lastmod"))
