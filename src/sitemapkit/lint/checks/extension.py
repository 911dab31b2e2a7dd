"""lint.checks: the entry rules of the extensions (images, videos, news, hreflang). Pure.

Decides, over the records (the reader and the schemas decide the rest of each family):

* IMG604 retired image tags, IMG606 an image repeated under one URL;
* VID706 video URLs that are the page or a web page, VID707 unassigned country codes,
  VID711 expired or future dates, VID713 an uploader on another domain;
* NEWS804 unassigned language codes, NEWS806 the article's age, NEWS809 title heuristics;
* HRE902 language and region codes, HRE904 a missing self-reference, HRE906 one hreflang
  for two pages, HRE907 x-default given twice (the set half, and HRE905, are :mod:`.set`'s).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from operator import attrgetter
from typing import Final

from ...core.finding import Severity, clip
from ...core.model import Url, Video
from ...core.urls import Origin, normalize
from ..iso import COUNTRIES, LANGUAGES
from .context import CHECKED
from .date import instant_bounds
from .position import element_path
from .state import AlternateEntry, Batch, EntryState

__all__ = ["check_extensions", "hreflang", "images", "news", "videos"]

_PAGE_EXTENSIONS: Final = (".html", ".htm", ".php", ".asp", ".aspx", ".jsp", ".shtml", ".swf")
_BYLINE: Final = re.compile(r"(?:^|[|\-–—:]\s*)by\s+[A-Z][\w.'-]+", re.I)
_TITLE_DATE: Final = re.compile(
    r"\b(?:19|20)[0-9]{2}-[0-9]{2}-[0-9]{2}\b|\b[0-9]{1,2}/[0-9]{1,2}/(?:19|20)?[0-9]{2}\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? [0-9]{1,2}, "
    r"(?:19|20)[0-9]{2}\b",
    re.I,
)
_IMAGES: Final = attrgetter("images")
_VIDEOS: Final = attrgetter("videos")
_PUBLISHED: Final = element_path("news:news", "news:publication_date")
_NEWS: Final = attrgetter("news")
_ALTERNATES: Final = attrgetter("alternates")


def check_extensions(st: EntryState, batch: Batch[Url]) -> None:
    """The checks of each <url> of the batch that has images, videos, news or alternates."""
    urls = batch.records
    for getter, check in (
        (_IMAGES, images),
        (_VIDEOS, videos),
        (_NEWS, news),
        (_ALTERNATES, hreflang),
    ):
        if any(map(getter, urls)):
            for i, u in enumerate(urls):
                if getter(u):
                    check(st, batch, i, u)


@CHECKED.decides("IMG604", "IMG606")
def images(st: EntryState, batch: Batch[Url], i: int, u: Url) -> None:
    """IMG604 retired image tags, IMG606 an image repeated under one URL."""
    seen: set[str] = set()
    for k, image in enumerate(u.images, 1):
        if image.loc in seen:
            st.emit(
                "IMG606",
                f"Image {clip(image.loc)!r} is listed twice for this URL; keep one",
                batch,
                i,
                element=f"image:image[{k}]",
            )
        seen.add(image.loc)
        if image.has_deprecated:
            tags = [
                n
                for n in ("caption", "geo_location", "title", "license")
                if getattr(image, n) is not None
            ]
            st.emit(
                "IMG604",
                f"<image:{tags[0]}> was retired by Google in 2022 and has no effect; remove "
                + ", ".join(f"<image:{t}>" for t in tags),
                batch,
                i,
                element=element_path(f"image:image[{k}]", f"image:{tags[0]}"),
            )


def _same_site(a: str, b: str) -> bool:
    a, b = a.removeprefix("www."), b.removeprefix("www.")
    return a == b or a.endswith("." + b) or b.endswith("." + a)


class _VideoEmit:
    """Findings of one ``<video:video>`` of an entry, each at its child element."""

    __slots__ = ("batch", "i", "st", "video")

    def __init__(self, st: EntryState, batch: Batch[Url], i: int, k: int) -> None:
        self.st, self.batch, self.i, self.video = st, batch, i, f"video:video[{k}]"

    def __call__(self, rule: str, message: str, child: str, attr: str | None = None) -> None:
        element = element_path(self.video, f"video:{child}", attr=attr)
        self.st.emit(rule, message, self.batch, self.i, element=element)


@CHECKED.decides("VID706", "VID707", "VID711", "VID713")
def videos(st: EntryState, batch: Batch[Url], i: int, u: Url) -> None:
    """VID706 video vs page URLs, VID707 country codes, VID711 dates, VID713 uploader."""
    page = normalize(u.loc)
    for k, v in enumerate(u.videos, 1):
        say = _VideoEmit(st, batch, i, k)
        for name in ("content_loc", "player_loc"):
            value = getattr(v, name)
            if value is not None and normalize(value) == page:
                kind = "file" if name == "content_loc" else "player"
                say(
                    "VID706",
                    f"<video:{name}> is the page's own URL; it must point to the video {kind}",
                    name,
                )
        content = v.content_loc
        if content is not None:
            path = content.split("?", 1)[0].split("#", 1)[0].lower()
            if path.endswith(_PAGE_EXTENSIONS):
                say(
                    "VID706",
                    f"<video:content_loc> {clip(content)!r} looks like a web page; it "
                    "must point to the media file (put a player page in <video:player_loc>)",
                    "content_loc",
                )
        if v.restriction is not None:
            bad = [c for c in v.restriction.countries if c not in COUNTRIES]
            if bad:
                say(
                    "VID707",
                    f"<video:restriction> lists {', '.join(map(repr, bad))}, not "
                    "assigned ISO 3166-1 alpha-2 codes (e.g. GB, not UK)",
                    "restriction",
                )
        if v.uploader_info is not None:
            try:
                info, where = Origin.of(v.uploader_info).host, Origin.of(u.loc).host
            except ValueError:
                info = where = ""
            if info and not _same_site(info, where):
                say(
                    "VID713",
                    f"The info URL of <video:uploader> is on {info!r}, not on the "
                    f"page's domain {where!r}",
                    "uploader",
                    attr="info",
                )
        if st.now is not None:
            _video_dates(say, v, st.now, st.now + st.ctx.future_tolerance)


def _video_dates(say: _VideoEmit, v: Video, now: dt.datetime, future: dt.datetime) -> None:
    expires = v.expiration_date
    if isinstance(expires, str):
        bounds = instant_bounds(expires)
        if bounds is not None and bounds[1] < now:
            say(
                "VID711",
                f"<video:expiration_date> {expires!r} has passed; the video will "
                "not be shown. Remove it or update the date",
                "expiration_date",
            )
    published = v.publication_date
    if isinstance(published, str):
        bounds = instant_bounds(published)
        if bounds is not None and bounds[0] > future:
            say(
                "VID711",
                f"<video:publication_date> {published!r} lies in the future",
                "publication_date",
            )


@CHECKED.decides("NEWS804", "NEWS806", "NEWS809")
def news(st: EntryState, batch: Batch[Url], i: int, u: Url) -> None:
    """NEWS804 unassigned language codes, NEWS806 article age, NEWS809 title heuristics."""
    news = u.news
    assert news is not None
    lang = news.publication_language
    if len(lang) == 2 and lang not in LANGUAGES:
        st.emit(
            "NEWS804",
            f"<news:language> {lang!r} is not an ISO 639-1 code; use e.g. en, de, fr "
            "(zh-cn / zh-tw for Chinese)",
            batch,
            i,
            element=element_path("news:news", "news:publication", "news:language"),
        )
    now = st.now
    date = news.publication_date
    if now is not None and isinstance(date, str):
        bounds = instant_bounds(date)
        if bounds is not None:
            if bounds[1] < now - dt.timedelta(hours=48):
                st.emit(
                    "NEWS806",
                    f"The article of {date!r} is older than 48 hours; remove it from the "
                    "news sitemap or drop its <news:news>",
                    batch,
                    i,
                    element=_PUBLISHED,
                )
            elif bounds[0] > now + st.ctx.future_tolerance:
                message = f"<news:publication_date> {date!r} lies in the future"
                st.emit("NEWS806", message, batch, i, element=_PUBLISHED)
    title, name = news.title, news.publication_name
    why = ""
    if len(name) >= 3 and name.lower() in title.lower():
        why = f"it contains the publication name {name!r}"
    elif _TITLE_DATE.search(title):
        why = "it contains a date"
    elif _BYLINE.search(title):
        why = "it contains a byline"
    if why:
        st.emit(
            "NEWS809",
            f"<news:title> {clip(title)!r}: {why}; give the article's title as shown on the page",
            batch,
            i,
            element=element_path("news:news", "news:title"),
        )


@functools.lru_cache(maxsize=4096)
def _hreflang_code(code: str) -> tuple[str, Severity | None] | None:
    """Why an hreflang value breaks HRE902, and the severity when it is not the catalogue's
    (``None``), or None; a site uses a few values, each checked once."""
    # A three-letter language or a numeric region is valid BCP 47 that Google does not
    # document: a warning, where a code no list assigns is the catalogue's error.
    result: tuple[str, Severity | None] | None = None
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
            result = (f"{lang!r} is not an ISO 639-1 language code{hint}", None)
        if result is None and region is not None:
            if region.isdigit():
                result = (
                    f"region {region!r} is a UN M.49 code, outside Google's documented "
                    "format (ISO 3166-1 alpha-2)",
                    "warning",
                )
            elif region.upper() not in COUNTRIES:
                fix = " (use GB for the United Kingdom)" if region.upper() == "UK" else ""
                result = (f"region {region!r} is not an ISO 3166-1 alpha-2 code{fix}", None)
    return result


@CHECKED.decides("HRE902", "HRE904", "HRE906", "HRE907")
def hreflang(st: EntryState, batch: Batch[Url], i: int, u: Url) -> None:
    """HRE902 codes, HRE904 self-reference, HRE906 conflicts, HRE907 repeated x-default."""
    # A mobile URL or an app link (no hreflang) is no language version: HRE901 is the
    # reader's finding, and the cluster rules are about language versions only.
    alternates = [a for a in u.alternates if a.hreflang is not None]
    if not alternates:
        return
    page = normalize(u.loc)
    hrefs: dict[str, str] = {}
    x_default = 0
    pairs: set[tuple[str, str]] = set()
    for a in alternates:
        assert a.hreflang is not None
        problem = _hreflang_code(a.hreflang)
        link = f"xhtml:link[@hreflang='{a.hreflang}']" if "'" not in a.hreflang else "xhtml:link"
        if problem is not None:
            message = f"Invalid hreflang {a.hreflang!r}: {problem[0]}"
            at = element_path(link, attr="hreflang")
            st.emit("HRE902", message, batch, i, override=problem[1], element=at)
        lang = a.hreflang.lower()
        href = normalize(a.href)
        pairs.add((lang, href))
        first = hrefs.setdefault(lang, href)
        if first != href:
            st.emit(
                "HRE906",
                f"The hreflang {a.hreflang!r} points to both {clip(first)!r} and "
                f"{clip(href)!r}; one language version per value",
                batch,
                i,
            )
        elif lang == "x-default":
            x_default += 1
    if page not in {href for _, href in pairs}:
        st.emit(
            "HRE904",
            "The <url> has hreflang alternates but does not list itself among them; add "
            f'<xhtml:link rel="alternate" hreflang="…" href="{clip(u.loc)}"/>',
            batch,
            i,
        )
    if x_default > 1:
        st.emit("HRE907", "The <url> lists x-default more than once; keep one", batch, i)
    st.alternates.append(AlternateEntry(u.loc, page, batch.occurrences[i], frozenset(pairs)))
