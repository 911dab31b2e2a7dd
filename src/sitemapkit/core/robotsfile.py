"""core: add or check ``Sitemap:`` lines in a robots.txt without disturbing the rest. Pure.

The file is edited as text with every byte kept: a leading UTF-8 BOM, the line endings
(LF, CR or CRLF, RFC 9309 §2.2 "EOL = %x0D / %x0A / %x0D.0A"), comments, order, and even
bytes that are not UTF-8 (decoded with ``surrogateescape`` and written back as they were).
Missing URLs are appended as one block, in the file's own line ending, after a blank line
(``spec/DISCOVERY.md`` §1, writer rules: "``Sitemap: <absolute URL>`` lines (capital S,
one space) … separated from groups by a blank line; never relative; no trailing
comments"). A file that ends with ``Sitemap:`` lines gets the new ones right after them.

Existing records are recognised as leniently as Google reads them (RB002, RB008): the
field name in any case, white space around ``:``, a trailing ``# comment``, and the typos
``Site-map:`` and ``Sitemap <URL>`` (no colon). They count as present (Google honours
them) but are reported in ``notes``; they are never rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from .urls import iri_to_uri, validate_loc

__all__ = [
    "MAX_ROBOTS_BYTES",
    "RobotsEdit",
    "SitemapLine",
    "add_sitemaps",
    "check_sitemap_url",
    "sitemap_lines",
]

#: RFC 9309 §2.5: crawlers "SHOULD … parse at least 500 kibibytes"; Google reads no more
#: (RB009). A line appended beyond this would be invisible to Google, so it goes on top.
MAX_ROBOTS_BYTES: Final = 500 * 1024

_BOM: Final = b"\xef\xbb\xbf"
_LINE: Final = re.compile(r"([^\r\n]*)(\r\n|\r|\n|\Z)")
# google/robotstxt KeyIsSitemap accepts "sitemap" and the frequent typo "site-map".
_KEY: Final = re.compile(r"site-?map", re.IGNORECASE)
#: An absolute URL: scheme, "://" and the first character of a host.
ABSOLUTE: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#\s]")


@dataclass(frozen=True, slots=True)
class SitemapLine:
    """A ``Sitemap:`` record of a robots.txt: 1-based line number, key and value as written.

    ``typo`` is true for spellings Google tolerates but the protocol does not know
    (``Site-map:``, a missing colon).
    """

    line: int
    key: str
    value: str
    typo: bool

    @property
    def url(self) -> str | None:
        """The value as an RFC 3986 URI when it is an absolute http(s) URL, else ``None``."""
        if ABSOLUTE.match(self.value) is None:
            return None
        try:
            uri = iri_to_uri(self.value)
        except ValueError:
            return None
        return uri if uri.startswith(("http://", "https://")) else None


@dataclass(frozen=True, slots=True)
class RobotsEdit:
    """The result of :func:`add_sitemaps`.

    ``data`` is the new file (``is`` the input when nothing was missing); ``added`` the
    URLs that were missing and are now appended; ``present`` pairs each URL already listed
    with the line that lists it; ``notes`` warns about existing lines that crawlers may
    ignore (relative URLs, typos), which are left as they are.
    """

    data: bytes
    added: tuple[str, ...]
    present: tuple[tuple[str, int], ...]
    notes: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return bool(self.added)


def check_sitemap_url(url: str) -> str:
    """The RFC 3986 form of a sitemap URL for a ``Sitemap:`` line; ``ValueError`` if unfit.

    sitemaps.org: "<sitemap_location> should be the complete URL to the Sitemap"; Google
    ignores relative values (RB003). A ``#`` would start a comment (RB007).

    >>> check_sitemap_url("https://Example.com/küche/sitemap.xml")
    'https://example.com/k%C3%BCche/sitemap.xml'
    """
    text = url.strip()
    if ABSOLUTE.match(text) is None:
        raise ValueError(
            f"{url!r} is not an absolute URL; robots.txt needs the complete URL, "
            "e.g. https://www.example.com/sitemap.xml (Google ignores relative ones)"
        )
    uri = validate_loc(iri_to_uri(text), "sitemap URL")
    if "#" in uri:
        raise ValueError(f"{url!r} holds '#', which robots.txt readers take as a comment start")
    return uri


def split_record(line: str) -> tuple[str, str, bool] | None:
    """``(key, value, typo)`` of a non-empty, comment-free robots.txt line, or None.

    google/robotstxt GetKeyAndValueFrom: the key ends at the first ``:``; without one,
    a line of exactly two white-space separated words is read as ``key value``. ``typo``
    says the colon was missing (or was the URL's). The one record splitter: the reader
    (:mod:`sitemapkit.core.robots`) and this editor both use it.
    """
    key, colon, value = line.partition(":")
    if colon:
        # "Sitemap https://x/s.xml": the first colon is the URL's; no ":" after the key.
        words = key.split()
        if len(words) == 2 and ABSOLUTE.match(words[1] + ":" + value):
            return words[0], words[1] + ":" + value.strip(), True
        return key.strip(), value.strip(), False
    words = line.split()
    if len(words) == 2:
        return words[0], words[1], True
    return None


def _sitemap_record(line: str) -> tuple[str, str, bool] | None:
    """``(key, value, typo)`` of a sitemap record (comment already removed), or None."""
    record = split_record(line)
    if record is None or _KEY.fullmatch(record[0]) is None:
        return None
    key, value, typo = record
    return key, value, typo or key.lower() != "sitemap"


def _decode(data: bytes) -> tuple[bytes, str]:
    bom = _BOM if data.startswith(_BOM) else b""
    return bom, data[len(bom) :].decode("utf-8", "surrogateescape")


def sitemap_lines(data: bytes | str) -> list[SitemapLine]:
    """Every ``Sitemap:`` record of a robots.txt, in file order (RB002, RB005, RB008).

    >>> [(s.line, s.value, s.typo) for s in sitemap_lines(
    ...     "User-agent: *\\r\\nSITEMAP : https://a.example/s.xml # x\\nSite-map: /b.xml")]
    [(2, 'https://a.example/s.xml', False), (3, '/b.xml', True)]
    """
    text = data.removeprefix("\ufeff") if isinstance(data, str) else _decode(data)[1]
    found = []
    for number, (content, _eol) in enumerate(_iter_lines(text), 1):
        record = _sitemap_record(content.partition("#")[0].strip())
        if record is not None:
            found.append(SitemapLine(number, *record))
    return found


def _iter_lines(text: str) -> Iterable[tuple[str, str]]:
    for m in _LINE.finditer(text):
        content, eol = m.group(1), m.group(2)
        if not content and not eol:
            return  # the empty match at the very end
        yield content, eol


def add_sitemaps(data: bytes, urls: Iterable[str]) -> RobotsEdit:
    """Append a ``Sitemap:`` line for each URL the robots.txt ``data`` does not list yet.

    URLs are checked with :func:`check_sitemap_url` first (``ValueError``). Existing
    records match when they name the same URI (scheme and host compared without case).
    When the file is already :data:`MAX_ROBOTS_BYTES` long, the lines go at the top
    instead, where Google still reads them (RB009).

    >>> edit = add_sitemaps(b"User-agent: *\\r\\nDisallow:\\r\\n", ["https://example.com/s.xml"])
    >>> edit.data
    b'User-agent: *\\r\\nDisallow:\\r\\n\\r\\nSitemap: https://example.com/s.xml\\r\\n'
    """
    wanted = list(dict.fromkeys(check_sitemap_url(u) for u in urls))
    bom, text = _decode(data)
    lines = list(_iter_lines(text))
    records = sitemap_lines(text)
    notes: list[str] = []
    listed: dict[str, int] = {}
    for rec in records:
        uri = rec.url
        if uri is None:
            notes.append(
                f"line {rec.line}: sitemap URL {rec.value!r} is not an absolute http(s) URL; "
                "crawlers ignore it (write the complete URL)"
            )
            continue
        if rec.typo:
            what = (
                f"{rec.key!r} is a misspelling of 'Sitemap'"
                if rec.key.lower() != "sitemap"
                else "the ':' after 'Sitemap' is missing"
            )
            notes.append(
                f"line {rec.line}: {what}; Google tolerates it, other crawlers may not "
                "(write 'Sitemap: <URL>')"
            )
        listed.setdefault(uri, rec.line)
    present = tuple((u, listed[u]) for u in wanted if u in listed)
    missing = tuple(u for u in wanted if u not in listed)
    if not missing:
        return RobotsEdit(data, (), present, tuple(notes))
    eol = next((e for _, e in lines if e), "\n")
    block = "".join(f"Sitemap: {u}{eol}" for u in missing)
    sitemap_at = {rec.line for rec in records}
    if len(data) >= MAX_ROBOTS_BYTES:
        first_is_sitemap = bool(lines) and 1 in sitemap_at
        first_blank = bool(lines) and not lines[0][0].strip()
        sep = "" if not lines or first_is_sitemap or first_blank else eol
        new_text = block + sep + text
        notes.append(
            f"the file is {len(data):,} bytes long and Google reads only the first "
            f"{MAX_ROBOTS_BYTES:,}: the Sitemap: lines were put at the top"
        )
    else:
        if not text:
            sep = ""
        elif not lines[-1][1]:  # no line break at the end of the file
            sep = eol if len(lines) in sitemap_at else eol + eol
        elif not lines[-1][0].strip() or len(lines) in sitemap_at:
            sep = ""  # already separated by a blank line, or joins the Sitemap: block
        else:
            sep = eol
        new_text = text + sep + block
    new = bom + new_text.encode("utf-8", "surrogateescape")
    return RobotsEdit(new, missing, present, tuple(notes))
