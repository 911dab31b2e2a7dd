"""core: model objects built from values a reader already checked. Pure.

The readers (the scanner's fast path, the entry readers) check each value once; building a
:class:`~.model.Url` again would check it twice. These builders set the slots directly, in
the order :func:`dataclasses.fields` gives, so they follow the classes as they change.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

from .model import Alternate, Image, News, SitemapRef, Url, Video

__all__ = ["kept_dates", "trusted_image", "trusted_news", "trusted_ref", "trusted_url"]

_new = object.__new__


def _setters(cls: type) -> tuple[Any, ...]:
    """The slot setters of ``cls``'s fields, in declaration order (the order __init__ takes)."""
    return tuple(cls.__dict__[f.name].__set__ for f in dataclasses.fields(cls))


_URL_SET: Final = _setters(Url)
_REF_SET: Final = _setters(SitemapRef)
_IMAGE_SET: Final = _setters(Image)
_NEWS_SET: Final = _setters(News)
_VIDEO_DATES: Final = {
    f.name: Video.__dict__[f.name].__set__
    for f in dataclasses.fields(Video)
    if f.name in ("publication_date", "expiration_date")
}


def trusted_url(
    loc: str,
    lastmod: str | None = None,
    changefreq: str | None = None,
    priority: float | None = None,
    images: tuple[Image, ...] = (),
    videos: tuple[Video, ...] = (),
    news: News | None = None,
    alternates: tuple[Alternate, ...] = (),
) -> Url:
    """A :class:`Url` of values already in their checked, normalised form (not checked again).

    >>> url = "https://example.com/"
    >>> trusted_url(url, "2024-05-01") == Url(url, lastmod="2024-05-01")
    True
    """
    url = _new(Url)
    s_loc, s_lastmod, s_cf, s_pr, s_img, s_vid, s_news, s_alt = _URL_SET
    s_loc(url, loc)
    s_lastmod(url, lastmod)
    s_cf(url, changefreq)
    s_pr(url, priority)
    s_img(url, images)
    s_vid(url, videos)
    s_news(url, news)
    s_alt(url, alternates)
    return url


def trusted_ref(loc: str, lastmod: str | None = None) -> SitemapRef:
    """A :class:`SitemapRef` of values already checked (not checked again)."""
    ref = _new(SitemapRef)
    _REF_SET[0](ref, loc)
    _REF_SET[1](ref, lastmod)
    return ref


def trusted_news(name: str, language: str, date: str, title: str) -> News:
    """A :class:`News` of values already checked (a reader keeps ``en-US`` this way)."""
    news = _new(News)
    for setter, value in zip(_NEWS_SET, (name, language, date, title), strict=True):
        setter(news, value)
    return news


def trusted_image(
    loc: str,
    caption: str | None = None,
    geo_location: str | None = None,
    title: str | None = None,
    license: str | None = None,
) -> Image:
    """An :class:`Image` of values already checked (not checked again)."""
    image = _new(Image)
    for setter, value in zip(_IMAGE_SET, (loc, caption, geo_location, title, license), strict=True):
        setter(image, value)
    return image


def kept_dates(video: Video, dates: dict[str, str]) -> Video:
    """``video``, just built by a reader, with its dates as the document wrote them
    (``publication_date``, ``expiration_date``: the model holds only the writer's forms).

    >>> v = Video("https://e.com/t.jpg", "T", "D", "https://e.com/v.mp4")
    >>> kept_dates(v, {"publication_date": "2024-05"}).publication_date
    '2024-05'
    """
    for name, value in dates.items():
        _VIDEO_DATES[name](video, value)
    return video
