"""The online checks (io/urlcheck.py through ``validate(online=…, check_urls=…)``) against
real HTTP servers on 127.0.0.1: no mocks of httpx, every request counted on the server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitemapkit.core.finding import Finding
from sitemapkit.io.urlcheck import BlockingUrlChecker, CheckOptions, UrlChecker
from sitemapkit.validation import ValidationReport, validate

from ..site import Reply, Site, gif, html, jpeg, png, webp, webp_extended, webp_lossy_header

HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
    ' xmlns:xhtml="http://www.w3.org/1999/xhtml"'
    ' xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">\n'
)
ROBOTS = b"User-agent: *\nDisallow: /private/\n\nUser-agent: otherbot\nDisallow: /\n"


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site()
    s["/robots.txt"] = Reply(200, ROBOTS, {"Content-Type": "text/plain"})
    s["/sitemap.xml"] = Reply(200, b"<urlset/>", {"Content-Type": "application/xml"})
    try:
        yield s
    finally:
        s.close()


def write(tmp_path: Path, *rows: str) -> Path:
    """A urlset with one entry per line: row i is on line i + 3."""
    path = tmp_path / "sitemap.xml"
    path.write_text(HEAD + "".join(r + "\n" for r in rows) + "</urlset>\n", encoding="utf-8")
    return path


def entry(loc: str, extra: str = "") -> str:
    return f"<url><loc>{loc}</loc>{extra}</url>"


def video(site: Site, thumbnail: str, content: str = "", player: str = "") -> str:
    if not content and not player:
        player = "/player"
    parts = f"<video:thumbnail_loc>{site.url(thumbnail)}</video:thumbnail_loc>"
    parts += "<video:title>A video</video:title><video:description>About</video:description>"
    if content:
        parts += f"<video:content_loc>{site.url(content)}</video:content_loc>"
    if player:
        parts += f"<video:player_loc>{site.url(player)}</video:player_loc>"
    return f"<video:video>{parts}</video:video>"


def check(site: Site, path: Path, **kw: object) -> ValidationReport:
    kw.setdefault("check_urls", True)
    kw.setdefault("timeout", 2.0)
    return validate(path, published_at=site.url("/sitemap.xml"), **kw)  # type: ignore[arg-type]


ONLINE = ("SM012", "SM217", "HRE908", "VID718", "VID719")


def online(report: ValidationReport) -> list[Finding]:
    return [f for f in report.findings if f.rule in ONLINE]


# -- SM217: every listed URL ---------------------------------------------------------------

PAGES: dict[str, tuple[Reply | None, str | None]] = {
    # path: (reply, the message part expected, or None for no finding)
    "/ok": (html(), None),
    "/gone": (Reply(404, b"gone"), "answers HTTP 404 (Not Found), not 200"),
    "/broken": (Reply(500, b"oops"), "answers HTTP 500 (Internal Server Error), not 200"),
    "/login": (Reply(401, b""), "answers HTTP 401 (login required)"),
    "/moved": (Reply(301, b"", {"Location": "/ok"}), "redirects (301) to '{base}/ok'; a sitemap"),
    "/loop-a": (Reply(302, b"", {"Location": "/loop-b"}), "redirects in a loop (302 → "),
    "/hop1": (Reply(302, b"", {"Location": "/hop2"}), "redirects more than 5 times"),
    "/nohead": (None, None),  # HEAD 405, GET 200
    "/xrt": (html(X_Robots_Tag="noindex, nofollow"), "is marked noindex (X-Robots-Tag: noindex"),
    "/xrt-google": (html(X_Robots_Tag="googlebot: noindex"), "(X-Robots-Tag: googlebot: noindex)"),
    "/xrt-other": (html(X_Robots_Tag="otherbot: noindex"), None),
    "/xrt-none": (html(X_Robots_Tag="none"), "(X-Robots-Tag: none)"),
    "/meta": (html('<meta name="robots" content="noindex, follow">'), '<meta name="robots"'),
    "/meta-google": (html('<meta name="Googlebot" content="NOINDEX">'), 'content="NOINDEX">'),
    "/meta-body": (None, None),  # a robots meta tag in the body does not count
    "/canonical": (html('<link rel="canonical" href="/ok">'), "names '{base}/ok' as its canonical"),
    "/canonical-self": (html('<link rel="canonical" href="/canonical-self">'), None),
    "/canonical-header": (
        html(Link='<{base}/ok>; rel="canonical"'),
        "names '{base}/ok' as its canonical URL (Link header)",
    ),
    "/private/page": (html(), "is disallowed for 'Googlebot' by '{base}/robots.txt'"),
    "/slow": (Reply(200, b"", {"Content-Type": "text/html"}, delay=1.5), "did not answer"),
    "/busy": (None, None),  # 429 with Retry-After: 1, then 200
    "/plain": (Reply(200, b"just text", {"Content-Type": "text/plain"}), None),
}


@pytest.fixture
def pages(site: Site, tmp_path: Path) -> Path:
    base = site.base
    for path, (reply, _) in PAGES.items():
        if reply is not None:
            headers = {k: v.replace("{base}", base) for k, v in reply.headers.items()}
            site[path] = Reply(reply.status, reply.body, headers, reply.delay)
    site["/loop-b"] = Reply(302, b"", {"Location": "/loop-a"})
    for i in range(2, 8):
        site[f"/hop{i}"] = Reply(302, b"", {"Location": f"/hop{i + 1}"})
    site["/hop8"] = html()
    site["/nohead"] = lambda method, _h, _n: Reply(405) if method == "HEAD" else html()
    site["/meta-body"] = Reply(
        200,
        b'<html><head><title>x</title></head><body><meta name="robots" content="noindex">',
        {"Content-Type": "text/html"},
    )
    site["/busy"] = lambda _m, _h, n: Reply(429, b"", {"Retry-After": "1"}) if n == 1 else html()
    return write(tmp_path, *(entry(site.url(p)) for p in PAGES))


def test_each_finding_has_its_message_line_and_loc(site: Site, pages: Path) -> None:
    started = time.monotonic()
    report = check(site, pages, timeout=0.5)
    elapsed = time.monotonic() - started
    got = {f.loc: f for f in online(report)}
    for line, (path, (_, expected)) in enumerate(PAGES.items(), 3):
        url = site.url(path)
        if expected is None:
            assert url not in got, str(got[url])
            continue
        f = got.pop(url)
        assert (f.rule, f.severity, f.line, f.where) == ("SM217", "warning", line, str(pages))
        assert f.message.startswith(f"{url!r} ")
        assert expected.replace("{base}", site.base) in f.message, f.message
    assert got == {}
    assert "SM217" not in {f.rule for f in report.findings if f.loc == site.url("/ok")}
    assert not report.unreadable and report.errors == 0
    # the 429 was retried after its Retry-After, and the slow page cost one timeout
    assert 1.0 <= elapsed < 6, elapsed


def test_how_each_url_is_requested(site: Site, pages: Path) -> None:
    check(site, pages, timeout=0.5)
    hits = site.hits
    # robots.txt once; a disallowed URL never
    assert hits[("GET", "/robots.txt")] == 1
    assert not any(p.startswith("/private/") for _, p in hits)
    # an HTML page: HEAD, then a GET for its head; a non-HTML 200: HEAD only
    assert (hits[("HEAD", "/ok")], hits[("GET", "/ok")]) >= (1, 1)
    assert (hits[("HEAD", "/plain")], hits[("GET", "/plain")]) == (1, 0)
    # HEAD refused (405) or failing (404): confirmed with a GET
    assert (hits[("HEAD", "/nohead")], hits[("GET", "/nohead")]) == (1, 1)
    assert (hits[("HEAD", "/gone")], hits[("GET", "/gone")]) == (1, 1)
    # redirects followed by hand: the loop's two URLs once each, the long chain to hop6
    assert hits[("HEAD", "/loop-a")] == hits[("HEAD", "/loop-b")] == 1
    assert hits[("HEAD", "/hop6")] == 1 and ("HEAD", "/hop7") not in hits
    # 429 then 200: two tries
    assert hits[("HEAD", "/busy")] == 2


def test_user_agent_and_no_redirect_following_by_httpx(site: Site, tmp_path: Path) -> None:
    seen: list[str] = []

    def page(method: str, headers: dict[str, str], _n: int) -> Reply:
        seen.append(headers.get("user-agent", ""))
        return html()

    site["/a"] = page
    check(site, write(tmp_path, entry(site.url("/a"))))
    assert seen and all(ua.startswith("sitemapkit/") for ua in seen)


def test_retries_are_bounded(site: Site, tmp_path: Path) -> None:
    site["/down"] = Reply(503, b"", {"Retry-After": "0"})
    report = check(site, write(tmp_path, entry(site.url("/down"))))
    (f,) = online(report)
    assert f.rule == "SM217" and "HTTP 503 (Service Unavailable)" in f.message
    assert site.hits[("HEAD", "/down")] == 3  # the try and two retries
    assert site.hits[("GET", "/down")] == 3  # a failing HEAD is confirmed with GET


def test_connection_error(site: Site, tmp_path: Path) -> None:
    report = check(site, write(tmp_path, entry("http://127.0.0.1:9/page")))
    findings = [f for f in online(report) if f.rule == "SM217"]
    assert len(findings) == 1 and "could not be requested" in findings[0].message
    # robots.txt of that origin was unreachable too: noted, and the URL still checked
    assert any("http://127.0.0.1:9/robots.txt" in n and "RFC 9309" in n for n in report.notes)


# -- HRE908: alternates --------------------------------------------------------------------


def alternates(site: Site, *langs: str) -> str:
    return "".join(
        f'<xhtml:link rel="alternate" hreflang="{lang}" href="{site.url("/" + lang)}"/>'
        for lang in langs
    )


def test_alternates_that_redirect_or_are_not_canonical(site: Site, tmp_path: Path) -> None:
    site["/en"] = html()
    site["/de"] = html()
    site["/fr"] = Reply(301, b"", {"Location": "/fr/"})
    site["/fr/"] = html()
    site["/it"] = html(f'<link rel="canonical" href="{site.url("/en")}">')
    langs = ("en", "de", "fr", "it")
    path = write(
        tmp_path,
        entry(site.url("/en"), alternates(site, *langs)),
        entry(site.url("/de"), alternates(site, *langs)),
    )
    report = check(site, path)
    found = [(f.rule, f.line, f.loc) for f in online(report)]
    assert found == [("HRE908", 3, site.url("/en")), ("HRE908", 3, site.url("/en"))]
    fr, it = online(report)
    assert f"'fr' alternate '{site.url('/fr')}' redirects (301) to '{site.url('/fr/')}'" in (
        fr.message
    )
    assert f"'it' alternate '{site.url('/it')}' names '{site.url('/en')}'" in it.message
    # each URL requested once, whether as a loc or as an alternate of two entries
    assert site.hits[("HEAD", "/it")] == site.hits[("HEAD", "/de")] == 1
    assert site.hits[("HEAD", "/fr")] == 1


def test_good_alternates_pass(site: Site, tmp_path: Path) -> None:
    site["/en"] = html()
    site["/de"] = html()
    path = write(
        tmp_path,
        entry(site.url("/en"), alternates(site, "en", "de")),
        entry(site.url("/de"), alternates(site, "en", "de")),
    )
    report = check(site, path)
    assert "HRE908" not in {f.rule for f in report.findings}
    assert online(report) == []


# -- VID718 and VID719: video URLs ---------------------------------------------------------

THUMBNAILS = {
    # path: (bytes, expected VID718 message part or None)
    "/t/small.png": (png(100, 50), "is 100×50 px (PNG); Google requires at least 160×90 px"),
    "/t/large.png": (png(2000, 1200), "is 2000×1200 px (PNG); Google accepts at most 1920×1080"),
    "/t/ok.png": (png(640, 360), None),
    "/t/small.jpg": (jpeg(100, 50), "is 100×50 px (JPEG)"),
    "/t/large.jpg": (jpeg(2000, 1200), "is 2000×1200 px (JPEG)"),
    "/t/ok.jpg": (jpeg(1920, 1080), None),
    "/t/small.gif": (gif(100, 50), "is 100×50 px (GIF)"),
    "/t/large.gif": (gif(2000, 1200), "is 2000×1200 px (GIF)"),
    "/t/ok.gif": (gif(160, 90), None),
    "/t/small.webp": (webp(100, 50), "is 100×50 px (WebP)"),
    "/t/large.webp": (webp_extended(2000, 1200), "is 2000×1200 px (WebP)"),
    "/t/ok.webp": (webp_lossy_header(1280, 720), None),
}


def test_thumbnail_sizes(site: Site, tmp_path: Path) -> None:
    rows = []
    for i, (path, (data, _)) in enumerate(THUMBNAILS.items()):
        # every other server honours Range (206), the others send the whole file
        site[path] = Reply(200, data, {"Content-Type": "image/x"}, ranges=i % 2 == 0)
        site[f"/watch{i}"] = html()
        rows.append(entry(site.url(f"/watch{i}"), video(site, path)))
    site["/player"] = html()
    report = check(site, write(tmp_path, *rows))
    got = {f.line: f for f in online(report)}
    for line, (path, (_, expected)) in enumerate(THUMBNAILS.items(), 3):
        if expected is None:
            assert line not in got, str(got[line])
            continue
        f = got.pop(line)
        assert f.rule == "VID718" and f.loc == site.url(f"/watch{line - 3}")
        assert f"thumbnail '{site.url(path)}' {expected}" in f.message, f.message
    assert got == {}
    # thumbnails are read with a ranged GET and never requested with HEAD
    assert not any(m == "HEAD" and p.startswith("/t/") for m, p in site.hits)


def test_video_urls_blocked_or_behind_a_login(site: Site, tmp_path: Path) -> None:
    site["/t/ok.png"] = Reply(200, png(640, 360), {"Content-Type": "image/png"})
    site["/t/login.png"] = Reply(403, b"")
    site["/v/login.mp4"] = Reply(401, b"")
    site["/v/ok.mp4"] = Reply(200, b"\x00" * 1000, {"Content-Type": "video/mp4"})
    site["/player"] = html()
    for i in range(4):
        site[f"/watch{i}"] = html()
    path = write(
        tmp_path,
        entry(site.url("/watch0"), video(site, "/t/ok.png", content="/private/v.mp4")),
        entry(site.url("/watch1"), video(site, "/t/ok.png", content="/v/login.mp4")),
        entry(site.url("/watch2"), video(site, "/t/login.png", player="/player")),
        entry(site.url("/watch3"), video(site, "/t/ok.png", "/v/ok.mp4", player="/player")),
    )
    report = check(site, path)
    found = [(f.rule, f.line) for f in online(report)]
    assert found == [("VID719", 3), ("VID719", 4), ("VID719", 5)]
    blocked, login, thumb = online(report)
    assert "<video:content_loc>" in blocked.message and "disallowed for 'Googlebot'" in (
        blocked.message
    )
    assert "HTTP 401 (login required)" in login.message
    assert "<video:thumbnail_loc>" in thumb.message and "HTTP 403" in thumb.message
    assert "VID719" not in {f.rule for f in report.findings if f.line == 6}
    assert "VID718" not in {f.rule for f in report.findings}
    # the thumbnail shared by three entries was read once; media by HEAD, not GET
    assert site.hits[("GET", "/t/ok.png")] == 1
    assert site.hits[("HEAD", "/v/ok.mp4")] == 1 and ("GET", "/v/ok.mp4") not in site.hits


# -- SM012: the sitemaps themselves --------------------------------------------------------


def test_published_copy_status(site: Site, tmp_path: Path) -> None:
    path = write(tmp_path, entry(site.url("/a")))
    site["/a"] = html()
    report = validate(path, published_at=site.url("/sitemap.xml"), online=True)
    assert "SM012" not in {f.rule for f in report.findings} and online(report) == []
    site["/sitemap.xml"] = Reply(404, b"")
    report = validate(path, published_at=site.url("/sitemap.xml"), online=True)
    (f,) = online(report)
    assert (f.rule, f.where, f.line) == ("SM012", str(path), None)
    assert f"The published copy '{site.url('/sitemap.xml')}' answers HTTP 404" in f.message
    # --online alone requests the sitemap (and robots.txt), not its URLs
    assert site.paths() == {"/sitemap.xml"}


def test_published_copy_behind_a_login_or_redirecting_too_often(site: Site, tmp_path: Path) -> None:
    path = write(tmp_path, entry(site.url("/a")))
    site["/sitemap.xml"] = Reply(401, b"")
    (f,) = online(validate(path, published_at=site.url("/sitemap.xml"), online=True))
    assert f.rule == "SM012" and "HTTP 401 (login required)" in f.message
    for i in range(6):
        site[f"/s{i}.xml"] = Reply(301, b"", {"Location": f"/s{i + 1}.xml"})
    site["/s6.xml"] = Reply(200, b"<urlset/>")
    (f,) = online(validate(path, published_at=site.url("/s0.xml"), online=True))
    assert f.rule == "SM012" and "redirects more than 5 times" in f.message
    site["/s1.xml"] = Reply(200, b"<urlset/>")  # one redirect is fine
    assert online(validate(path, published_at=site.url("/s0.xml"), online=True)) == []


def test_sitemap_disallowed_by_robots(site: Site, tmp_path: Path) -> None:
    site["/private/sitemap.xml"] = Reply(200, b"<urlset/>")
    path = write(tmp_path)
    report = validate(path, published_at=site.url("/private/sitemap.xml"), online=True)
    (f,) = online(report)
    assert f.rule == "SM012" and "disallowed for 'Googlebot'" in f.message
    assert ("HEAD", "/private/sitemap.xml") not in site.hits
    # the robots agent decides: otherbot is disallowed everywhere
    report = validate(
        path, published_at=site.url("/sitemap.xml"), online=True, robots_agent="otherbot"
    )
    assert [f.rule for f in online(report)] == ["SM012"]
    assert "disallowed for 'otherbot'" in online(report)[0].message


def test_url_target_disallowed_or_behind_a_login(site: Site) -> None:
    body = (HEAD + entry(site.url("/a")) + "\n</urlset>\n").encode()
    site["/private/s.xml"] = Reply(200, body)
    site["/locked.xml"] = Reply(403, b"")
    report = validate(site.url("/private/s.xml"), online=True)
    assert [f.rule for f in online(report)] == ["SM012"] and report.entries == 1
    report = validate(site.url("/locked.xml"))
    (f,) = online(report)
    assert f.rule == "SM012" and "HTTP 403" in f.message and "forbidden" in f.message


def test_robots_txt_answers(site: Site, tmp_path: Path) -> None:
    path = write(tmp_path, entry(site.url("/private/a")))
    site["/private/a"] = html()
    # 404: no rules, everything allowed
    site["/robots.txt"] = Reply(404, b"")
    report = check(site, path)
    assert online(report) == []
    assert report.notes[-1] == "online: 1 URLs checked (1 distinct), robots agent 'Googlebot'"
    # 503: unreachable; crawlers treat the site as disallowed: SM012 and a note
    site["/robots.txt"] = Reply(503, b"", {"Retry-After": "0"})
    report = check(site, path)
    (f,) = online(report)
    assert f.rule == "SM012" and "answered HTTP 503" in f.message and "RFC 9309" in f.message
    assert any(n.startswith(site.url("/robots.txt") + " answered HTTP 503") for n in report.notes)
    assert "SM217" not in {f.rule for f in report.findings}  # checked as if allowed
    # a redirect to the real file is followed
    site["/robots.txt"] = Reply(301, b"", {"Location": "/robots-real.txt"})
    site["/robots-real.txt"] = Reply(200, ROBOTS)
    report = check(site, path)
    assert [f.rule for f in online(report)] == ["SM217"]


# -- bounds --------------------------------------------------------------------------------


def test_no_request_without_online(site: Site, tmp_path: Path) -> None:
    site["/a"] = html()
    path = write(tmp_path, entry(site.url("/a"), video(site, "/t.png", "/v.mp4")))
    report = validate(path, published_at=site.url("/sitemap.xml"))
    assert site.requests == 0 and online(report) == []


def test_check_limit_bounds_the_requests(site: Site, tmp_path: Path) -> None:
    for i in range(30):
        site[f"/p{i}"] = Reply(404, b"")
    path = write(tmp_path, *(entry(site.url(f"/p{i}")) for i in range(30)))
    report = check(site, path, check_limit=5)
    assert len(site.paths() - {"/sitemap.xml"}) == 5
    assert len([f for f in report.findings if f.rule == "SM217"]) == 5
    assert any(n.startswith("25 URLs of the set were not checked online") for n in report.notes)


def test_per_host_concurrency_is_bounded(site: Site, tmp_path: Path) -> None:
    for i in range(24):
        site[f"/p{i}"] = Reply(204, b"", delay=0.1)
    path = write(tmp_path, *(entry(site.url(f"/p{i}")) for i in range(24)))
    check(site, path, concurrency=16)
    assert 2 <= site.max_active <= 4


def test_concurrency_is_bounded(site: Site, tmp_path: Path) -> None:
    for i in range(6):
        site[f"/p{i}"] = Reply(204, b"", delay=0.05)
    path = write(tmp_path, *(entry(site.url(f"/p{i}")) for i in range(6)))
    calls: list[tuple[int, int]] = []
    check(site, path, concurrency=1, progress=lambda done, queued: calls.append((done, queued)))
    assert site.max_active == 1
    assert [done for done, _ in calls] == [1, 2, 3, 4, 5, 6] and calls[-1] == (6, 6)
    assert all(done <= queued for done, queued in calls)


def test_jobs_are_pulled_within_a_window(site: Site) -> None:
    """A stream of jobs is read ahead by at most 4 × concurrency: constant memory."""
    for i in range(100):
        site[f"/p{i}"] = Reply(204, b"")
    pulled = 0
    ahead = 0

    def jobs() -> Iterator[tuple[int, str, str]]:
        nonlocal pulled
        for i in range(100):
            pulled += 1
            yield i, site.url(f"/p{i}"), "media"

    async def run(c: UrlChecker) -> int:
        nonlocal ahead
        done = 0
        async for _tag, probe in c.iter_checks(jobs()):  # type: ignore[arg-type]
            assert probe is not None and probe.status == 204
            done += 1
            ahead = max(ahead, pulled - done)
        return done

    with BlockingUrlChecker(CheckOptions(concurrency=2)) as checker:
        assert checker.call(run) == 100
    assert ahead <= 2 * 4


def test_checker_works_inside_a_running_event_loop(site: Site, tmp_path: Path) -> None:
    site["/a"] = Reply(404, b"")
    path = write(tmp_path, entry(site.url("/a")))

    async def main() -> ValidationReport:
        return check(site, path)

    report = asyncio.run(main())
    assert [f.rule for f in online(report)] == ["SM217"]


def test_bad_options_are_value_errors(tmp_path: Path) -> None:
    path = write(tmp_path)
    for kw in ({"robots_agent": "Google bot"}, {"concurrency": 0}, {"timeout": 0}):
        with pytest.raises(ValueError):
            validate(path, online=True, **kw)  # type: ignore[arg-type]
