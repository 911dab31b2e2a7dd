"""The model refuses each bad value with the field it belongs to and a message that says how
to fix it; records round-trip through their JSON shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import sitemapkit as sk
from sitemapkit.core.model import InvalidValue, SitemapRef, VideoPlatform, VideoRestriction
from sitemapkit.core.trusted import trusted_image, trusted_ref, trusted_url

U = "https://example.com/"
VID = {"thumbnail_loc": U + "t.jpg", "title": "T", "description": "D", "content_loc": U + "v.mp4"}


def _video(**kw: Any) -> sk.Video:
    return sk.Video(**{**VID, **kw})


BAD: list[tuple[str, Callable[[], object], str, str]] = [
    ("loc not text", lambda: sk.Url(5), "loc", "expected a URL string, got int"),  # type: ignore[arg-type]
    ("lone surrogate", lambda: sk.Url(U + "\ud800"), "loc", "lone surrogate"),
    ("relative loc", lambda: sk.Url("/en/a"), "loc", ""),
    ("bad lastmod", lambda: sk.Url(U, lastmod="2024/05/01"), "lastmod", ""),
    ("changefreq", lambda: sk.Url(U, changefreq="sometimes"), "changefreq", "is not one of"),
    ("changefreq type", lambda: sk.Url(U, changefreq=3), "changefreq", "is not one of"),  # type: ignore[arg-type]
    ("priority bool", lambda: sk.Url(U, priority=True), "priority", "is not a number"),  # type: ignore[arg-type]
    ("priority text", lambda: sk.Url(U, priority="high"), "priority", "not a decimal number"),
    ("priority range", lambda: sk.Url(U, priority="1.5"), "priority", "out of range"),
    ("priority nan", lambda: sk.Url(U, priority=float("nan")), "priority", "out of range"),
    ("priority list", lambda: sk.Url(U, priority=[1]), "priority", "not a decimal"),  # type: ignore[arg-type]
    ("news type", lambda: sk.Url(U, news=3), "news", "expected News, got int"),  # type: ignore[arg-type]
    ("images str", lambda: sk.Url(U, images="a.jpg"), "images", ""),  # type: ignore[arg-type]
    ("image item", lambda: sk.Url(U, images=[3]), "images", "unexpected item 3"),  # type: ignore[list-item]
    ("too many images", lambda: sk.Url(U, images=[U + "i.jpg"] * 1001), "images", "1,001 images"),
    ("video item", lambda: sk.Url(U, videos=[3]), "videos", "unexpected item 3"),  # type: ignore[list-item]
    ("video field", lambda: sk.Url(U, videos=[{**VID, "colour": 1}]), "video.colour", "unknown"),
    ("alternate item", lambda: sk.Url(U, alternates=[3]), "alternates", "unexpected item"),  # type: ignore[list-item]
    ("hreflang", lambda: sk.Alternate("english", U), "alternate.hreflang", "x-default"),
    ("hreflang type", lambda: sk.Alternate(3, U), "alternate.hreflang", ""),  # type: ignore[arg-type]
    ("no player", lambda: _video(content_loc=None), "video.content_loc", "content_loc or"),
    ("empty title", lambda: _video(title="  "), "video.title", "must not be empty"),
    ("title type", lambda: _video(title=3), "video.title", "expected text, got int"),
    ("long description", lambda: _video(description="d" * 2049), "video.description", "2049"),
    ("duration bool", lambda: _video(duration=True), "video.duration", "not an integer"),
    ("duration text", lambda: _video(duration="ten"), "video.duration", "not an integer"),
    ("duration float", lambda: _video(duration=1.5), "video.duration", "not an integer"),
    ("duration range", lambda: _video(duration=0), "video.duration", "out of range"),
    ("view count", lambda: _video(view_count=-1), "video.view_count", "use 0 to ∞"),
    ("rating", lambda: _video(rating="6"), "video.rating", "0.0 to 5.0"),
    ("family", lambda: _video(family_friendly="maybe"), "video.family_friendly", "yes/no"),
    ("uploader info", lambda: _video(uploader_info=U + "u"), "video.uploader_info", "uploader"),
    ("tags", lambda: _video(tags=["t"] * 33), "video.tags", "33 tags"),
    ("control text", lambda: _video(title="a\x01b"), "video.title", ""),
    ("relationship", lambda: VideoRestriction("maybe", ("US",)), "video.restriction", "allow"),
    ("country", lambda: VideoRestriction("allow", "USA"), "video.restriction.countries", "USA"),
    ("platform rel", lambda: VideoPlatform("x", ("web",)), "video.platform.relationship", ""),
    ("platform", lambda: VideoPlatform("allow", "web car"), "video.platform", "car"),
    (
        "news language",
        lambda: sk.News("P", "english", "2024-05-01", "T"),
        "news.publication.language",
        "ISO 639",
    ),
    ("news date", lambda: sk.News("P", "en", None, "T"), "news.publication_date", "required"),  # type: ignore[arg-type]
    ("news publication", lambda: sk.Url(U, news={"publication": 3}), "news.publication", ""),  # type: ignore[arg-type]
    ("ref loc", lambda: SitemapRef("x"), "sitemap.loc", ""),
    ("record key", lambda: sk.Url.from_record({"loc": U, "size": 1}), "size", "unknown field"),
    ("record loc", lambda: sk.Url.from_record({"loc": ""}), "loc", "is required"),
]


@pytest.mark.parametrize(("call", "field", "text"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_value_names_its_field(call: Callable[[], object], field: str, text: str) -> None:
    with pytest.raises(InvalidValue) as info:
        call()
    assert info.value.field.startswith(field)
    assert text in info.value.detail
    assert str(info.value).startswith(f"{info.value.field}: ")


def test_values_are_normalised() -> None:
    url = sk.Url(
        U + "küche",
        lastmod="2024-05-01T10:00:00Z",
        changefreq=" Daily ",
        priority="0.55",
        images=[U + "a.jpg", {"loc": U + "b.jpg", "caption": "c"}],
        videos=[{**VID, "duration": "60", "family_friendly": "YES", "tags": ["x"]}],
        news={
            "publication": {"name": "P", "language": "en"},
            "publication_date": "2024-05-01",
            "title": "T",
        },
        alternates=[("de", U + "de"), {"hreflang": "x-default", "href": U}],
    )
    assert url.loc == U + "k%C3%BCche"
    assert url.changefreq == "daily"
    assert url.priority == 0.55  # as given: never rounded
    assert [i.loc for i in url.images] == [U + "a.jpg", U + "b.jpg"]
    assert url.videos[0].duration == 60 and url.videos[0].family_friendly is True
    assert url.news is not None and url.news.publication_language == "en"
    assert [a.hreflang for a in url.alternates] == ["de", "x-default"]
    assert sk.Url.from_record(url.to_record()) == url


def test_restriction_and_platform_from_mappings() -> None:
    v = _video(
        restriction={"relationship": "deny", "countries": "us ca"},
        platform={"relationship": "allow", "platforms": ["WEB", "tv"]},
    )
    assert isinstance(v.restriction, VideoRestriction) and v.restriction.countries == ("US", "CA")
    assert isinstance(v.platform, VideoPlatform) and v.platform.platforms == ("web", "tv")
    rec = sk.Url(U, videos=[v]).to_record()["videos"][0]
    assert rec["restriction"] == {"relationship": "deny", "countries": ["US", "CA"]}
    assert sk.Url.from_record({"loc": U, "videos": [rec]}).videos[0] == v


def test_priorities_are_remembered_without_changing_them() -> None:
    # kept as given, never rounded (issue #11 §3: 0.85 came out as 0.9)
    assert [sk.Url(U, priority=p).priority for p in ("0.25", "0.25", 0.25, 1, "0.850")] == [
        0.25,
        0.25,
        0.25,
        1.0,
        0.85,
    ]
    assert sk.Url(U, priority="0.0").priority == 0.0  # not -0.0


def test_trusted_builders_equal_the_checked_ones() -> None:
    assert trusted_url(U, "2024-05-01", "daily", 0.5) == sk.Url(
        U, lastmod="2024-05-01", changefreq="daily", priority=0.5
    )
    assert trusted_ref(U + "s.xml", None) == SitemapRef(U + "s.xml")
    assert trusted_image(U + "a.jpg", caption="c") == sk.Image(U + "a.jpg", caption="c")


def test_allow_deny_lists_are_split_stripped_and_folded() -> None:
    assert VideoRestriction("deny", " ie  gb ").countries == ("IE", "GB")
    assert VideoRestriction("allow", [" fr"]).countries == ("FR",)  # type: ignore[arg-type]
    assert VideoPlatform("allow", ["WEB", "Tv "]).platforms == ("web", "tv")  # type: ignore[arg-type]
    with pytest.raises(InvalidValue, match=r"video\.platform\.platforms"):
        VideoPlatform("allow", {"web": 1})  # type: ignore[arg-type]
