"""core.parse: ``<video:video>``, read into a :class:`~sitemapkit.core.model.Video`. Pure.

Google's video sitemap reference, step by step: the children by name (unknown ones VID715,
retired ones VID714, unread ones SM107), the required ones (VID701), the values in their
lexical forms, the attributes that carry data, ``restriction`` and ``platform``, the tags
(VID712), then the model's own checks, each refusal mapped to its rule.
"""

from __future__ import annotations

from typing import Final

from lxml import etree

from .. import limits
from ..model import VIDEO_FIELDS, InvalidValue, Video, VideoPlatform, VideoRestriction
from ..trusted import kept_dates
from .document import Document
from .value import LEXICAL_NAMES, Fields, date, fields, lexical, optional

__all__ = ["read_video"]

# The <video:*> elements read into model fields (uploader_info is an attribute, tags
# are <video:tag> elements, both handled apart).
_FIELDS: Final = frozenset(VIDEO_FIELDS) - {"uploader_info", "tags"}
_REQUIRED: Final = ("thumbnail_loc", "title", "description")
# Google, 2022-05-06 "Spring cleaning": these video tags have no effect any more (VID714).
_DEPRECATED: Final = frozenset(["category", "gallery_loc", "price", "tvshow"])
# In the XSD but not in the model (Google's current reference does not list them).
_UNREAD: Final = frozenset(["id", "content_segment_loc"])
_KNOWN: Final = _FIELDS | _DEPRECATED | _UNREAD
_RULES: Final = {
    "thumbnail_loc": "VID717",
    "content_loc": "VID717",
    "player_loc": "VID717",
    "title": "VID701",
    "description": "VID701",
    "duration": "VID704",
    "rating": "VID705",
    "view_count": "VID716",
    "family_friendly": "VID709",
    "requires_subscription": "VID709",
    "live": "VID709",
    "uploader": "VID713",
    "uploader_info": "VID713",
    "tags": "VID712",
    "expiration_date": "VID710",
    "publication_date": "VID710",
}
_DATES: Final = ("expiration_date", "publication_date")

#: Values for the model by field name, and the line each came from.
_Kw = dict[str, object]
_Lines = dict[str, int | None]


def read_video(doc: Document, el: etree._Element, ns: str, raw: str | None) -> Video | None:
    """The Video of a ``<video:video>`` element, or None when it must be skipped."""
    found, tags = fields(
        doc,
        el,
        ns,
        _KNOWN,
        "video:video",
        "VID715",
        raw,
        multi=frozenset(["tag"]),
        containers=frozenset(["tvshow"]),
    )
    line = doc.line(el)
    _report_unread(doc, found, raw)
    if not _has_required(doc, found, el, line, raw):
        return None
    kw, lines = _values(doc, found, raw)
    _attributes(doc, found, kw, lines, raw)
    _relationships(doc, found, kw, raw)
    _tags(doc, tags, kw, raw)
    title = kw.get("title")
    if isinstance(title, str) and len(title.strip()) > limits.MAX_VIDEO_TITLE:
        doc.findings.add(
            "VID703",
            f"<video:title> is {len(title.strip())} characters long; the video schema "
            f"allows {limits.MAX_VIDEO_TITLE} (Google sets no limit). Kept",
            line=lines.get("title", line),
            loc=raw,
            at=found["title"][2],
            lost=False,
        )
    return _build(doc, kw, lines, line, raw, found, el)


def _report_unread(doc: Document, found: Fields, raw: str | None) -> None:
    for name, (_text, line, child) in found.items():
        if name in _DEPRECATED:
            doc.findings.add(
                "VID714",
                f"<video:{name}> was retired by Google in 2022 and has no effect; it was ignored",
                line=line,
                loc=raw,
                at=child,
                lost=False,  # no field of the record holds it
            )
        elif name in _UNREAD:  # valid by the XSD, only not read: a warning
            message = f"<video:{name}> is not read by sitemapkit; it was ignored"
            doc.findings.add(
                "SM107", message, line=line, loc=raw, at=child, severity="warning", lost=False
            )


def _has_required(
    doc: Document, found: Fields, el: etree._Element, line: int | None, raw: str | None
) -> bool:
    """Google: thumbnail_loc, title, description, and content_loc or player_loc."""
    for name in _REQUIRED:
        item = found.get(name)
        if item is None or not item[0]:
            if item is None or item[0] is not None:  # None: markup, reported already
                state = "has no" if item is None else "has an empty"
                doc.judge(
                    "VID701",
                    f"<video:video> {state} <video:{name}>; video skipped",
                    el if item is None else item[2],
                    raw,
                    lost=True,
                )
            return False
    if "content_loc" not in found and "player_loc" not in found:
        doc.findings.add(
            "VID701",
            "<video:video> needs <video:content_loc> or <video:player_loc>; video skipped",
            line=line,
            loc=raw,
            at=el,
            lost=True,
        )
        return False
    return True


def _values(doc: Document, found: Fields, raw: str | None) -> tuple[_Kw, _Lines]:
    """The text fields, dates and numbers checked for their form."""
    kw: _Kw = {}
    lines: _Lines = {}
    for name in found:
        if name not in _FIELDS or name in ("restriction", "platform"):
            continue
        text = optional(doc, found, name, "video", raw)
        if text is None:
            continue
        lines[name] = found[name][1]
        if name in _DATES:
            text = date(
                doc, text, f"video:{name}", lines[name], raw, "VID710", found[name][2], keep=True
            )
        elif name in LEXICAL_NAMES:
            text = lexical(doc, name, text, lines[name], raw, "video:", found[name][2])
        if text is not None:
            kw[name] = text
    return kw, lines


def _attributes(doc: Document, found: Fields, kw: _Kw, lines: _Lines, raw: str | None) -> None:
    """The retired attributes of player_loc (VID714), the uploader's info attribute."""
    player = found.get("player_loc")
    if player is not None:
        for attr in ("allow_embed", "autoplay"):
            if player[2].get(attr) is not None:
                doc.findings.add(
                    "VID714",
                    f"The {attr} attribute of <video:player_loc> was "
                    "retired by Google in 2022; it was ignored",
                    line=player[1],
                    loc=raw,
                    at=player[2],
                    attr=attr,
                    lost=False,  # no field of the record holds it
                )
    uploader = found.get("uploader")
    if uploader is not None and "uploader" in kw:
        info = uploader[2].get("info")
        if info is not None:
            kw["uploader_info"] = info.strip()
            lines["uploader_info"] = uploader[1]


def _relationships(doc: Document, found: Fields, kw: _Kw, raw: str | None) -> None:
    """``restriction`` (VID707) and ``platform`` (VID708): a relationship and a list."""
    for name, cls, rule in (
        ("restriction", VideoRestriction, "VID707"),
        ("platform", VideoPlatform, "VID708"),
    ):
        item = found.get(name)
        if item is None or item[0] is None:
            continue
        relationship = item[2].get("relationship")
        if relationship is None:
            doc.judge(
                rule,
                f"<video:{name}> has no relationship attribute (allow or deny); it was ignored",
                item[2],
                raw,
                lost=True,
            )
            continue
        try:
            kw[name] = cls(relationship.strip(), item[0])  # type: ignore[arg-type]
        except InvalidValue as exc:
            message = f"Invalid <video:{name}>: {exc.detail}. It was ignored"
            doc.judge(rule, message, item[2], raw, lost=True)


def _tags(
    doc: Document,
    tags: list[tuple[str | None, int | None, etree._Element]],
    kw: _Kw,
    raw: str | None,
) -> None:
    """Google: "A maximum of 32 tags is permitted" (VID712); empty ones are dropped."""
    words: list[tuple[str, int | None, etree._Element]] = []
    for text, line, child in tags:
        if text:
            words.append((text, line, child))
        elif text is not None:
            doc.findings.add(
                "SM111",
                "Empty <video:tag>; it was ignored",
                line=line,
                loc=raw,
                at=child,
                severity="warning",  # an empty optional value is dropped, the video is kept
                lost=False,  # nothing to lose in an empty tag
            )
    if len(words) > limits.MAX_VIDEO_TAGS:
        doc.findings.add(
            "VID712",
            f"<video:video> has {len(words)} <video:tag> elements; at most "
            f"{limits.MAX_VIDEO_TAGS} are allowed. The rest were ignored",
            line=words[limits.MAX_VIDEO_TAGS][1],
            loc=raw,
            at=words[limits.MAX_VIDEO_TAGS][2],
            lost=True,
        )
        del words[limits.MAX_VIDEO_TAGS :]
    if words:
        kw["tags"] = tuple(w for w, _, _ in words)


def _build(
    doc: Document,
    kw: _Kw,
    lines: _Lines,
    line: int | None,
    raw: str | None,
    found: Fields,
    el: etree._Element,
) -> Video | None:
    """The model's Video; a refused optional value is dropped, a refused required one (or
    the whole) skips the video. Its dates are kept as written (``date()`` read and
    reported them); the model checks placeholders of its own form."""
    dates = {d: kw[d] for d in _DATES if d in kw}
    for d in dates:
        kw[d] = "2000-01-01"
    while True:
        try:
            return kept_dates(Video(**kw), dates)  # type: ignore[arg-type]
        except InvalidValue as exc:
            name = exc.field.removeprefix("video.")
            name = "tags" if name == "tag" else name
            rule = _rule(name, kw)
            at = lines.get(name, line)
            held = found.get("uploader" if name == "uploader_info" else name)
            child = el if held is None else held[2]
            attr = "info" if name == "uploader_info" and held is not None else None
            if name in kw and name not in _REQUIRED:
                doc.findings.add(
                    rule,
                    f"Invalid <video:{name}>: {exc.detail}. The value was ignored",
                    line=at,
                    loc=raw,
                    at=child,
                    attr=attr,
                    lost=True,
                )
                kw.pop(name)
                continue
            doc.findings.add(
                rule,
                f"Invalid <video:video>: {exc.detail}. Video skipped",
                line=at,
                loc=raw,
                at=child,
                attr=attr,
                severity="error",  # the video is lost, whatever the field's own rule says
                lost=True,
            )
            return None


def _rule(name: str, kw: _Kw) -> str:
    """The rule a value the model refused breaks."""
    if name not in kw:
        return "VID701"  # "needs content_loc or player_loc"
    if name == "title" and len(str(kw["title"])) > limits.MAX_VIDEO_TITLE:
        return "VID703"
    if name == "description" and len(str(kw[name])) > limits.MAX_VIDEO_DESCRIPTION:
        return "VID702"
    return _RULES.get(name, "VID715")
