"""sitemapkit.crawl(): a site the tests build, served on 127.0.0.1 by tests/site.py."""

from __future__ import annotations

import asyncio
import itertools

import pytest

import sitemapkit as sk
from sitemapkit.core.outcome import PageOutcome
from sitemapkit.io.crawler.store import SeenSet, SpillFrontier

from ..site import Reply, Site, html

PAGE = {"Content-Type": "text/html; charset=utf-8"}


def body(text: str, status: int = 200, **headers: str) -> Reply:
    extra = dict(PAGE)
    extra.update({k.replace("_", "-"): v for k, v in headers.items()})
    return Reply(status, f"<!doctype html><html><body>{text}</body></html>".encode(), extra)


def run(site: Site, start: str = "/", **options: object) -> tuple[dict[str, PageOutcome], sk.Crawl]:
    c = sk.crawl(site.url(start), workers=0, **options)  # type: ignore[arg-type]
    found: dict[str, PageOutcome] = {}
    for o in c:
        assert o.url not in found, f"{o.url} judged twice"
        found[o.url.removeprefix(site.base)] = o
    return found, c


def test_every_link_form_and_each_page_fetched_once(site: Site) -> None:
    site["/"] = body(
        '<a href="a">relative</a><a href="/b#frag">fragment</a><a href="#only">.</a>'
        '<a href="mailto:x@example.com">m</a><a href="tel:+331">t</a>'
        '<a href="javascript:void(0)">j</a><map><area href="/area" alt="x"></map>'
        '<a href="/caf%C3%A9/">encoded</a><a href="/café/">raw</a>'
        '<a href="/CAF%c3%a9/x/..">dots</a>'
        '<a href="/sub/">sub</a>'
    )
    site["/sub/"] = body('<base href="/deep/"><a href="c">based</a><a href="../a">up</a>')
    for path in ("/a", "/b", "/area", "/caf%C3%A9/", "/deep/c"):
        site[path] = body("")
    found, c = run(site)
    assert set(found) == {
        "/",
        "/a",
        "/b",
        "/area",
        "/caf%C3%A9/",
        "/CAF%C3%A9/",
        "/sub/",
        "/deep/c",
    }
    assert all(n == 1 for n in site.hits.values())
    assert found["/deep/c"].listed and found["/area"].listed
    assert c.summary.listed == 7 and c.summary.left_out == {"error status": 1}


def test_robots_disallowed_pages_are_never_requested(site: Site) -> None:
    site["/robots.txt"] = Reply(
        200,
        b"User-agent: sitemapkit\nDisallow: /mine/\n\nUser-agent: *\nDisallow: /all/\n",
        {"Content-Type": "text/plain"},
    )
    site["/"] = body('<a href="/mine/x">.</a><a href="/all/x">.</a><a href="/ok">.</a>')
    site["/ok"] = body("")
    found, _ = run(site)
    assert site.paths() == {"/", "/ok", "/all/x"}  # our own group replaces '*' (RFC 9309)
    assert found["/mine/x"].reason == "disallowed by robots.txt"
    assert found["/mine/x"].status is None


def test_crawl_delay_spaces_requests_one_at_a_time(site: Site) -> None:
    site["/robots.txt"] = Reply(200, b"User-agent: *\nCrawl-delay: 0.3\n")
    site["/"] = body("".join(f'<a href="/{i}">.</a>' for i in range(4)))
    for i in range(4):
        site[f"/{i}"] = body("")
    run(site, concurrency=8)
    times = sorted(t for r in site.log if r.path != "/robots.txt" for t in [r.at])
    assert site.max_active == 1
    assert all(b - a >= 0.29 for a, b in itertools.pairwise(times))


def test_429_and_503_are_retried_after_retry_after(site: Site) -> None:
    def busy(status: int) -> object:
        def answer(method: str, headers: dict[str, str], count: int) -> Reply:
            if count == 1:
                return Reply(status, b"busy", {"Retry-After": "0"})
            return body("fine")

        return answer

    site["/"] = body('<a href="/a">.</a><a href="/b">.</a><a href="/c">.</a>')
    site["/a"] = busy(429)  # type: ignore[assignment]
    site["/b"] = busy(503)  # type: ignore[assignment]
    site["/c"] = Reply(503, b"down", {"Retry-After": "0"})
    found, _ = run(site, retries=2)
    assert found["/a"].listed and found["/b"].listed
    assert (site.count("/a"), site.count("/b"), site.count("/c")) == (2, 2, 3)
    assert (found["/c"].reason, found["/c"].status) == ("error status", 503)


def test_statuses_headers_and_lastmod_precedence(site: Site) -> None:
    stamp = "Wed, 01 May 2024 10:00:00 GMT"
    site["/"] = body(
        '<a href="/dated">.</a><a href="/stamped">.</a><a href="/plain">.</a>'
        '<a href="/tagged">.</a><a href="/moved">.</a><a href="/error">.</a>'
        '<a href="/doc.pdf">.</a>'
    )
    site["/dated"] = html(
        '<meta property="article:modified_time" content="2024-06-02T08:00:00Z">',
        Last_Modified=stamp,
    )
    site["/stamped"] = html("", Last_Modified=stamp)
    site["/plain"] = html("")
    site["/tagged"] = html("", X_Robots_Tag="googlebot: noindex")
    site["/moved"] = Reply(308, b"", {"Location": "/plain"})
    site["/error"] = Reply(500, b"oops")
    site["/doc.pdf"] = Reply(200, b"%PDF-1.4", {"Content-Type": "application/pdf"})
    found, _ = run(site, include_types=["application/pdf"])
    lastmods = {p: sk_lastmod(found[p]) for p in ("/dated", "/stamped", "/plain")}
    assert lastmods == {
        "/dated": "2024-06-02T08:00:00Z",
        "/stamped": "2024-05-01T10:00:00+00:00",
        "/plain": None,
    }
    assert found["/tagged"].detail == "X-Robots-Tag: googlebot: noindex"
    assert (found["/moved"].reason, found["/moved"].detail) == ("redirect", site.url("/plain"))
    assert (found["/error"].reason, found["/error"].status) == ("error status", 500)
    assert found["/doc.pdf"].listed
    assert site.count("/plain") == 1


def sk_lastmod(o: PageOutcome) -> str | None:
    from sitemapkit.core.crawler import lastmod

    return lastmod(o)


def test_a_page_that_does_not_answer_in_time_fails(site: Site) -> None:
    site["/"] = body('<a href="/slow">.</a>')
    site["/slow"] = Reply(200, b"late", PAGE, delay=1.0)
    found, c = run(site, timeout=0.2, retries=0)
    assert found["/slow"].reason == "fetch failed"
    assert found["/slow"].detail == "No response within 0.2 s"
    assert c.summary.left_out == {"fetch failed": 1}


def test_a_trickled_page_is_cut_at_its_deadline(site: Site) -> None:
    site["/"] = body('<a href="/trickle">.</a>')
    site["/trickle"] = Reply(200, b"x" * 100, PAGE, trickle=0.05)
    found, _ = run(site, max_page_time=0.5, retries=0)
    assert found["/trickle"].reason == "fetch failed"
    assert "deadline per page (0.5 s)" in (found["/trickle"].detail or "")


def test_at_most_four_requests_to_a_host(site: Site) -> None:
    site["/"] = body("".join(f'<a href="/{i}">.</a>' for i in range(20)))
    for i in range(20):
        site[f"/{i}"] = Reply(200, b"<p>x</p>", PAGE, delay=0.05)
    found, _ = run(site, concurrency=8)
    assert len(found) == 21
    assert 2 <= site.max_active <= 4


def test_the_spilled_frontier_gives_the_same_pages(site: Site) -> None:
    links = "".join(f'<a href="/p{i}">.</a>' for i in range(30))
    site["/"] = body(links)
    for i in range(30):
        site[f"/p{i}"] = body(f'<a href="/q{i}">.</a>')
        site[f"/q{i}"] = body("")
    memory, _ = run(site)
    site.hits.clear()
    spilled, _ = run(site, frontier_limit=2)
    assert memory.keys() == spilled.keys() and len(memory) == 61
    assert all(n == 1 for n in site.hits.values())


def test_parsed_in_a_child_gives_the_same_outcomes(site: Site) -> None:
    site["/"] = body("".join(f'<a href="/p{i}"><img src="/i{i}.png"></a>' for i in range(12)))
    for i in range(12):
        site[f"/p{i}"] = body('<meta name="robots" content="noindex">' if i % 3 else "")
    here, _ = run(site)
    c = sk.crawl(site.url("/"), workers=1)
    there = {o.url.removeprefix(site.base): o for o in c}
    assert here == there


def test_extra_urls_and_async_iteration(site: Site) -> None:
    site["/"] = body('<a href="/linked">.</a>')
    site["/linked"] = body("")
    site["/orphan"] = body('<a href="/behind">.</a>')

    async def main() -> dict[str, PageOutcome]:
        c = sk.crawl(site.url("/"), extra=[site.url("/orphan"), site.url("/linked")], workers=0)
        return {o.url.removeprefix(site.base): o async for o in c}

    found = asyncio.run(main())
    assert set(found) == {"/", "/linked", "/orphan"}
    assert found["/orphan"].depth is None and found["/linked"].depth == 1
    assert site.count("/linked") == 1 and site.count("/behind") == 0


def test_a_crawl_is_iterated_once_and_options_are_checked(site: Site) -> None:
    site["/"] = body("")
    c = sk.crawl(site.url("/"), workers=0)
    assert [o.listed for o in c] == [True]
    with pytest.raises(RuntimeError, match="iterated once"):
        list(c)
    with pytest.raises(ValueError, match="concurrency"):
        sk.crawl(site.url("/"), concurrency=0)
    with pytest.raises(ValueError, match="max_page_time"):
        sk.crawl(site.url("/"), max_page_time=0)


def test_an_unreachable_host_is_a_failed_page_not_an_error() -> None:
    with Site() as gone:
        url = gone.url("/")
    found = {o.url: o for o in sk.crawl(url, retries=0, workers=0)}
    assert [o.reason for o in found.values()] == ["disallowed by robots.txt"]


def test_the_seen_set_keeps_every_url_across_its_runs() -> None:
    seen = SeenSet(recent=4)
    urls = [f"https://example.com/{i}" for i in range(200)]
    assert all(seen.add(u) for u in urls)
    assert not any(seen.add(u) for u in urls)
    assert len(seen) == 200 and urls[3] in seen and "https://example.com/x" not in seen


def test_the_spilled_frontier_keeps_its_order() -> None:
    q = SpillFrontier(limit=3)
    items = [(f"https://example.com/{i}", i if i % 2 else None) for i in range(10)]
    got = []
    for url, depth in items[:7]:
        q.push(url, depth)
    got += [q.pop(), q.pop()]
    for url, depth in items[7:]:
        q.push(url, depth)
    while (item := q.pop()) is not None:
        got.append(item)
    assert got == items and q.spilled > 0 and len(q) == 0
    q.push("https://example.com/again", 1)
    assert q.pop() == ("https://example.com/again", 1)
    q.close()
    with pytest.raises(ValueError):
        SpillFrontier(limit=0)


def test_outcomes_come_in_the_order_of_the_requests_however_answers_overlap(site: Site) -> None:
    site["/"] = body("".join(f'<a href="/p{i}">.</a>' for i in range(8)))
    for i in range(8):
        # the first links answer last: their answers overtake each other
        site[f"/p{i}"] = Reply(200, f'<a href="/q{i}">.</a>'.encode(), PAGE, delay=0.02 * (8 - i))
        site[f"/q{i}"] = body("")
    first, _ = run(site, concurrency=8)
    expected = ["/", *(f"/p{i}" for i in range(8)), *(f"/q{i}" for i in range(8))]
    assert list(first) == expected


def test_progress_counts_fetched_queued_and_listed(site: Site) -> None:
    from sitemapkit.cli.crawl import _Progress
    from sitemapkit.cli.validate import StatusLine
    from sitemapkit.io.crawler import CrawlProgress

    site["/"] = body("".join(f'<a href="/p{i}">.</a>' for i in range(5)))
    for i in range(5):
        site[f"/p{i}"] = body('<meta name="robots" content="noindex">' if i else "")
    seen: list[CrawlProgress] = []
    list(sk.crawl(site.url("/"), workers=0, progress=seen.append))
    assert seen[-1].fetched == 6 and seen[-1].listed == 2 and seen[-1].queued == 0
    assert max(p.queued for p in seen) >= 5
    assert [p.fetched for p in seen] == sorted(p.fetched for p in seen)

    shown: list[str] = []

    class Line(StatusLine):
        def show(self, text: str, *, now: bool = False) -> None:
            shown.append(text)

    _Progress(Line()).update(CrawlProgress(fetched=300, queued=12, listed=250, elapsed=2.0))
    assert shown == ["crawled 300 pages, 12 queued, 250 listed (150 pages/s)"]


def test_robots_txt_redirects_are_followed(site: Site) -> None:
    site["/robots.txt"] = Reply(301, b"", {"Location": "/real-robots.txt"})
    site["/real-robots.txt"] = Reply(200, b"User-agent: *\nDisallow: /x\n")
    site["/"] = body('<a href="/x">.</a><a href="/y">.</a>')
    site["/y"] = body("")
    found, _ = run(site)
    assert found["/x"].reason == "disallowed by robots.txt" and found["/y"].listed
    assert site.count("/x") == 0


def test_refuse_private_refuses_a_loopback_site(site: Site) -> None:
    site["/"] = body("")
    found, _ = run(site, refuse_private=True)
    (start,) = found.values()
    assert start.reason == "disallowed by robots.txt"
    assert "non-public address '127.0.0.1'" in (start.detail or "")
    assert site.requests == 0
