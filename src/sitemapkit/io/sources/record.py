"""io: records from input rows: CSV columns to :class:`~sitemapkit.Url`, errors with positions.

Bad input raises :class:`~sitemapkit.InputError` naming the file, the line and the field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final
from urllib.parse import quote, unquote

from ...core.model import Alternate, Image, InvalidValue, News, Url, Video
from ...core.serialize import BASIC_COLUMNS
from ...errors import InputError, SitemapError
from .sink import Sink

__all__ = ["CSV_COLUMNS", "add", "alternate_token", "csv_url", "error_at"]

_VIDEO_COLUMNS: Final = (
    "video_thumbnail_loc",
    "video_title",
    "video_description",
    "video_content_loc",
    "video_player_loc",
    "video_duration",
    "video_expiration_date",
    "video_rating",
    "video_view_count",
    "video_publication_date",
    "video_family_friendly",
    "video_requires_subscription",
    "video_uploader",
    "video_uploader_info",
    "video_live",
    "video_tags",
    "video_restriction_allow",
    "video_restriction_deny",
    "video_platform_allow",
    "video_platform_deny",
)
_VIDEO_SET: Final = frozenset(_VIDEO_COLUMNS)
_NEWS_COLUMNS: Final = ("news_name", "news_language", "news_publication_date", "news_title")
#: Every column a CSV input may have; ``loc`` is required.
CSV_COLUMNS: Final = (
    *BASIC_COLUMNS,
    "content_hash",
    "images",
    "alternates",
    "news_name",
    "news_language",
    "news_publication_date",
    "news_title",
    *_VIDEO_COLUMNS,
)


def alternate_token(a: Alternate) -> str:
    """An alternate as the ``alternates`` column holds it (tokens split by white space):
    ``hreflang=URL``; a media query follows the hreflang after ``@``, percent-encoded
    (``@only%20screen%20and%20(max-width:%20640px)=URL``); no hreflang, nothing before ``@``
    or ``=`` (an app link: ``=android-app://…``).

    >>> alternate_token(Alternate("de", "https://example.com/de"))
    'de=https://example.com/de'
    """
    key = a.hreflang or ""
    if a.media is not None:
        key += "@" + quote(a.media, safe="():,/")
    return f"{key}={a.href}"


def _split_ws(text: str) -> list[str]:
    return text.split()


def csv_url(w: Sink, row: dict[str, str]) -> Url:
    def get(k: str) -> str | None:
        v = row.get(k)
        return v if v not in (None, "") and v.strip() else None

    images = tuple(Image(w.resolve(i)) for i in _split_ws(row.get("images") or ""))
    alternates: list[Alternate] = []
    for tok in _split_ws(row.get("alternates") or ""):
        key, sep, href = tok.partition("=")
        if not sep:
            raise InvalidValue("alternates", f"{tok!r} is not hreflang=URL")
        lang, at, media = key.partition("@")
        alternates.append(Alternate(lang or None, w.resolve(href), unquote(media) if at else None))
    news = None
    if row.keys() & _NEWS_COLUMNS and any(get(k) for k in _NEWS_COLUMNS):
        news = News(
            get("news_name") or "",
            get("news_language") or "",
            get("news_publication_date") or "",
            get("news_title") or "",
        )
    videos = []
    if row.keys() & _VIDEO_SET and any(get(k) for k in _VIDEO_COLUMNS):
        kw: dict[str, Any] = {}
        for k in _VIDEO_COLUMNS:
            v = get(k)
            if v is None:
                continue
            key = k[6:]
            if key == "tags":
                kw["tags"] = [t.strip() for t in v.split(",") if t.strip()]
            elif key.startswith(("restriction_", "platform_")):
                what, rel = key.split("_")
                kw[what] = {
                    "relationship": rel,
                    "countries" if what == "restriction" else "platforms": v.split(),
                }
            elif key in ("thumbnail_loc", "content_loc", "player_loc", "uploader_info"):
                kw[key] = w.resolve(v)
            else:
                kw[key] = v
        videos.append(Video(**{"thumbnail_loc": "", "title": "", "description": "", **kw}))
    loc = get("loc")
    if loc is None:
        raise InvalidValue("loc", "is empty")
    return Url(
        w.resolve(loc),
        lastmod=get("lastmod"),
        changefreq=get("changefreq"),
        priority=get("priority"),
        images=images,
        videos=tuple(videos),
        news=news,
        alternates=tuple(alternates),
    )


def error_at(exc: Exception, where: str, line: int, field: str | None = None) -> InputError:
    if isinstance(exc, InvalidValue):
        return InputError(exc.detail, where=where, line=line, field=field or exc.field)
    if isinstance(exc, SitemapError):
        return InputError(
            exc.message, where=where, line=line, field=exc.field or field, hint=exc.hint
        )
    return InputError(str(exc), where=where, line=line, field=field)


def add(
    w: Sink, build: Callable[[], Url], where: str, line: int, content_hash: str | None = None
) -> None:
    try:
        if content_hash:
            w.add(build(), content_hash=content_hash)
        else:
            w.add(build())
    except (ValueError, SitemapError) as exc:
        raise error_at(exc, where, line) from None
