"""core.crawler: the crawl's decisions, driven by hand (no I/O): scope, one request a page,
robots.txt, budgets, what is listed and why not, what is followed, extra URLs."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemapkit.core.crawler import (
    CrawlFlow,
    PageAnswer,
    PageRequest,
    Scope,
    http_date,
    judge,
    lastmod,
)
from sitemapkit.core.outcome import REASONS, PageOutcome, left_out_text
from sitemapkit.core.page import read_page

ROOT = "https://example.com"
HTML = "text/html; charset=utf-8"

Answer = Callable[[PageRequest], PageAnswer]


def page(body: str, **headers: str) -> Answer:
    """An HTML page answering 200 with ``body``."""

    def answer(req: PageRequest) -> PageAnswer:
        xrt = tuple(v for k, v in headers.items() if k == "x_robots_tag")
        p = read_page(body.encode(), req.url, x_robots_tag=xrt)
        return PageAnswer(
            req, 200, HTML, x_robots_tag=xrt, last_modified=headers.get("last_modified"), page=p
        )

    return answer


def status(code: int, location: str | None = None) -> Answer:
    return lambda req: PageAnswer(req, code, HTML, location=location)


def robots(text: str | None, code: int = 200) -> Answer:
    return lambda req: PageAnswer(req, code, "text/plain", body=(text or "").encode())


def drive(
    flow: CrawlFlow, site: dict[str, Answer], room: int = 4
) -> tuple[list[PageRequest], list[PageOutcome]]:
    """Run ``flow`` against ``site`` (path → answer; a missing path answers 404), a few
    requests at a time; return every request and every outcome."""
    requests: list[PageRequest] = []
    outcomes: list[PageOutcome] = []
    while True:
        batch = flow.next_requests(room)
        if not batch:  # with nothing in flight: the end
            assert flow.done
            break
        assert not flow.done
        for req in batch:
            requests.append(req)
            path = req.url[len(ROOT) :]
            flow.on_answer(site.get(path, status(404))(req))
        outcomes.extend(flow.take())
    return requests, outcomes


def by_url(outcomes: list[PageOutcome]) -> dict[str, PageOutcome]:
    found = {o.url: o for o in outcomes}
    assert len(found) == len(outcomes), "one outcome per page"
    return found


def test_every_reason_and_the_listed_page() -> None:
    site = {
        "/robots.txt": robots("User-agent: *\nDisallow: /private/\n"),
        "/": page(
            '<a href="/noindex">.</a><a href="/canon">.</a><a href="/moved">.</a>'
            '<a href="/gone">.</a><a href="/broken">.</a><a href="/private/x">.</a>'
            '<a href="/doc.pdf">.</a><a href="https://other.example/">.</a><a href="/ok">.</a>'
            '<a href="/header">.</a>'
        ),
        "/noindex": page('<meta name="googlebot" content="none">'),
        "/header": page("", x_robots_tag="noindex"),
        "/canon": page('<link rel="canonical" href="/ok">'),
        "/moved": status(301, "/ok#top"),
        "/broken": status(500),
        "/doc.pdf": lambda req: PageAnswer(req, 200, "application/pdf"),
        "/ok": page("<title>ok</title>"),
    }
    requests, outcomes = drive(CrawlFlow(ROOT + "/"), site)
    got = {o.url.removeprefix(ROOT): (o.reason, o.detail) for o in outcomes}
    assert got == {
        "/": (None, None),
        "/ok": (None, None),
        "/noindex": ("noindex", '<meta name="googlebot" content="none">'),
        "/header": ("noindex", "X-Robots-Tag: noindex"),
        "/canon": ("canonical elsewhere", ROOT + "/ok"),
        "/moved": ("redirect", ROOT + "/ok"),
        "/gone": ("error status", "HTTP 404"),
        "/broken": ("error status", "HTTP 500"),
        "/private/x": (
            "disallowed by robots.txt",
            "robots.txt disallows it for 'sitemapkit' or '*'",
        ),
        "/doc.pdf": ("not HTML", "application/pdf"),
        "https://other.example/": ("out of scope", f"not on {ROOT}"),
    }
    assert all(o.reason in REASONS for o in outcomes if o.reason)
    asked = [r.url[len(ROOT) :] for r in requests]
    assert "/private/x" not in asked  # disallowed: never requested
    assert asked.count("/ok") == 1  # linked, a canonical target and a redirect target: once
    assert all(
        o.status is None
        for o in outcomes
        if o.reason in ("out of scope", "disallowed by robots.txt")
    )


def test_a_noindex_page_links_are_followed_nofollow_ones_are_not() -> None:
    site = {
        "/": page('<a href="/hidden">.</a><a href="/closed">.</a>'),
        "/hidden": page('<meta name="robots" content="noindex"><a href="/behind">.</a>'),
        "/closed": page('<meta name="robots" content="nofollow"><a href="/never">.</a>'),
        "/behind": page(""),
    }
    requests, outcomes = drive(CrawlFlow(ROOT + "/"), site)
    asked = {r.url[len(ROOT) :] for r in requests}
    assert "/behind" in asked and "/never" not in asked
    assert by_url(outcomes)[ROOT + "/behind"].listed


@given(st.text(st.characters(min_codepoint=0xA0, max_codepoint=0x2FFF), min_size=1, max_size=8))
def test_a_path_and_its_percent_encoded_twin_are_one_page(name: str) -> None:
    body = (
        f'<a href="/{name}/">.</a><a href="/{quote(name)}/">.</a><a href="{ROOT}/{name}/#x">.</a>'
    )
    requests, outcomes = drive(CrawlFlow(ROOT + "/"), {"/": page(body)})
    assert len(requests) == 3  # robots.txt, the start, the page once
    assert len(outcomes) == 2


@given(
    st.sampled_from(["https://example.com", "https://EXAMPLE.com:443", "http://example.com"]),
    st.text(st.sampled_from("ab/.é?"), max_size=10),
    st.sampled_from(["host", "prefix"]),
)
def test_scope_is_the_start_origin_and_with_prefix_its_folder(
    origin: str, path: str, kind: str
) -> None:
    scope = Scope(ROOT + "/docs/start", kind)  # type: ignore[arg-type]
    from sitemapkit.core.urls import iri_to_uri, normalize

    url = normalize(iri_to_uri(origin + "/" + path))
    same_origin = url.startswith(ROOT + "/")
    inside = same_origin and (kind == "host" or url.startswith(ROOT + "/docs/"))
    assert (scope.why_not(url) is None) == inside


def test_a_start_that_is_not_http_is_refused() -> None:
    with pytest.raises(ValueError, match="not an http"):
        CrawlFlow("ftp://example.com/")
    with pytest.raises(ValueError, match="max_pages"):
        CrawlFlow(ROOT + "/", max_pages=0)
    with pytest.raises(ValueError, match="max_depth"):
        CrawlFlow(ROOT + "/", max_depth=-1)
    with pytest.raises(ValueError, match="scope"):
        CrawlFlow(ROOT + "/", scope="site")  # type: ignore[arg-type]


def calendar(req: PageRequest) -> PageAnswer:
    """A calendar trap: every month links to the next one, for ever."""
    month = int(req.url.partition("month=")[2] or 0)
    return page(f'<a href="/cal?month={month + 1}">next</a>')(req)


class Calendar(dict[str, Answer]):
    def get(self, path: str, default: Answer | None = None) -> Answer:  # type: ignore[override]
        return calendar if path.startswith("/cal") else super().get(path, default or status(404))


def test_a_calendar_trap_ends_at_the_page_budget_and_says_so() -> None:
    site = Calendar({"/": page('<a href="/cal?month=1">calendar</a>')})
    flow = CrawlFlow(ROOT + "/", max_pages=25)
    requests, outcomes = drive(flow, site)
    assert len([r for r in requests if not r.robots]) == 25
    (stopped,) = [o for o in outcomes if o.reason == "budget"]
    assert stopped.detail == "beyond the page budget (max_pages=25)"
    assert stopped.status is None
    assert "1 budget (e.g." in flow.summary.note("x")


def test_a_calendar_trap_ends_at_the_depth_budget() -> None:
    site = Calendar({"/": page('<a href="/cal?month=1">calendar</a>')})
    flow = CrawlFlow(ROOT + "/", max_depth=3)
    _, outcomes = drive(flow, site)
    assert [o.depth for o in outcomes if o.status == 200] == [0, 1, 2, 3]
    assert [(o.reason, o.detail, o.depth) for o in outcomes if o.reason] == [
        ("budget", "deeper than max_depth=3", 4)
    ]


def test_robots_that_cannot_be_read_disallow_everything() -> None:
    flow = CrawlFlow(ROOT + "/")
    requests, outcomes = drive(flow, {"/robots.txt": robots(None, 503)})
    assert [r.robots for r in requests] == [True]
    assert [(o.reason, o.status) for o in outcomes] == [("disallowed by robots.txt", None)]
    assert "robots.txt could not be read (HTTP 503)" in flow.summary.note("x")
    assert outcomes[0].detail == "robots.txt could not be read (HTTP 503)"


def test_a_start_that_redirects_to_another_site_moves_the_crawl_there() -> None:
    flow = CrawlFlow("http://example.com/")
    asked: list[str] = []
    while batch := flow.next_requests(4):
        for req in batch:
            asked.append(req.url)
            if req.url == "http://example.com/":
                flow.on_answer(status(301, ROOT + "/")(req))
            elif req.robots:
                flow.on_answer(robots("User-agent: *\nDisallow: /no\n")(req))
            else:
                links = '<a href="/a">.</a><a href="/no">.</a><a href="http://example.com/b">.</a>'
                flow.on_answer((page(links) if req.url == ROOT + "/" else page(""))(req))
    assert asked == [
        "http://example.com/robots.txt", "http://example.com/",
        ROOT + "/robots.txt", ROOT + "/", ROOT + "/a",
    ]  # fmt: skip
    assert flow.summary.listed == 2
    assert "http://example.com/ redirects to https://example.com/" in flow.summary.note("x")
    assert flow.summary.left_out == {
        "redirect": 1,
        "disallowed by robots.txt": 1,
        "out of scope": 1,
    }


def test_a_start_that_redirects_within_its_site_but_out_of_its_folder() -> None:
    site = {"/docs/": status(301, "/manual/"), "/manual/": page('<a href="/blog/">.</a>')}
    requests, outcomes = drive(CrawlFlow(ROOT + "/docs/", scope="prefix"), site)
    assert [r.url for r in requests].count(ROOT + "/robots.txt") == 1
    got = by_url(outcomes)
    assert got[ROOT + "/manual/"].listed and got[ROOT + "/blog/"].reason == "out of scope"


def test_a_robots_404_allows_everything_and_crawl_delay_is_read() -> None:
    flow = CrawlFlow(ROOT + "/")
    drive(flow, {"/": page("")})
    assert flow.crawl_delay is None and flow.summary.listed == 1
    flow = CrawlFlow(ROOT + "/")
    drive(flow, {"/robots.txt": robots("User-agent: sitemapkit\nCrawl-delay: 2\n"), "/": page("")})
    assert flow.crawl_delay == 2.0


def test_extra_urls_are_requested_last_once_and_not_followed() -> None:
    site = {
        "/": page('<a href="/linked">.</a>'),
        "/linked": page(""),
        "/orphan": page('<a href="/behind-orphan">.</a>'),
        "/orphan-moved": status(302, "/orphan-target"),
        "/orphan-target": page(""),
    }
    extra = [ROOT + "/linked", ROOT + "/orphan", "https://other.example/x", "not a url",
             ROOT + "/orphan-moved", ROOT + "/orphan"]  # fmt: skip
    flow = CrawlFlow(ROOT + "/", extra=extra, max_pages=2)
    requests, outcomes = drive(flow, site, room=1)
    asked = [r.url[len(ROOT) :] for r in requests if not r.robots]
    assert asked == ["/", "/linked", "/orphan", "/orphan-moved", "/orphan-target"]
    got = by_url(outcomes)
    assert got[ROOT + "/linked"].depth == 1  # reached by a link first
    assert got[ROOT + "/orphan"].depth is None and got[ROOT + "/orphan"].listed
    assert got["https://other.example/x"].reason == "out of scope"
    assert got[ROOT + "/orphan-target"].depth is None


def test_judge_a_failed_fetch_and_other_statuses() -> None:
    req = PageRequest(ROOT + "/a", 2)
    failed = judge(PageAnswer(req, None, error="Connection failed: refused"))
    assert (failed.reason, failed.detail, failed.status, failed.depth) == (
        "fetch failed", "Connection failed: refused", None, 2,
    )  # fmt: skip
    assert judge(PageAnswer(req, 204, HTML)).reason == "error status"
    assert judge(PageAnswer(req, 301)).reason == "error status"  # no Location: no redirect
    bad = judge(PageAnswer(req, 301, location="javascript:alert(1)"))
    assert (bad.reason, bad.detail) == ("redirect", "javascript:alert(1)")


def test_judge_included_types_are_listed_unless_a_header_says_noindex() -> None:
    req = PageRequest(ROOT + "/doc.pdf")
    pdf = "application/pdf"
    assert judge(PageAnswer(req, 200, pdf), include_types=[pdf]).listed
    assert judge(PageAnswer(req, 200, pdf)).reason == "not HTML"
    tagged = PageAnswer(req, 200, pdf, x_robots_tag=("googlebot: noindex",))
    assert judge(tagged, include_types=[pdf]).detail == "X-Robots-Tag: googlebot: noindex"
    other = PageAnswer(req, 200, pdf, x_robots_tag=("otherbot: noindex",))
    assert judge(other, include_types=[pdf]).listed


def test_lastmod_is_the_page_date_else_last_modified_else_none() -> None:
    req = PageRequest(ROOT + "/a")
    stamp = "Wed, 01 May 2024 10:00:00 GMT"
    dated = read_page(b'<meta property="article:modified_time" content="2024-06-02">', req.url)
    both = judge(PageAnswer(req, 200, HTML, last_modified=stamp, page=dated))
    header = judge(PageAnswer(req, 200, HTML, last_modified=stamp, page=read_page(b"", req.url)))
    neither = judge(PageAnswer(req, 200, HTML, last_modified="soon", page=read_page(b"", req.url)))
    assert [lastmod(o) for o in (both, header, neither)] == [
        "2024-06-02", "2024-05-01T10:00:00+00:00", None,
    ]  # fmt: skip


def test_http_dates() -> None:
    assert http_date("Sun, 06 Nov 1994 08:49:37 GMT") == "1994-11-06T08:49:37+00:00"
    assert http_date("Sunday, 06-Nov-94 08:49:37 GMT") == "1994-11-06T08:49:37+00:00"
    assert http_date("Sun, 06 Nov 1994 10:49:37 +0200") == "1994-11-06T08:49:37+00:00"
    assert http_date(None) is None and http_date("") is None and http_date("1994") is None


def test_images_and_alternates_are_carried_by_the_outcome() -> None:
    body = (
        '<link rel="alternate" hreflang="de" href="/de/"><link rel="alternate" '
        'hreflang="x-default" href="/"><img src="/a.png"><img src="https://cdn.example.net/b.jpg">'
    )
    _, outcomes = drive(CrawlFlow(ROOT + "/"), {"/": page(body)})
    start = by_url(outcomes)[ROOT + "/"]
    assert start.images == (ROOT + "/a.png", "https://cdn.example.net/b.jpg")
    assert start.alternates == (("de", ROOT + "/de/"), ("x-default", ROOT + "/"))


def test_the_left_out_wording_is_shared() -> None:
    assert left_out_text({"budget": 3, "noindex": 1}, {"budget": "b", "noindex": "n"}) == (
        "1 noindex (e.g. n), 3 budget (e.g. b)"
    )
