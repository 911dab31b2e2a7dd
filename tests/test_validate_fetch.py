"""``validate`` fetches its URL targets with the async machinery: ``--timeout``, one
connection pool for the whole command (the online checks included), Retry-After, bounded
redirects and bodies. Against the real server of :mod:`tests.site`."""

from __future__ import annotations

import gzip
import threading
import time

from sitemapkit.core.compression import STEP
from sitemapkit.io.fetch import FetchOptions
from sitemapkit.validation import Fetched, HttpFetcher, validate

from .conftest import cli
from .site import Reply, Site

HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
XML = {"Content-Type": "application/xml"}


def urlset(site: Site, *paths: str) -> bytes:
    rows = "".join(f"<url><loc>{site.url(p)}</loc></url>\n" for p in paths)
    return (HEAD + f"<urlset {NS}>\n{rows}</urlset>\n").encode()


def index(site: Site, *paths: str) -> bytes:
    rows = "".join(f"<sitemap><loc>{site.url(p)}</loc></sitemap>\n" for p in paths)
    return (HEAD + f"<sitemapindex {NS}>\n{rows}</sitemapindex>\n").encode()


def test_a_stalled_server_fails_within_the_timeout_naming_url_and_timeout(site: Site) -> None:
    site["/sitemap.xml"] = Reply(200, urlset(site, "/a"), XML, delay=8.0)
    url = site.url("/sitemap.xml")
    start = time.monotonic()
    code, out, _ = cli(["validate", url, "--timeout", "0.5"])
    elapsed = time.monotonic() - start
    assert code == 3  # unreadable
    assert elapsed < 6, elapsed  # the 0.5 s timeout, not the server's 8 s
    assert url in out and "no answer within 0.5 s" in out
    assert site.count("/sitemap.xml") == 1  # a timeout is not retried


def test_an_index_and_its_children_come_over_one_connection(site: Site) -> None:
    site["/sitemap.xml"] = Reply(200, index(site, "/a.xml", "/b.xml", "/c.xml"), XML)
    for name in ("a", "b", "c"):
        site[f"/{name}.xml"] = Reply(200, urlset(site, f"/{name}"), XML)
    code, out, _ = cli(["validate", site.url("/sitemap.xml"), "--format", "json"])
    assert code == 0, out
    assert site.paths() == {"/sitemap.xml", "/a.xml", "/b.xml", "/c.xml"}
    assert site.connections == 1


def test_the_online_checks_share_the_fetchers_pool(site: Site) -> None:
    site["/robots.txt"] = Reply(200, b"User-agent: *\nAllow: /\n")
    site["/sitemap.xml"] = Reply(200, index(site, "/a.xml", "/b.xml"), XML)
    for name in ("a", "b"):
        site[f"/{name}.xml"] = Reply(200, urlset(site, f"/{name}"), XML)
    code, out, _ = cli(["validate", site.url("/sitemap.xml"), "--online"])
    assert code == 0, out
    assert site.count("/robots.txt") == 1 and site.count("/a.xml") == 1
    # the sitemaps and robots.txt, fetched one after the other by one client
    assert site.connections == 1


def test_retry_after_is_honoured_on_a_503(site: Site) -> None:
    body = urlset(site, "/a")

    def route(method: str, headers: dict[str, str], count: int) -> Reply:
        if count == 1:
            return Reply(503, b"busy", {"Retry-After": "1"})
        return Reply(200, body, XML)

    site["/sitemap.xml"] = route
    code, out, _ = cli(["validate", site.url("/sitemap.xml")])
    assert code == 0, out
    first, second = site.times("/sitemap.xml")
    assert second - first >= 0.9


def test_a_503_that_stays_is_reported_as_the_status(site: Site) -> None:
    site["/sitemap.xml"] = Reply(503, b"busy", {"Retry-After": "0"})
    with HttpFetcher(retries_options(1)) as fetcher:
        report = validate(site.url("/sitemap.xml"), fetcher=fetcher)
    assert [f.rule for f in report.findings] == ["SM012"]
    assert "HTTP 503" in report.findings[0].message
    assert site.count("/sitemap.xml") == 2  # one retry


def retries_options(retries: int) -> FetchOptions:
    return FetchOptions(retries=retries, backoff=0.0)


def test_redirects_are_followed_and_bounded(site: Site) -> None:
    site["/sitemap.xml"] = Reply(200, urlset(site, "/a"), XML)
    site["/old.xml"] = Reply(301, b"", {"Location": "/sitemap.xml"})
    for i in range(7):
        site[f"/loop{i}"] = Reply(302, b"", {"Location": f"/loop{i + 1}"})
    with HttpFetcher(timeout=5) as fetcher:
        got = fetcher.fetch(site.url("/old.xml"), max_bytes=1_000)
        assert got.url == site.url("/sitemap.xml") and got.status == 200
        report = validate(site.url("/loop0"), fetcher=fetcher)
    [(where, why)] = report.unreadable
    assert where == site.url("/loop0") and "redirected more than 5 times" in why
    assert site.count("/loop5") == 1 and site.count("/loop6") == 0


def test_a_content_encoding_bomb_stays_bounded(site: Site) -> None:
    bomb = gzip.compress(b"\0" * 64_000_000)  # ~62 KB on the wire
    site["/bomb.xml"] = Reply(200, bomb, {**XML, "Content-Encoding": "gzip"})
    with HttpFetcher(timeout=5) as fetcher:
        got: Fetched = fetcher.fetch(site.url("/bomb.xml"), max_bytes=100_000)
    assert 100_000 < len(got.body) <= 100_000 + STEP


def test_a_fetcher_given_is_used_and_not_closed() -> None:
    class Canned:
        def __init__(self) -> None:
            self.urls: list[str] = []

        def fetch(self, url: str, *, max_bytes: int) -> Fetched:
            self.urls.append(url)
            return Fetched(url, 200, b"<urlset/>")

    canned = Canned()
    report = validate("https://example.com/sitemap.xml", fetcher=canned)
    assert canned.urls == ["https://example.com/sitemap.xml"]
    assert report.files == ["https://example.com/sitemap.xml"]


def test_a_stalled_child_is_unreadable_and_the_others_are_validated(site: Site) -> None:
    site["/sitemap.xml"] = Reply(200, index(site, "/slow.xml", "/b.xml"), XML)
    site["/slow.xml"] = Reply(200, urlset(site, "/a"), XML, delay=8.0)
    site["/b.xml"] = Reply(200, urlset(site, "/b"), XML)
    start = time.monotonic()
    report = validate(site.url("/sitemap.xml"), timeout=0.5)
    assert time.monotonic() - start < 6  # the 0.5 s timeout, not the server's 8 s
    [(where, why)] = report.unreadable
    assert where == site.url("/slow.xml") and "no answer within 0.5 s" in why
    assert site.url("/b.xml") in report.files


def test_the_default_fetcher_is_closed_with_the_command(site: Site) -> None:
    def loops() -> int:
        return sum(t.name.startswith("sitemapkit-") for t in threading.enumerate())

    site["/sitemap.xml"] = Reply(200, urlset(site, "/a"), XML)
    before = loops()
    report = validate(site.url("/sitemap.xml"), online=True)
    assert report.files == [site.url("/sitemap.xml")]
    assert loops() == before
