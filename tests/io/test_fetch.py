"""io/fetch/ against real HTTP servers on 127.0.0.1 (no mocks of httpx)."""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import gzip
import ipaddress
import socket
import sys
import time
import tracemalloc
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from sitemapkit.core.compression import STEP
from sitemapkit.core.discovery import DiscoveryFlow, SitemapTree
from sitemapkit.core.finding import Finding
from sitemapkit.core.model import SitemapRef, Url
from sitemapkit.errors import FetchError, LimitError, ParseError
from sitemapkit.io import fetch
from sitemapkit.io.fetch import (
    USER_AGENT,
    aiter_records,
    discover,
    discover_sync,
    read_url_records,
)
from sitemapkit.io.fetch.guard import is_public

from .. import conftest
from ..site import Reply, Site

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


@pytest.fixture
def site() -> Iterator[Site]:
    with Site() as s:
        yield s


def urlset(*locs: str) -> bytes:
    return conftest.urlset(*(f"<url><loc>{loc}</loc></url>" for loc in locs)).encode()


def index(*locs: str) -> bytes:
    body = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    text = f'<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="{NS}">{body}</sitemapindex>'
    return text.encode()


def crawl(target: str, **kwargs: Any) -> tuple[list[tuple[str, str]], SitemapTree]:
    """All (loc, source) pairs and the tree, read in this process (workers=0)."""
    kwargs.setdefault("workers", 0)
    kwargs.setdefault("retries", 0)

    async def main() -> tuple[list[tuple[str, str]], SitemapTree]:
        async with aiter_records(target, **kwargs) as stream:
            pairs = [(r.loc, src) async for r, src in stream]
        return pairs, stream.tree

    return asyncio.run(main())


def by_url(tree: SitemapTree) -> dict[str, Any]:
    return {s.url: s for s in tree.sitemaps}


def rules(findings: tuple[Finding, ...]) -> list[str]:
    return [f.rule for f in findings]


# -- discovery ---------------------------------------------------------------------------


def test_robots_spellings_index_and_children(site: Site) -> None:
    site["/robots.txt"] = (
        b"\xef\xbb\xbfUser-agent: *\r\nDisallow: /private/\r\n"
        + f"sitemap:{site.url('/index.xml')} # main\r".encode()
        + f"Site-map: {site.url('/extra.xml')}\n".encode()
        + f"SITEMAP {site.url('/feed.txt')}\n".encode()
        + b"Sitemap: /relative.xml\n"
    )
    site["/index.xml"] = index(site.url("/a.xml"), site.url("/b.xml.gz"))
    site["/a.xml"] = urlset("https://example.com/a1", "https://example.com/a2")
    site["/b.xml.gz"] = Reply(body=gzip.compress(urlset("https://example.com/b1")))
    site["/extra.xml"] = urlset("https://example.com/e1")
    site["/feed.txt"] = b"https://example.com/t1\nhttps://example.com/t2\n"
    pairs, tree = crawl(site.url("/"))
    assert sorted(pairs) == sorted(
        [
            ("https://example.com/a1", site.url("/a.xml")),
            ("https://example.com/a2", site.url("/a.xml")),
            ("https://example.com/b1", site.url("/b.xml.gz")),
            ("https://example.com/e1", site.url("/extra.xml")),
            ("https://example.com/t1", site.url("/feed.txt")),
            ("https://example.com/t2", site.url("/feed.txt")),
        ]
    )
    assert tree.robots is not None and tree.robots.status == 200
    assert rules(tree.robots.findings) == ["RB008", "RB008", "RB003"]
    statuses = by_url(tree)
    assert set(statuses) == {
        site.url(p)
        for p in ("/index.xml", "/a.xml", "/b.xml.gz", "/extra.xml", "/feed.txt", "/relative.xml")
    }
    # the relative Sitemap: value was resolved and fetched: it is not there
    assert statuses[site.url("/relative.xml")].status == 404
    a = statuses[site.url("/a.xml")]
    assert (a.parent, a.status, a.entries, a.kind, a.depth, a.via, a.error) == (
        site.url("/index.xml"),
        200,
        2,
        "urlset",
        1,
        "index",
        None,
    )
    assert a.bytes == len(urlset("https://example.com/a1", "https://example.com/a2"))
    assert a.elapsed > 0
    assert statuses[site.url("/index.xml")].parent == site.url("/robots.txt")
    assert statuses[site.url("/feed.txt")].kind == "text"
    assert tree.urls == 6 and not tree.probes
    assert [s.url for s in tree.errors] == [site.url("/relative.xml")]
    assert all(n == 1 for n in site.hits.values())
    assert site.count("/sitemap.xml") == 0  # robots.txt listed sitemaps: no probing


def test_probing_when_robots_lists_none(site: Site) -> None:
    site["/robots.txt"] = b"User-agent: *\nDisallow:\n"
    site["/sitemap_index.xml"] = index(site.url("/s.xml"))
    site["/s.xml"] = urlset("https://example.com/x")
    pairs, tree = crawl(site.url("/"))
    assert pairs == [("https://example.com/x", site.url("/s.xml"))]
    assert [(p.url, p.status) for p in tree.probes] == [(site.url("/sitemap.xml"), 404)]
    assert tree.sitemaps[0].via == "probe"
    assert site.count("/sitemap-index.xml") == 0  # stops at the first hit


def test_probing_when_robots_is_missing_and_html_is_not_a_sitemap(site: Site) -> None:
    site["/sitemap.xml"] = Reply(
        body=b"<!DOCTYPE html><html><body>Not found</body></html>",
        headers={"Content-Type": "text/html"},
    )
    site["/sitemap.txt"] = b"https://example.com/only\n"
    pairs, tree = crawl(site.url("/"))
    assert pairs == [("https://example.com/only", site.url("/sitemap.txt"))]
    assert tree.robots is not None and tree.robots.status == 404 and tree.robots.error is None
    assert [p.status for p in tree.probes] == [200, 404, 404, 404, 404]


def test_nothing_found(site: Site) -> None:
    pairs, tree = crawl(site.url("/"))
    assert pairs == [] and tree.sitemaps == []
    assert len(tree.probes) == len(DiscoveryFlow(site.url("/"))._probe_paths)


# -- formats and encodings ---------------------------------------------------------------


def test_gzip_with_wrong_names_and_types(site: Site) -> None:
    site["/index.xml"] = index(site.url("/gz-named-xml.xml"), site.url("/plain.xml.gz"))
    site["/gz-named-xml.xml"] = Reply(
        body=gzip.compress(urlset("https://example.com/1")),
        headers={"Content-Type": "text/html; charset=utf-8"},
    )
    site["/plain.xml.gz"] = Reply(
        body=urlset("https://example.com/2"), headers={"Content-Type": "application/x-gzip"}
    )
    pairs, tree = crawl(site.url("/index.xml"))
    assert sorted(loc for loc, _ in pairs) == ["https://example.com/1", "https://example.com/2"]
    assert rules(by_url(tree)[site.url("/plain.xml.gz")].findings) == ["SM008"]


def test_content_encoding_gzip_and_double_gzip(site: Site) -> None:
    site["/index.xml"] = Reply(
        body=gzip.compress(index(site.url("/ce.xml"), site.url("/double.xml.gz"))),
        headers={"Content-Encoding": "gzip"},
    )
    site["/ce.xml"] = Reply(
        body=gzip.compress(urlset("https://example.com/ce")), headers={"Content-Encoding": "gzip"}
    )
    site["/double.xml.gz"] = Reply(
        body=gzip.compress(gzip.compress(urlset("https://example.com/double"))),
        headers={"Content-Encoding": "gzip"},
    )
    pairs, tree = crawl(site.url("/index.xml"))
    assert sorted(loc for loc, _ in pairs) == [
        "https://example.com/ce",
        "https://example.com/double",
    ]
    ce = by_url(tree)[site.url("/ce.xml")]
    assert ce.bytes == len(urlset("https://example.com/ce")) and ce.findings == ()
    assert ce.transferred == len(gzip.compress(urlset("https://example.com/ce")))


def test_corrupt_and_unsupported_content_encoding(site: Site) -> None:
    site["/i.xml"] = index(site.url("/bad.xml"), site.url("/br.xml"))
    site["/bad.xml"] = Reply(body=b"\x1f\x8bnot gzip at all", headers={"Content-Encoding": "gzip"})
    site["/br.xml"] = Reply(body=b"xx", headers={"Content-Encoding": "br"})
    _, tree = crawl(site.url("/i.xml"))
    s = by_url(tree)
    assert isinstance(s[site.url("/bad.xml")].error, ParseError)
    assert "corrupt" in str(s[site.url("/bad.xml")].error)
    assert isinstance(s[site.url("/br.xml")].error, FetchError)
    assert "Content-Encoding" in str(s[site.url("/br.xml")].error)


def test_request_headers(site: Site) -> None:
    site["/s.xml"] = urlset("https://example.com/x")
    crawl(site.url("/s.xml"))
    (request,) = site.log
    headers = request.headers
    assert headers["user-agent"] == USER_AGENT
    assert USER_AGENT.startswith("sitemapkit/") and "(+https://github.com/sitemapkit)" in USER_AGENT
    assert headers["accept-encoding"] == "gzip, deflate"


# -- redirects and cycles ----------------------------------------------------------------


def redirect(to: str, status: int = 301) -> Reply:
    return Reply(status, headers={"Location": to})


def test_redirects_are_followed_and_recorded(site: Site) -> None:
    site["/robots.txt"] = redirect("/robots-real.txt")
    site["/robots-real.txt"] = f"Sitemap: {site.url('/old.xml')}".encode()
    site["/old.xml"] = redirect("/older.xml", 302)
    site["/older.xml"] = redirect(site.url("/new.xml"), 308)
    site["/new.xml"] = urlset("https://example.com/n")
    pairs, tree = crawl(site.url("/"))
    assert pairs == [("https://example.com/n", site.url("/old.xml"))]
    (status,) = tree.sitemaps
    assert (status.url, status.final_url, status.status) == (
        site.url("/old.xml"),
        site.url("/new.xml"),
        200,
    )
    assert tree.robots is not None and tree.robots.final_url == site.url("/robots-real.txt")


def test_redirect_loop_and_too_many_redirects(site: Site) -> None:
    site["/i.xml"] = index(site.url("/loop-a"), site.url("/r0"), site.url("/to-file"))
    site["/loop-a"] = redirect("/loop-b")
    site["/loop-b"] = redirect("/loop-a")
    for i in range(7):
        site[f"/r{i}"] = redirect(f"/r{i + 1}")
    site["/to-file"] = redirect("file:///etc/passwd")
    _, tree = crawl(site.url("/i.xml"))
    s = by_url(tree)
    loop = s[site.url("/loop-a")]
    assert isinstance(loop.error, FetchError) and "loop" in str(loop.error)
    assert rules(loop.findings) == ["SM012"]
    many = s[site.url("/r0")]
    assert isinstance(many.error, LimitError) and "More than 5 redirects" in str(many.error)
    assert site.count("/r5") == 1 and site.count("/r6") == 0
    assert "only http(s)" in str(s[site.url("/to-file")].error)
    assert site.count("/loop-a") == 1 and site.count("/loop-b") == 1


def test_index_cycles_end_and_nothing_is_fetched_twice(site: Site) -> None:
    site["/robots.txt"] = "".join(
        f"Sitemap: {site.url(p)}\n" for p in ("/self.xml", "/a.xml", "/b.xml", "/via-redirect.xml")
    ).encode()
    site["/self.xml"] = index(site.url("/self.xml"), site.url("/leaf.xml"))
    site["/a.xml"] = index(site.url("/b.xml"), site.url("/leaf.xml"))
    site["/b.xml"] = index(site.url("/a.xml"), site.url("/robots.txt"))
    site["/via-redirect.xml"] = index(site.url("/alias.xml"), site.url("/leaf2.xml"))
    site["/alias.xml"] = redirect("/via-redirect.xml")
    site["/leaf.xml"] = urlset("https://example.com/l")
    site["/leaf2.xml"] = urlset("https://example.com/l2")
    pairs, tree = crawl(site.url("/"))
    assert sorted(loc for loc, _ in pairs) == ["https://example.com/l", "https://example.com/l2"]
    assert site.hits and all(n == 1 for n in site.hits.values()), site.hits
    s = by_url(tree)
    assert "SM506" in rules(s[site.url("/self.xml")].findings)
    alias = s[site.url("/alias.xml")]
    assert alias.duplicate_of == site.url("/via-redirect.xml") and alias.status == 301


def test_visited_set_over_a_wide_tree(site: Site) -> None:
    children = [site.url(f"/c{i}.xml") for i in range(6)]
    site["/robots.txt"] = (
        f"Sitemap: {site.url('/i1.xml')}\nSitemap: {site.url('/i2.xml')}\n"
        f"Sitemap: {children[0]}\nSitemap: {site.url('/i1.xml')}\n"
    ).encode()
    site["/i1.xml"] = index(*children, children[1])
    site["/i2.xml"] = index(*reversed(children), site.url("/i1.xml"))
    for i, child in enumerate(children):
        site[child.removeprefix(site.base)] = redirect(f"/final{i % 3}.xml")
    for i in range(3):
        site[f"/final{i}.xml"] = urlset(f"https://example.com/f{i}")
    pairs, tree = crawl(site.url("/"), concurrency=8, per_host=4)
    assert all(n == 1 for n in site.hits.values()), site.hits
    assert sorted(loc for loc, _ in pairs) == [f"https://example.com/f{i}" for i in range(3)]
    assert sum(1 for s in tree.sitemaps if s.duplicate_of) == 3
    assert "SM507" in rules(by_url(tree)[site.url("/i1.xml")].findings)


# -- statuses, retries, timeouts, resets -------------------------------------------------


def test_404_and_500_children(site: Site) -> None:
    site["/i.xml"] = index(site.url("/missing.xml"), site.url("/broken.xml"), site.url("/ok.xml"))
    site["/broken.xml"] = Reply(500, b"oops")
    site["/ok.xml"] = urlset("https://example.com/ok")
    pairs, tree = crawl(site.url("/i.xml"), retries=2, backoff=0.01)
    assert pairs == [("https://example.com/ok", site.url("/ok.xml"))]
    s = by_url(tree)
    assert s[site.url("/missing.xml")].status == 404
    assert s[site.url("/broken.xml")].status == 500
    assert site.count("/broken.xml") == 3 and site.count("/missing.xml") == 1
    for url in (site.url("/missing.xml"), site.url("/broken.xml")):
        assert isinstance(s[url].error, FetchError) and rules(s[url].findings) == ["SM012"]
    assert not tree.ok and len(tree.errors) == 2


def test_429_retry_after_is_honoured(site: Site) -> None:
    site["/s.xml"] = lambda _m, headers, n: (
        Reply(429, headers={"Retry-After": "1"})
        if n == 1
        else Reply(body=urlset("https://e.com/x"))
    )
    pairs, tree = crawl(site.url("/s.xml"), retries=3, backoff=5.0)
    assert pairs == [("https://e.com/x", site.url("/s.xml"))]
    first, second = site.times("/s.xml")
    assert 0.95 <= second - first < 3.0
    assert tree.sitemaps[0].status == 200


def test_retry_after_is_capped_and_backoff_grows(site: Site) -> None:
    site["/capped.xml"] = lambda _m, headers, n: (
        Reply(503, headers={"Retry-After": "3600"})
        if n == 1
        else Reply(body=urlset("https://e.com/c"))
    )
    site["/backoff.xml"] = lambda _m, headers, n: (
        Reply(503) if n < 3 else Reply(body=urlset("https://e.com/b"))
    )
    site["/i.xml"] = index(site.url("/capped.xml"), site.url("/backoff.xml"))
    pairs, _ = crawl(site.url("/i.xml"), retries=3, backoff=0.1, max_retry_after=0.2)
    assert sorted(loc for loc, _ in pairs) == ["https://e.com/b", "https://e.com/c"]
    c1, c2 = site.times("/capped.xml")
    assert 0.18 <= c2 - c1 < 1.0
    b1, b2, b3 = site.times("/backoff.xml")
    assert b2 - b1 >= 0.09 and b3 - b2 >= 0.19


def test_slow_server_times_out(site: Site) -> None:
    site["/slow.xml"] = Reply(body=urlset("https://e.com/x"), delay=3.0)
    started = time.monotonic()
    _, tree = crawl(site.url("/slow.xml"), timeout=0.3)
    assert time.monotonic() - started < 2.0
    (status,) = tree.sitemaps
    assert isinstance(status.error, FetchError) and "0.3 s" in str(status.error)
    assert status.status is None and rules(status.findings) == ["SM012"]


def test_stalled_body_times_out_and_keeps_earlier_records(site: Site) -> None:
    body = urlset(*(f"https://example.com/{i}" for i in range(2000)))
    site["/stall.xml"] = Reply(body=body, cut=len(body) // 2, stall=3.0)
    started = time.monotonic()
    pairs, tree = crawl(site.url("/stall.xml"), timeout=0.3, retries=2)
    assert time.monotonic() - started < 2.0
    assert 0 < len(pairs) < 2000
    assert "stalled" in str(tree.sitemaps[0].error)
    assert site.count("/stall.xml") == 1  # records were handed out: no second read


def test_connection_reset_is_retried_before_the_body(site: Site) -> None:
    site["/flaky.xml"] = lambda _m, headers, n: (
        Reply(reset=True) if n == 1 else Reply(body=urlset("https://e.com/x"))
    )
    site["/dead.xml"] = Reply(reset=True)
    site["/i.xml"] = index(site.url("/flaky.xml"), site.url("/dead.xml"))
    pairs, tree = crawl(site.url("/i.xml"), retries=1, backoff=0.01)
    assert pairs == [("https://e.com/x", site.url("/flaky.xml"))]
    dead = by_url(tree)[site.url("/dead.xml")]
    assert isinstance(dead.error, FetchError) and "Connection failed" in str(dead.error)
    assert site.count("/dead.xml") == 2 and site.count("/flaky.xml") == 2


def test_connection_reset_mid_body(site: Site) -> None:
    body = urlset(*(f"https://example.com/{i}" for i in range(2000)))
    site["/cut.xml"] = Reply(body=body, cut=len(body) // 2)
    pairs, tree = crawl(site.url("/cut.xml"), retries=3, backoff=0.01)
    assert 0 < len(pairs) < 2000
    assert isinstance(tree.sitemaps[0].error, FetchError)
    assert site.count("/cut.xml") == 1


def test_connection_refused() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _, tree = crawl(f"http://127.0.0.1:{port}/s.xml", retries=1, backoff=0.01)
    assert isinstance(tree.sitemaps[0].error, FetchError)


# -- budgets and safety ------------------------------------------------------------------


def _bomb(size: int) -> bytes:
    """A gzip stream of ``size`` bytes of white space in 16 MiB members (cheap to build)."""
    member = gzip.compress(b" " * (16 << 20), 1)
    return member * (size // (16 << 20))


def test_gzip_bomb_stops_at_the_cap_fast_and_small(site: Site) -> None:
    bomb = _bomb(1 << 30)  # 1 GiB decompressed, ~1 MiB on the wire
    site["/i.xml"] = index(site.url("/bomb.xml.gz"), site.url("/ce-bomb.xml"))
    site["/bomb.xml.gz"] = bomb
    site["/ce-bomb.xml"] = Reply(body=bomb, headers={"Content-Encoding": "gzip"})
    tracemalloc.start()
    started = time.monotonic()
    try:
        _, tree = crawl(site.url("/i.xml"), max_document_bytes=20 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 10
    assert peak < 30 << 20
    s = by_url(tree)
    for path in ("/bomb.xml.gz", "/ce-bomb.xml"):
        status = s[site.url(path)]
        assert isinstance(status.error, LimitError), status.error
        assert status.bytes <= (20 << 20) + STEP
        assert status.transferred < len(bomb)  # reading stopped early


def test_robots_is_read_up_to_500_kib(site: Site) -> None:
    head = f"Sitemap: {site.url('/a.xml')}\n".encode()
    tail = f"Sitemap: {site.url('/b.xml')}\n".encode()
    site["/robots.txt"] = head + b"#" * 600_000 + b"\n" + tail
    site["/a.xml"] = urlset("https://e.com/a")
    site["/b.xml"] = urlset("https://e.com/b")
    pairs, tree = crawl(site.url("/"))
    assert pairs == [("https://e.com/a", site.url("/a.xml"))]
    assert tree.robots is not None and rules(tree.robots.findings) == ["RB009"]


def test_private_addresses_refused_when_asked(site: Site) -> None:
    site["/s.xml"] = urlset("https://e.com/x")
    _, tree = crawl(site.url("/s.xml"), refuse_private=True)
    error = tree.sitemaps[0].error
    assert isinstance(error, FetchError) and "non-public address '127.0.0.1'" in str(error)
    localhost = site.url("/s.xml").replace("127.0.0.1", "localhost")
    _, tree = crawl(localhost, refuse_private=True)
    assert "non-public" in str(tree.sitemaps[0].error)
    assert site.count("/s.xml") == 0
    pairs, _ = crawl(site.url("/s.xml"))  # off by default
    assert pairs == [("https://e.com/x", site.url("/s.xml"))]


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2606:4700:4700::1111", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("::1", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:10.0.0.1", False),
    ],
)
def test_public_address_check(address: str, public: bool) -> None:
    assert is_public(ipaddress.ip_address(address)) is public


def test_per_host_and_global_concurrency(site: Site) -> None:
    children = [site.url(f"/c{i}.xml") for i in range(6)]
    site["/i.xml"] = index(*children)
    for i in range(6):
        site[f"/c{i}.xml"] = Reply(body=urlset(f"https://e.com/{i}"), delay=0.08)
    pairs, _ = crawl(site.url("/i.xml"), per_host=2)
    assert len(pairs) == 6 and site.max_active == 2
    site.max_active = 0
    site.hits.clear()
    pairs, _ = crawl(site.url("/i.xml"), concurrency=1, per_host=4)
    assert len(pairs) == 6 and site.max_active == 1


def test_budgets_end_to_end(site: Site) -> None:
    site["/i.xml"] = index(*(site.url(f"/c{i}.xml") for i in range(5)))
    for i in range(5):
        site[f"/c{i}.xml"] = urlset(f"https://e.com/{i}")
    pairs, tree = crawl(site.url("/i.xml"), max_sitemaps=3)
    assert len(pairs) == 2 and tree.skipped_count == 3
    pairs, tree = crawl(site.url("/i.xml"), max_depth=0)
    assert pairs == [] and tree.skipped_count == 5


def test_invalid_options() -> None:
    with pytest.raises(ValueError):
        aiter_records("https://example.com/", concurrency=0)
    with pytest.raises(ValueError):
        read_url_records("https://example.com/", timeout=0)


# -- cache -------------------------------------------------------------------------------


def test_conditional_requests_with_a_cache(site: Site, tmp_path: Path) -> None:
    body = gzip.compress(urlset("https://e.com/1", "https://e.com/2"))

    def etagged(_m: str, headers: dict[str, str], n: int) -> Reply:
        if headers.get("if-none-match") == '"v1"':
            return Reply(304, headers={"ETag": '"v1"'})
        return Reply(body=body, headers={"ETag": '"v1"', "Content-Encoding": "gzip"})

    def dated(_m: str, headers: dict[str, str], n: int) -> Reply:
        modified = "Wed, 01 May 2024 10:00:00 GMT"
        if headers.get("if-modified-since") == modified:
            return Reply(304)
        return Reply(body=urlset("https://e.com/3"), headers={"Last-Modified": modified})

    site["/i.xml"] = index(site.url("/e.xml"), site.url("/d.xml"))
    site["/e.xml"] = etagged
    site["/d.xml"] = dated
    first, tree1 = crawl(site.url("/i.xml"), cache_dir=tmp_path / "cache")
    second, tree2 = crawl(site.url("/i.xml"), cache_dir=tmp_path / "cache")
    assert sorted(first) == sorted(second) and len(first) == 3
    s1, s2 = by_url(tree1), by_url(tree2)
    for path in ("/e.xml", "/d.xml"):
        assert not s1[site.url(path)].from_cache
        again = s2[site.url(path)]
        assert again.from_cache and again.status == 304 and again.error is None
        assert again.findings == () and again.entries == s1[site.url(path)].entries
    assert not s2[site.url("/i.xml")].from_cache  # no validators: fetched again
    assert site.count("/e.xml") == 2 and site.count("/d.xml") == 2


# -- parser workers, streaming, entry points ---------------------------------------------


def test_worker_processes_give_the_same_records(site: Site) -> None:
    children = [site.url(f"/c{i}.xml.gz") for i in range(3)]
    site["/i.xml"] = index(*children, site.url("/bomb.xml.gz"))
    for i in range(3):
        locs = [f"https://example.com/{i}/{j}?a=1&amp;b=2" for j in range(3000)]
        site[f"/c{i}.xml.gz"] = gzip.compress(urlset(*locs))
    site["/bomb.xml.gz"] = _bomb(64 << 20)
    local, tree0 = crawl(site.url("/i.xml"), max_document_bytes=20 << 20)
    remote, tree1 = crawl(site.url("/i.xml"), workers=1, max_document_bytes=20 << 20)
    assert len(local) == 9000
    assert sorted(local) == sorted(remote)
    for url in children:
        a, b = by_url(tree0)[url], by_url(tree1)[url]
        assert (a.kind, a.entries, a.bytes, a.findings) == (b.kind, b.entries, b.bytes, b.findings)
    for tree in (tree0, tree1):
        bomb = by_url(tree)[site.url("/bomb.xml.gz")]
        assert isinstance(bomb.error, LimitError)
        # where the cap is passed depends on how the network chunked the body
        assert 20 << 20 < bomb.bytes <= (20 << 20) + STEP


def test_worker_rebuilds_rich_records(site: Site) -> None:
    rich = (
        f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{NS}" '
        'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">'
        "<url><loc>https://e.com/a</loc><lastmod>2024-05-01</lastmod>"
        "<image:image><image:loc>https://e.com/a.jpg</image:loc></image:image></url>"
        "<url><loc>https://e.com/b</loc><changefreq>daily</changefreq><priority>0.5</priority>"
        "</url></urlset>"
    ).encode()
    site["/i.xml"] = index(site.url("/rich.xml"), site.url("/plain.xml"))
    site["/rich.xml"] = rich
    site["/plain.xml"] = rich.replace(b"<image:image><image:loc>https://e.com/a.jpg", b"").replace(
        b"</image:loc></image:image>", b""
    )

    async def records(workers: int) -> list[Url | SitemapRef]:
        async with aiter_records(site.url("/i.xml"), workers=workers) as stream:
            return sorted([r async for r, _ in stream], key=lambda r: (r.loc, repr(r)))

    assert asyncio.run(records(1)) == asyncio.run(records(0))


def test_follow_false_yields_index_entries(site: Site) -> None:
    site["/i.xml"] = index(site.url("/a.xml"))
    pairs, tree = crawl(site.url("/i.xml"), follow=False)
    assert pairs == [(site.url("/a.xml"), site.url("/i.xml"))]
    assert site.count("/a.xml") == 0 and len(tree.sitemaps) == 1


def test_stopping_early_releases_everything(site: Site) -> None:
    site["/i.xml"] = index(*(site.url(f"/c{i}.xml") for i in range(4)))
    for i in range(4):
        site[f"/c{i}.xml"] = urlset(*(f"https://e.com/{i}/{j}" for j in range(5000)))

    async def main() -> int:
        seen = 0
        async with aiter_records(site.url("/i.xml"), workers=1) as stream:
            async for _ in stream:
                seen += 1
                if seen == 10:
                    break
        return seen

    started = time.monotonic()
    assert asyncio.run(main()) == 10
    assert time.monotonic() - started < 20  # not hung (minutes)

    async def stalled_consumer() -> None:
        async with aiter_records(site.url("/i.xml"), workers=0) as stream:
            await stream.__anext__()
            await asyncio.sleep(0.3)  # the producers fill the queue meanwhile

    started = time.monotonic()
    asyncio.run(stalled_consumer())
    with read_url_records(site.url("/i.xml"), workers=0) as it:
        next(it)
    assert time.monotonic() - started < 20  # not hung (minutes)


def test_sync_entry_points_and_report(site: Site) -> None:
    site["/robots.txt"] = f"Sitemap: {site.url('/s.xml')}\nSitemap: www.e.com/rel.xml\n".encode()
    site["/s.xml"] = b"https://e.com/1\nnot a url\n"

    class Report:
        def __init__(self) -> None:
            self.findings: list[Finding] = []
            self.sitemaps: list[str] = []

    report = Report()
    with read_url_records(site.url("/"), workers=0, report=report) as it:
        items = list(it)
    assert [(r.record.loc, r.source) for r in items] == [("https://e.com/1", site.url("/s.xml"))]
    assert [(loc, src) for (loc_rec, src) in items for loc in [loc_rec.loc]] == [
        ("https://e.com/1", site.url("/s.xml"))
    ]
    assert it.tree.urls == 1
    assert report.sitemaps == [site.url("/s.xml")]
    assert [f.rule for f in report.findings] == ["RB003", "SM009"]
    tree = discover_sync(site.url("/"), workers=0)
    assert tree.urls == 1 and len(tree.sitemaps) == 1


@pytest.mark.parametrize("workers", [0, 1])
def test_discover_counts_without_keeping_records(site: Site, workers: int) -> None:
    site["/i.xml"] = index(site.url("/s.xml"), site.url("/t.xml"))
    site["/s.xml"] = urlset(*(f"https://e.com/{i}" for i in range(100)))
    site["/t.xml"] = urlset(*(f"https://e.com/t{i}" for i in range(50)))
    tree = asyncio.run(discover(site.url("/i.xml"), workers=workers))
    assert tree.urls == 150 and len(tree.sitemaps) == 3
    assert all(s.bytes > 0 and s.error is None for s in tree.sitemaps)


def test_strict_mode_stops_at_the_first_error(site: Site) -> None:
    good = [f"https://e.com/{i}" for i in range(3000)]
    site["/s.xml"] = urlset(*good, "not-a-url", "https://e.com/last")
    pairs, tree = crawl(site.url("/s.xml"), strict=True)
    # records of the slice that failed are lost with the exception (parser API)
    assert 0 < len(pairs) < 3000 and [loc for loc, _ in pairs] == good[: len(pairs)]
    assert isinstance(tree.sitemaps[0].error, ParseError)
    assert rules(tree.sitemaps[0].findings) == ["SM201"]


def test_parsing_falls_back_here_when_no_worker_starts(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    site["/i.xml"] = index(site.url("/a.xml"), site.url("/b.xml"))
    site["/a.xml"] = urlset("https://e.com/a")
    site["/b.xml"] = urlset("https://e.com/b")
    monkeypatch.setattr(sys, "executable", "/nonexistent/python3")
    pairs, tree = crawl(site.url("/i.xml"), workers=2)
    assert sorted(loc for loc, _ in pairs) == ["https://e.com/a", "https://e.com/b"]
    assert tree.ok


def test_deflate_content_encoding_zlib_and_raw(site: Site) -> None:
    body = urlset("https://e.com/z")
    raw = zlib.compressobj(wbits=-15)
    site["/i.xml"] = index(site.url("/zlib.xml"), site.url("/raw.xml"))
    site["/zlib.xml"] = Reply(body=zlib.compress(body), headers={"Content-Encoding": "deflate"})
    site["/raw.xml"] = Reply(
        body=raw.compress(body) + raw.flush(), headers={"Content-Encoding": "deflate"}
    )
    pairs, tree = crawl(site.url("/i.xml"))
    assert sorted(pairs) == [
        ("https://e.com/z", site.url("/raw.xml")),
        ("https://e.com/z", site.url("/zlib.xml")),
    ]
    assert tree.ok


def test_decoder_members_padding_and_truncation() -> None:
    data = gzip.compress(b"a" * 300_000) + gzip.compress(b"b") + b"\x00" * 8
    decoder = fetch.ContentDecoder("gzip", "x")
    out = b"".join(
        piece for i in range(0, len(data), 7) for piece in decoder.decode(data[i : i + 7])
    )
    decoder.flush()
    assert out == b"a" * 300_000 + b"b"
    assert all(len(p) <= STEP for p in fetch.ContentDecoder("gzip", "x").decode(data))
    cut = fetch.ContentDecoder("x-gzip", "x")
    list(cut.decode(gzip.compress(b"abc" * 1000)[:20]))
    with pytest.raises(ParseError, match="ends early"):
        cut.flush()
    assert list(fetch.ContentDecoder("identity", "x").decode(b"abc")) == [b"abc"]


def test_retry_after_values() -> None:
    assert fetch.retry_after_seconds("2", 60) == 2.0
    assert fetch.retry_after_seconds("120", 60) == 60.0
    assert fetch.retry_after_seconds(None, 60) is None
    assert fetch.retry_after_seconds("soon", 60) is None
    assert fetch.retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", 60) == 0.0  # in the past
    later = email.utils.format_datetime(
        datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=30), usegmt=True
    )
    wait = fetch.retry_after_seconds(later, 60)
    assert wait is not None and 25 <= wait <= 31


def test_batches_from_workers_are_lazy_columns_equal_to_the_records(site: Site) -> None:
    children = [site.url(f"/c{i}.xml") for i in range(2)]
    site["/i.xml"] = index(*children)
    for i in range(2):
        site[f"/c{i}.xml"] = urlset(*(f"https://e.com/{i}/{j}?a=1&amp;b=2" for j in range(2000)))

    def batches(workers: int) -> dict[str, list[Sequence[Url | SitemapRef]]]:
        out: dict[str, list[Sequence[Url | SitemapRef]]] = {}
        with read_url_records(site.url("/i.xml"), workers=workers) as it:
            for source, records in it.batches():
                out.setdefault(source, []).append(records)
        return out

    local, remote = batches(0), batches(1)
    assert sorted(local) == sorted(remote) == sorted(children)
    for source, parts in remote.items():
        expected = [r for part in local[source] for r in part]
        assert all(isinstance(p, fetch.PlainUrls) for p in parts)
        assert [r for part in parts for r in part] == expected
        assert "\n".join(p.loc_text for p in parts).split("\n") == [r.loc for r in expected]
        first = parts[0]
        assert first[1] == expected[1] and first[:3] == expected[:3] and len(first) > 3


def test_fetch_keywords_are_the_fields_of_fetch_options() -> None:
    from sitemapkit.io.fetch.options import FIELDS, FetchKeywords, FetchOptions

    assert list(FetchKeywords.__annotations__) == list(FIELDS)
    assert FetchOptions().parser_workers >= 0
    with pytest.raises(ValueError, match="workers must not be negative"):
        FetchOptions(workers=-1)


@pytest.mark.parametrize("slow", ["/a.xml", "/n/c.xml", "/n.xml"])
def test_records_come_in_document_order_however_fetches_overlap(site: Site, slow: str) -> None:
    # index -> [a, n (an index) -> [c, d], b]: depth-first, in listing order
    site["/index.xml"] = index(site.url("/a.xml"), site.url("/n.xml"), site.url("/b.xml"))
    site["/n.xml"] = index(site.url("/n/c.xml"), site.url("/n/d.xml"))
    for name in ("a", "n/c", "n/d", "b"):
        site[f"/{name}.xml"] = urlset(*(f"https://example.com/{name}/{i}" for i in range(3)))
    body = site.routes[slow]
    assert isinstance(body, Reply)
    site[slow] = Reply(body=body.body, delay=0.3)  # finishes last, yet comes in its place
    pairs, _ = crawl(site.url("/index.xml"), concurrency=4)
    assert [loc for loc, _ in pairs] == [
        f"https://example.com/{name}/{i}" for name in ("a", "n/c", "n/d", "b") for i in range(3)
    ]
