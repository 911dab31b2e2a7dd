"""core: the model, one frozen class per element of the protocol. Pure.

``Url`` ↔ ``<url>``, ``Image`` ↔ ``<image:image>``, ``Video`` ↔ ``<video:video>``,
``News`` ↔ ``<news:news>``, ``Alternate`` ↔ ``<xhtml:link rel="alternate">``,
``SitemapRef`` ↔ ``<sitemap>``. Values are checked and normalised when an object
is built: an invalid value raises :class:`InvalidValue` (a ``ValueError``) naming
the field, the value and the allowed form. ``to_record``/``from_record`` convert
to and from the JSON record shape that ``sitemapkit read`` prints and
``sitemapkit write`` accepts.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar, Final, Literal

from . import limits
from .grammar import APP_LINK, decimal_text
from .urls import check_text, iri_to_uri, is_canonical_loc, validate_loc
from .w3cdate import format_lastmod

__all__ = [
    "CHANGEFREQS",
    "VIDEO_FIELDS",
    "Alternate",
    "Image",
    "InvalidValue",
    "News",
    "SitemapRef",
    "Url",
    "Video",
    "VideoPlatform",
    "VideoRestriction",
    "priority_text",
]

DateLike = str | dt.date | dt.datetime

#: sitemaps.org <changefreq>: "Valid values are: always hourly daily weekly monthly yearly never".
CHANGEFREQS: Final = frozenset(
    ["always", "hourly", "daily", "weekly", "monthly", "yearly", "never"]
)

# Google hreflang: "language-code[-script][-region]" (ISO 639-1, ISO 15924, ISO 3166-1
# alpha-2), or x-default. 3-letter languages and UN M.49 regions are BCP 47 and kept.
_HREFLANG: Final = re.compile(
    r"x-default|[A-Za-z]{2,3}(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|[0-9]{3}))?", re.ASCII
)
# Google News: "The language of your publication. Use an ISO 639 language code
# (two or three letters)"; zh-cn and zh-tw for Chinese.
_NEWS_LANGUAGE: Final = re.compile(r"zh-cn|zh-tw|[a-z]{2,3}", re.ASCII)
_COUNTRY: Final = re.compile(r"[A-Z]{2}", re.ASCII)
_PLATFORMS: Final = ("web", "mobile", "tv")


class InvalidValue(ValueError):
    """A model field got a value outside its allowed form; ``field`` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.detail = message


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)


def _loc(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise InvalidValue(name, f"expected a URL string, got {type(value).__name__}")
    if is_canonical_loc(value):
        return value
    try:
        # control characters are percent-encoded like any other character URIs forbid
        return validate_loc(iri_to_uri(value), "URL")
    except UnicodeEncodeError:
        raise InvalidValue(name, f"{value!r} holds a lone surrogate: not text") from None
    except ValueError as exc:
        raise InvalidValue(name, str(exc)) from None


def _opt_loc(value: object, name: str) -> str | None:
    return None if value is None else _loc(value, name)


def _date(value: DateLike | None, name: str) -> str | None:
    if value is None:
        return None
    try:
        return format_lastmod(value)
    except (ValueError, TypeError) as exc:
        raise InvalidValue(name, str(exc)) from None


def _text(value: object, name: str, *, required: bool = True, max_len: int | None = None) -> str:
    if not isinstance(value, str):
        raise InvalidValue(name, f"expected text, got {type(value).__name__}")
    text = value.strip()
    if required and not text:
        raise InvalidValue(name, "must not be empty")
    try:
        check_text(text, "text")
    except ValueError as exc:
        raise InvalidValue(name, str(exc)) from None
    if max_len is not None and len(text) > max_len:
        raise InvalidValue(name, f"is {len(text)} characters long; at most {max_len} allowed")
    return text


def _opt_text(value: object, name: str, max_len: int | None = None) -> str | None:
    return None if value is None else _text(value, name, max_len=max_len)


def _yes_no(value: object, name: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("yes", "no"):
        return value.strip().lower() == "yes"
    raise InvalidValue(name, f"{value!r} is not yes/no (give True, False, 'yes' or 'no')")


def _int(value: object, name: str, lo: int, hi: int | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidValue(name, f"{value!r} is not an integer")
    try:
        number = int(value.strip()) if isinstance(value, str) else int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise InvalidValue(name, f"{value!r} is not an integer") from None
    if isinstance(value, float) and value != number:
        raise InvalidValue(name, f"{value!r} is not an integer")
    if number < lo or (hi is not None and number > hi):
        upper = f"{hi:,}" if hi is not None else "∞"
        raise InvalidValue(name, f"{number} is out of range; use {lo} to {upper}")
    return number


def _decimal(value: object, name: str, hi: str) -> float | None:
    """A decimal in [0, hi], as given: never rounded (``0.85`` stays ``0.85``)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidValue(name, f"{value!r} is not a number")
    try:
        d = Decimal(value.strip() if isinstance(value, str) else str(value))
    except (InvalidOperation, TypeError, ValueError):
        raise InvalidValue(name, f"{value!r} is not a decimal number; use e.g. 0.5") from None
    if not d.is_finite() or not Decimal(0) <= d <= Decimal(hi):
        raise InvalidValue(name, f"{value!r} is out of range; use a number from 0.0 to {hi}")
    return float(d) + 0.0  # not -0.0


_PRIORITIES: dict[object, float | None] = {}  # given value -> _decimal of it (a few kinds)


def _priority(value: object) -> float | None:
    """``_decimal(value, "priority", "1.0")``, remembered for the values seen."""
    if type(value) in (str, float, int):  # hashable, and not bool (True == 1)
        try:
            return _PRIORITIES[value]
        except KeyError:
            pass
        result = _decimal(value, "priority", "1.0")
        if len(_PRIORITIES) < 10_000:
            _PRIORITIES[value] = result
        return result
    return _decimal(value, "priority", "1.0")


def priority_text(value: object) -> str:
    """The ``<priority>`` the writer writes for ``value``: the value as given (never
    rounded) in the shortest decimal form with a digit after the point (``decimal_text``).

    >>> priority_text("0.85"), priority_text(".5"), priority_text("1"), priority_text("0.850")
    ('0.85', '0.5', '1.0', '0.85')
    """
    number = _priority(value)
    assert number is not None
    return decimal_text(number)


def _tuple(value: Iterable[Any] | None, name: str) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, bytes, Mapping)):
        raise InvalidValue(name, f"expected a list, got {type(value).__name__}")
    return tuple(value)


def _allow_deny(
    obj: VideoRestriction | VideoPlatform,
    name: str,
    fold: Callable[[str], str],
    valid: Callable[[str], object],
    expected: str,
) -> None:
    """Check a ``relationship="allow|deny"`` element: the attribute, and its space-separated
    list (the field *name*), each item stripped, case-folded with *fold*, then *valid*."""
    where = obj._NAME  # the prefix of the field names in errors
    if obj.relationship not in ("allow", "deny"):
        raise InvalidValue(
            f"{where}.relationship", f"{obj.relationship!r} is not 'allow' or 'deny'"
        )
    value = getattr(obj, name)
    raw = value.split() if isinstance(value, str) else _tuple(value, f"{where}.{name}")
    items = tuple(fold(item.strip()) for item in raw)
    for item in items:
        if not valid(item):
            raise InvalidValue(f"{where}.{name}", f"{item!r} is not {expected}")
    _set(obj, name, items)


@dataclass(frozen=True, slots=True)
class Image:
    """``<image:image>``: one image on a page.

    ``caption``, ``title``, ``geo_location`` and ``license`` were retired by Google
    in 2022; they are kept for reading, and written only on explicit request.

    >>> Image("https://cdn.example.com/a.jpg").loc
    'https://cdn.example.com/a.jpg'
    """

    loc: str
    caption: str | None = None
    geo_location: str | None = None
    title: str | None = None
    license: str | None = None

    def __post_init__(self) -> None:
        _set(self, "loc", _loc(self.loc, "image.loc"))
        _set(self, "caption", _opt_text(self.caption, "image.caption"))
        _set(self, "geo_location", _opt_text(self.geo_location, "image.geo_location"))
        _set(self, "title", _opt_text(self.title, "image.title"))
        _set(self, "license", _opt_loc(self.license, "image.license"))

    @property
    def has_deprecated(self) -> bool:
        return any(
            v is not None for v in (self.caption, self.geo_location, self.title, self.license)
        )


@dataclass(frozen=True, slots=True)
class VideoRestriction:
    """``<video:restriction relationship="allow|deny">`` with ISO 3166-1 country codes."""

    _NAME: ClassVar[str] = "video.restriction"
    relationship: Literal["allow", "deny"]
    countries: tuple[str, ...]

    def __post_init__(self) -> None:
        _allow_deny(
            self,
            "countries",
            str.upper,
            _COUNTRY.fullmatch,
            "an ISO 3166-1 alpha-2 code such as 'US'",
        )


@dataclass(frozen=True, slots=True)
class VideoPlatform:
    """``<video:platform relationship="allow|deny">`` with platforms web, mobile, tv."""

    _NAME: ClassVar[str] = "video.platform"
    relationship: Literal["allow", "deny"]
    platforms: tuple[str, ...]

    def __post_init__(self) -> None:
        _allow_deny(self, "platforms", str.lower, _PLATFORMS.__contains__, "web, mobile or tv")


@dataclass(frozen=True, slots=True)
class Video:
    """``<video:video>``: a video on a page, with every tag Google reads today.

    Google requires ``thumbnail_loc``, ``title``, ``description`` and at least one of
    ``content_loc`` / ``player_loc``.
    """

    thumbnail_loc: str
    title: str
    description: str
    content_loc: str | None = None
    player_loc: str | None = None
    duration: int | None = None
    expiration_date: DateLike | None = None
    rating: float | None = None
    view_count: int | None = None
    publication_date: DateLike | None = None
    family_friendly: bool | None = None
    restriction: VideoRestriction | None = None
    platform: VideoPlatform | None = None
    requires_subscription: bool | None = None
    uploader: str | None = None
    uploader_info: str | None = None
    live: bool | None = None
    tags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _set(self, "thumbnail_loc", _loc(self.thumbnail_loc, "video.thumbnail_loc"))
        # The XSD caps titles at 100 characters, Google sets no limit (RULES.md VID703 is a
        # warning): a longer title is kept, and the validator warns.
        _set(self, "title", _text(self.title, "video.title"))
        _set(
            self,
            "description",
            _text(self.description, "video.description", max_len=limits.MAX_VIDEO_DESCRIPTION),
        )
        _set(self, "content_loc", _opt_loc(self.content_loc, "video.content_loc"))
        _set(self, "player_loc", _opt_loc(self.player_loc, "video.player_loc"))
        if self.content_loc is None and self.player_loc is None:
            raise InvalidValue(
                "video.content_loc", "a video needs content_loc or player_loc (or both)"
            )
        _set(self, "duration", _int(self.duration, "video.duration", 1, limits.MAX_VIDEO_DURATION))
        _set(self, "expiration_date", _date(self.expiration_date, "video.expiration_date"))
        _set(self, "rating", _decimal(self.rating, "video.rating", "5.0"))
        _set(self, "view_count", _int(self.view_count, "video.view_count", 0, None))
        _set(self, "publication_date", _date(self.publication_date, "video.publication_date"))
        _set(self, "family_friendly", _yes_no(self.family_friendly, "video.family_friendly"))
        _set(
            self,
            "requires_subscription",
            _yes_no(self.requires_subscription, "video.requires_subscription"),
        )
        _set(self, "live", _yes_no(self.live, "video.live"))
        _set(self, "uploader", _opt_text(self.uploader, "video.uploader", limits.MAX_UPLOADER))
        _set(self, "uploader_info", _opt_loc(self.uploader_info, "video.uploader_info"))
        if self.uploader_info is not None and self.uploader is None:
            raise InvalidValue("video.uploader_info", "needs video.uploader to be set")
        tags = tuple(_text(t, "video.tag") for t in _tuple(self.tags, "video.tags"))
        if len(tags) > limits.MAX_VIDEO_TAGS:
            raise InvalidValue("video.tags", f"{len(tags)} tags given; at most 32 allowed")
        _set(self, "tags", tags)
        if isinstance(self.restriction, Mapping):
            _set(self, "restriction", VideoRestriction(**self.restriction))
        if isinstance(self.platform, Mapping):
            _set(self, "platform", VideoPlatform(**self.platform))


@dataclass(frozen=True, slots=True)
class News:
    """``<news:news>``: a news article (publication name and language, date, title)."""

    publication_name: str
    publication_language: str
    publication_date: DateLike
    title: str

    def __post_init__(self) -> None:
        _set(self, "publication_name", _text(self.publication_name, "news.publication.name"))
        lang = _text(self.publication_language, "news.publication.language")
        if not _NEWS_LANGUAGE.fullmatch(lang):
            raise InvalidValue(
                "news.publication.language",
                f"{lang!r} is not an ISO 639 code such as 'en' (or zh-cn, zh-tw)",
            )
        _set(self, "publication_language", lang)
        _set(self, "publication_date", _date(self.publication_date, "news.publication_date"))
        if self.publication_date is None:
            raise InvalidValue("news.publication_date", "is required")
        _set(self, "title", _text(self.title, "news.title"))


@dataclass(frozen=True, slots=True)
class Alternate:
    """``<xhtml:link rel="alternate" hreflang=… href=…>``: a language version of a page;
    without ``hreflang``, a separate mobile URL (``media``: its media query) or an app link.

    >>> Alternate(None, "https://m.example.com/", media="only screen and (max-width: 640px)").media
    'only screen and (max-width: 640px)'
    """

    hreflang: str | None
    href: str
    media: str | None = None

    def __post_init__(self) -> None:
        lang = self.hreflang
        if lang is not None:
            if not isinstance(lang, str) or not _HREFLANG.fullmatch(lang.strip()):
                raise InvalidValue(
                    "alternate.hreflang",
                    f"{lang!r} is not x-default or language[-Script][-REGION] like 'en-GB'",
                )
            _set(self, "hreflang", lang.strip())
        _set(self, "media", _opt_text(self.media, "alternate.media"))
        href = self.href
        app = lang is None and isinstance(href, str) and APP_LINK.fullmatch(href.strip())
        _set(self, "href", href.strip() if app else _loc(href, "alternate.href"))


def _coerce_images(value: Iterable[Any] | None) -> tuple[Image, ...]:
    items = _tuple(value, "images")
    out = tuple(
        i
        if isinstance(i, Image)
        else Image(i)
        if isinstance(i, str)
        else Image(**i)
        if isinstance(i, Mapping)
        else _bad("images", i)
        for i in items
    )
    if len(out) > limits.MAX_IMAGES:
        raise InvalidValue(
            "images", f"{len(out):,} images given; Google reads at most 1,000 per URL"
        )
    return out


def _bad(name: str, value: object) -> Any:
    raise InvalidValue(name, f"unexpected item {value!r}")


@dataclass(frozen=True, slots=True)
class Url:
    """``<url>``: one page of a sitemap.

    ``loc`` is turned from an IRI into a URI (``iri_to_uri``) and must be absolute
    (sitemaps.org: "begin with the protocol"); a relative loc has no meaning without a
    base, so only a writer takes one, as a string it resolves against its
    ``base_url`` before building the ``Url``. ``lastmod`` is formatted per
    ``format_lastmod``; ``changefreq`` is lowercased and checked; ``priority`` must lie
    in 0.0–1.0 and is kept as given (never rounded). A reader's record may hold a
    ``lastmod`` as the document wrote it (``2024-05``, a time without zone); the
    serializer writes it per ``format_lastmod`` or refuses it.

    >>> Url("https://example.com/küche", lastmod="2024-05-01", priority="0.55").priority
    0.55
    """

    loc: str
    lastmod: DateLike | None = None
    changefreq: str | None = None
    priority: float | str | None = None
    images: tuple[Image, ...] = ()
    videos: tuple[Video, ...] = ()
    news: News | None = None
    alternates: tuple[Alternate, ...] = field(default=())

    def __post_init__(self) -> None:
        _set(self, "loc", _loc(self.loc, "loc"))
        if self.lastmod is not None:
            _set(self, "lastmod", _date(self.lastmod, "lastmod"))
        if self.changefreq is not None:
            if (
                not isinstance(self.changefreq, str)
                or self.changefreq.strip().lower() not in CHANGEFREQS
            ):
                raise InvalidValue(
                    "changefreq",
                    f"{self.changefreq!r} is not one of always, hourly, daily, weekly, "
                    "monthly, yearly, never",
                )
            _set(self, "changefreq", self.changefreq.strip().lower())
        if self.priority is not None:
            _set(self, "priority", _priority(self.priority))
        # the defaults (empty tuples, no news) need no work: most URLs carry them
        if type(self.images) is not tuple or self.images:
            _set(self, "images", _coerce_images(self.images))
        if type(self.videos) is not tuple or self.videos:
            videos = _tuple(self.videos, "videos")
            _set(self, "videos", tuple(v if isinstance(v, Video) else _video(v) for v in videos))
        if self.news is None or isinstance(self.news, News):
            pass
        elif isinstance(self.news, Mapping):
            _set(self, "news", _news(self.news))
        else:
            raise InvalidValue("news", f"expected News, got {type(self.news).__name__}")
        if type(self.alternates) is not tuple or self.alternates:
            alts = _tuple(self.alternates, "alternates")
            _set(self, "alternates", tuple(_alternate(a) for a in alts))

    def to_record(self) -> dict[str, Any]:
        """The JSON record: ``{"kind": "url", "loc": …, "lastmod": …, …}``."""
        return {
            "kind": "url",
            "loc": self.loc,
            "lastmod": self.lastmod,
            "changefreq": self.changefreq,
            "priority": self.priority,
            "images": [_image_record(i) for i in self.images],
            "videos": [_video_record(v) for v in self.videos],
            "news": None
            if self.news is None
            else {
                "publication": {
                    "name": self.news.publication_name,
                    "language": self.news.publication_language,
                },
                "publication_date": self.news.publication_date,
                "title": self.news.title,
            },
            "alternates": [  # media only when there is one: hreflang ones keep their shape
                {"hreflang": a.hreflang, "href": a.href, **({"media": a.media} if a.media else {})}
                for a in self.alternates
            ],
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Url:
        """Build from the JSON record shape; unknown keys are refused."""
        if not _RECORD_KEYS.issuperset(record):
            unknown = set(record) - _RECORD_KEYS
            raise InvalidValue(
                sorted(unknown)[0], f"unknown field; known: {', '.join(sorted(_RECORD_KEYS))}"
            )
        if "loc" not in record or record["loc"] in (None, ""):
            raise InvalidValue("loc", "is required")
        return cls(
            record["loc"],
            lastmod=record.get("lastmod"),
            changefreq=record.get("changefreq"),
            priority=record.get("priority"),
            images=record.get("images") or (),
            videos=record.get("videos") or (),
            news=record.get("news"),
            alternates=record.get("alternates") or (),
        )


# fmt: off
_RECORD_KEYS: Final = frozenset([
    "kind", "loc", "lastmod", "changefreq", "priority", "images", "videos", "news",
    "alternates", "source",
])
# fmt: on


def _alternate(a: object) -> Alternate:
    if isinstance(a, Alternate):
        return a
    if isinstance(a, Mapping):
        return Alternate(a.get("hreflang"), a.get("href"), a.get("media"))  # type: ignore[arg-type]
    if isinstance(a, tuple) and len(a) == 2:
        return Alternate(*a)
    raise InvalidValue("alternates", f"unexpected item {a!r}; use Alternate(hreflang, href)")


def _news(m: Mapping[str, Any]) -> News:
    pub = m.get("publication") or {}
    if not isinstance(pub, Mapping):
        raise InvalidValue("news.publication", "expected an object with name and language")
    return News(
        publication_name=pub.get("name", m.get("publication_name")),
        publication_language=pub.get("language", m.get("publication_language")),
        publication_date=m.get("publication_date"),  # type: ignore[arg-type]
        title=m.get("title"),  # type: ignore[arg-type]
    )


#: The Video fields in the order of the video XSD (and of the JSON record).
# fmt: off
VIDEO_FIELDS: Final = (
    "thumbnail_loc", "title", "description", "content_loc", "player_loc", "duration",
    "expiration_date", "rating", "view_count", "publication_date", "family_friendly",
    "restriction", "platform", "requires_subscription", "uploader", "uploader_info", "live",
    "tags",
)
# fmt: on


def _video(v: object) -> Video:
    if not isinstance(v, Mapping):
        raise InvalidValue("videos", f"unexpected item {v!r}; use Video(...)")
    unknown = set(v) - set(VIDEO_FIELDS)
    if unknown:
        raise InvalidValue(f"video.{sorted(unknown)[0]}", "unknown video field")
    return Video(**v)


def _image_record(i: Image) -> dict[str, Any]:
    rec: dict[str, Any] = {"loc": i.loc}
    for k in ("caption", "geo_location", "title", "license"):
        val = getattr(i, k)
        if val is not None:
            rec[k] = val
    return rec


def _video_record(v: Video) -> dict[str, Any]:
    rec: dict[str, Any] = {}
    for k in VIDEO_FIELDS:
        val = getattr(v, k)
        if isinstance(val, VideoRestriction):
            val = {"relationship": val.relationship, "countries": list(val.countries)}
        elif isinstance(val, VideoPlatform):
            val = {"relationship": val.relationship, "platforms": list(val.platforms)}
        elif k == "tags":
            val = list(val)
        if val is not None and val != []:
            rec[k] = val
    return rec


@dataclass(frozen=True, slots=True)
class SitemapRef:
    """``<sitemap>``: an entry of a sitemap index (a child sitemap's URL)."""

    loc: str
    lastmod: DateLike | None = None

    def __post_init__(self) -> None:
        _set(self, "loc", _loc(self.loc, "sitemap.loc"))
        _set(self, "lastmod", _date(self.lastmod, "sitemap.lastmod"))

    def to_record(self) -> dict[str, Any]:
        """The JSON record: ``{"kind": "sitemap", "loc": …, "lastmod": …}``."""
        return {"kind": "sitemap", "loc": self.loc, "lastmod": self.lastmod}


# -- records whose values a reader has already checked -----------------------------------
# A reader that validated every value builds its records without a second check: the slots'
# setters are what the dataclass __init__ calls (through object.__setattr__), minus the
# lookups and __post_init__. These are for sitemapkit's own readers, not the public API.
