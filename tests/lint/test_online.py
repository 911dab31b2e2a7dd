"""lint/online.py: what a probe means, as rule ids and messages (no network)."""

from __future__ import annotations

from sitemapkit.core.probe import ImageSize, Probe, RobotsAnswer
from sitemapkit.lint.online import entry_problems, sitemap_problems

URL = "https://example.com/a"
ROBOTS = RobotsAnswer("https://example.com/robots.txt", 200)


def page(**kw: object) -> list[tuple[str, str]]:
    probe = Probe(URL, "page", robots=ROBOTS, **kw)  # type: ignore[arg-type]
    return entry_problems(probe, role="loc", agent="Googlebot")


def test_a_good_page_has_no_problem() -> None:
    assert page(status=200, final_url=URL) == []
    assert page(status=200, final_url=URL, canonical="HTTPS://EXAMPLE.COM:443/a") == []


def test_page_problems_name_the_values_and_the_fix() -> None:
    ((rule, message),) = page(status=410, final_url=URL)
    assert rule == "SM217"
    assert message == (
        "'https://example.com/a' answers HTTP 410 (Gone), not 200 ('URLs not accessible'): "
        "fix the page or remove it from the sitemap"
    )
    ((_, message),) = page(
        status=200, final_url=URL + "/", redirects=((308, URL + "/"),), canonical=URL + "/"
    )
    assert message.startswith(f"{URL!r} redirects (308) to {URL + '/'!r}; ")
    assert message.endswith(f"list {URL + '/'!r} instead")
    ((_, message),) = page(
        status=404, final_url=URL + "/c", redirects=((301, URL + "/b"), (302, URL + "/c"))
    )
    assert "redirects 2 times (301 → 'https://example.com/a/b', 302 → " in message
    assert "which answers HTTP 404 (Not Found)" in message
    problems = page(status=200, final_url=URL, noindex="X-Robots-Tag: none", canonical=URL + "?x")
    assert [r for r, _ in problems] == ["SM217", "SM217"]
    assert "noindex (X-Robots-Tag: none)" in problems[0][1]
    assert f"names {URL + '?x'!r} as its canonical URL" in problems[1][1]
    # noindex and canonical of an error page do not matter
    assert len(page(status=500, final_url=URL, noindex="X-Robots-Tag: noindex")) == 1


def test_failures() -> None:
    for failure, text in [
        ("blocked", "is disallowed for 'Googlebot' by 'https://example.com/robots.txt'"),
        ("loop", "redirects in a loop"),
        ("too-many-redirects", "redirects more than 5 times"),
        ("bad-redirect", "which is not an http(s) URL"),
        ("timeout", "did not answer"),
        ("connection", "could not be requested"),
    ]:
        ((rule, message),) = page(failure=failure, detail="x")
        assert rule == "SM217" and text in message, message


def test_alternates_only_redirects_and_canonical() -> None:
    def alt(**kw: object) -> list[tuple[str, str]]:
        probe = Probe(URL, "page", **kw)  # type: ignore[arg-type]
        return entry_problems(probe, role="alternate", agent="Googlebot", hreflang="de")

    assert alt(status=404, final_url=URL) == []  # not what HRE908 is about
    assert alt(status=200, final_url=URL, noindex="x") == []
    ((rule, message),) = alt(status=200, final_url=URL + "/", redirects=((301, URL + "/"),))
    assert rule == "HRE908" and message.startswith(f"The hreflang 'de' alternate {URL!r}")
    ((rule, _),) = alt(status=200, final_url=URL, canonical="https://example.com/en")
    assert rule == "HRE908"


def test_video_urls() -> None:
    def vid(role: str, **kw: object) -> list[tuple[str, str]]:
        probe = Probe(URL, "thumbnail", **kw)  # type: ignore[arg-type]
        return entry_problems(probe, role=role, agent="Googlebot")  # type: ignore[arg-type]

    assert vid("thumbnail_loc", status=200, image=ImageSize("PNG", 160, 90)) == []
    assert vid("thumbnail_loc", status=200, image=ImageSize("PNG", 1920, 1080)) == []
    assert vid("thumbnail_loc", status=200, image=None) == []
    assert vid("thumbnail_loc", status=200, image=ImageSize("PNG", 159, 500))[0][0] == "VID718"
    assert vid("thumbnail_loc", status=200, image=ImageSize("PNG", 500, 1081))[0][0] == "VID718"
    assert vid("content_loc", status=403)[0][0] == "VID719"
    assert vid("player_loc", failure="blocked", robots=ROBOTS)[0][0] == "VID719"
    assert vid("content_loc", status=404) == []


def test_sitemap_problems() -> None:
    ok = Probe(URL, "sitemap", status=200, robots=ROBOTS)
    assert sitemap_problems(ok, agent="Googlebot", published=True) == []
    down = RobotsAnswer("https://example.com/robots.txt", None, "ConnectError: refused")
    (message,) = sitemap_problems(
        Probe(URL, "sitemap", robots=down), agent="Googlebot", published=False
    )
    assert message.startswith("'https://example.com/robots.txt' answered ConnectError: refused;")
    (message,) = sitemap_problems(
        Probe(URL, "sitemap", status=404, robots=ROBOTS), agent="Googlebot", published=True
    )
    assert message.startswith(f"The published copy {URL!r} answers HTTP 404 (Not Found)")
    assert message.endswith("publish the file there, or correct --published-at")
