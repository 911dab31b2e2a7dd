"""core/discovery.py: the discovery flow, driven by hand (no I/O)."""

from __future__ import annotations

import pytest

from sitemapkit.core.discovery import (
    PROBE_PATHS,
    DiscoveryFlow,
    FetchRequest,
    FetchResponse,
    visit_key,
)
from sitemapkit.core.model import SitemapRef, Url
from sitemapkit.errors import FetchError, InputError, LimitError

SITE = "https://example.com/"


def ok(req: FetchRequest, **kwargs: object) -> FetchResponse:
    kwargs.setdefault("final_url", req.url)
    return FetchResponse(req, status=200, **kwargs)  # type: ignore[arg-type]


def one(flow: DiscoveryFlow) -> FetchRequest:
    (req,) = flow.next_requests()
    return req


def robots(flow: DiscoveryFlow, body: bytes, status: int = 200) -> None:
    req = one(flow)
    assert req.purpose == "robots"
    flow.on_response(FetchResponse(req, req.url, status, body=body))


def index(flow: DiscoveryFlow, req: FetchRequest, *children: str) -> None:
    flow.on_records(req, [SitemapRef(c) for c in children])
    flow.on_response(ok(req, kind="sitemapindex", entries=len(children)))


def test_target_kinds() -> None:
    assert one(DiscoveryFlow("https://example.com")).url == "https://example.com/robots.txt"
    assert one(DiscoveryFlow("https://example.com/blog/")).purpose == "robots"
    r = one(DiscoveryFlow("https://example.com/robots.txt"))
    assert (r.url, r.purpose) == ("https://example.com/robots.txt", "robots")
    r = one(DiscoveryFlow("https://example.com/sitemap.xml"))
    assert (r.url, r.purpose, r.via, r.depth) == (
        "https://example.com/sitemap.xml",
        "sitemap",
        "target",
        0,
    )


@pytest.mark.parametrize("target", ["file:///etc/passwd", "ftp://example.com/s.xml", "/s.xml"])
def test_only_http_targets(target: str) -> None:
    with pytest.raises(InputError):
        DiscoveryFlow(target)


def test_robots_sitemaps_are_requested_concurrently() -> None:
    flow = DiscoveryFlow(SITE)
    robots(flow, b"Sitemap: https://example.com/a.xml\nSitemap: https://example.com/b.xml\n")
    reqs = flow.next_requests()
    assert [(r.url, r.via, r.parent) for r in reqs] == [
        ("https://example.com/a.xml", "robots", "https://example.com/robots.txt"),
        ("https://example.com/b.xml", "robots", "https://example.com/robots.txt"),
    ]
    assert flow.tree.robots is not None and flow.tree.robots.status == 200
    for r in reqs:
        flow.on_response(ok(r, kind="urlset", entries=3, size=100))
    assert flow.done
    assert flow.tree.urls == 6 and flow.tree.ok and flow.tree.probes == []


def test_probes_in_order_until_one_answers() -> None:
    flow = DiscoveryFlow(SITE)
    robots(flow, b"", status=404)
    first = one(flow)
    assert (first.url, first.purpose) == ("https://example.com/sitemap.xml", "probe")
    flow.on_response(FetchResponse(first, first.url, 404))
    second = one(flow)
    assert second.url == "https://example.com/" + PROBE_PATHS[1]
    # an HTML page answering 200 is no sitemap: the parser found no kind
    flow.on_response(FetchResponse(second, second.url, 200, error=None))
    third = one(flow)
    flow.on_records(third, [SitemapRef("https://example.com/s1.xml")])
    flow.on_response(ok(third, kind="sitemapindex", entries=1))
    (child,) = flow.next_requests()
    assert (child.url, child.depth, child.via) == ("https://example.com/s1.xml", 1, "index")
    flow.on_response(ok(child, kind="urlset", entries=1))
    assert flow.done
    assert [p.status for p in flow.tree.probes] == [404, 200]
    assert [(s.url, s.via) for s in flow.tree.sitemaps] == [
        ("https://example.com/" + PROBE_PATHS[2], "probe"),
        ("https://example.com/s1.xml", "index"),
    ]


def test_probes_below_the_given_folder_and_when_robots_lists_none() -> None:
    flow = DiscoveryFlow("https://example.com/shop/")
    robots(flow, b"User-agent: *\nDisallow:\n")
    assert one(flow).url == "https://example.com/shop/sitemap.xml"


def test_no_probes_when_robots_lists_sitemaps() -> None:
    flow = DiscoveryFlow(SITE)
    robots(flow, b"Sitemap: https://example.com/a.xml")
    req = one(flow)
    flow.on_response(FetchResponse(req, req.url, 404))
    assert flow.done and flow.next_requests() == []
    (status,) = flow.tree.sitemaps
    assert isinstance(status.error, FetchError) and "404" in str(status.error)
    assert [f.rule for f in status.findings] == ["SM012"]


def test_robots_server_error_is_recorded_and_probing_goes_on() -> None:
    flow = DiscoveryFlow(SITE)
    robots(flow, b"", status=503)
    assert flow.tree.robots is not None and isinstance(flow.tree.robots.error, FetchError)
    assert one(flow).purpose == "probe"


def test_robots_findings_are_kept() -> None:
    flow = DiscoveryFlow(SITE)
    robots(flow, b"Sitemap: /relative.xml\nSite-map: https://example.com/a.xml\n")
    assert flow.tree.robots is not None
    assert [f.rule for f in flow.tree.robots.findings] == ["RB003", "RB008"]
    # the relative value is resolved against the robots.txt URL (issue #11)
    assert [r.url for r in flow.next_requests()] == [
        "https://example.com/relative.xml",
        "https://example.com/a.xml",
    ]


def test_index_listing_itself_is_sm506_and_not_refetched() -> None:
    flow = DiscoveryFlow("https://example.com/index.xml")
    req = one(flow)
    index(flow, req, "https://EXAMPLE.com:443/index.xml#x", "https://example.com/a.xml")
    (child,) = flow.next_requests()
    assert child.url == "https://example.com/a.xml"
    assert [f.rule for f in flow.tree.sitemaps[0].findings] == ["SM506"]


def test_cycle_a_b_a_is_sm506_on_b() -> None:
    flow = DiscoveryFlow("https://example.com/a.xml")
    a = one(flow)
    index(flow, a, "https://example.com/b.xml")
    b = one(flow)
    index(flow, b, "https://example.com/a.xml")
    assert flow.done
    status_b = flow.tree.sitemaps[1]
    assert [f.rule for f in status_b.findings] == ["SM502", "SM506"]


def test_cycle_via_robots_is_read_once() -> None:
    flow = DiscoveryFlow(SITE)
    robots(flow, b"Sitemap: https://example.com/a.xml\nSitemap: https://example.com/b.xml")
    a, b = flow.next_requests()
    index(flow, a, "https://example.com/b.xml", "https://example.com/robots.txt")
    index(flow, b, "https://example.com/a.xml")
    assert flow.done and flow.next_requests() == []
    assert [f.rule for f in flow.tree.sitemaps[0].findings] == ["SM506"]  # robots.txt


def test_duplicate_children_sm507_and_shared_children_read_once() -> None:
    flow = DiscoveryFlow(SITE)
    robots(flow, b"Sitemap: https://example.com/i1.xml\nSitemap: https://example.com/i2.xml")
    i1, i2 = flow.next_requests()
    index(flow, i1, "https://example.com/c.xml", "https://example.com/c.xml")
    index(flow, i2, "https://example.com/c.xml")
    (c,) = flow.next_requests()
    assert c.parent == "https://example.com/i1.xml"
    assert [f.rule for f in flow.tree.sitemaps[0].findings] == ["SM507"]
    assert flow.tree.sitemaps[1].findings == ()


def test_redirects_join_the_visited_set() -> None:
    flow = DiscoveryFlow(SITE)
    robots(flow, b"Sitemap: https://example.com/a.xml\nSitemap: https://example.com/b.xml")
    a, b = flow.next_requests()
    # a → /b.xml, which is read already (or in flight): stop, report as duplicate
    assert flow.on_redirect(a, a.url, "/b.xml") is None
    flow.on_response(FetchResponse(a, a.url, 301))
    assert flow.on_redirect(b, b.url, "https://cdn.example.com/b.xml") == (
        "https://cdn.example.com/b.xml"
    )
    flow.on_response(ok(b, final_url="https://cdn.example.com/b.xml", kind="urlset"))
    status_a, status_b = flow.tree.sitemaps
    assert status_a.duplicate_of == "https://example.com/b.xml" and status_a.findings == ()
    assert status_a.error is None and not status_a.ok and status_b.ok
    assert visit_key("https://cdn.example.com/b.xml") in flow._visited


def test_index_child_that_redirects_to_an_ancestor_is_stopped() -> None:
    flow = DiscoveryFlow("https://example.com/index.xml")
    req = one(flow)
    flow.on_records(req, [SitemapRef("https://example.com/alias.xml")])
    (child,) = flow.next_requests()
    assert flow.on_redirect(child, child.url, "https://example.com/index.xml") is None


def test_redirect_loop_limit_and_scheme() -> None:
    flow = DiscoveryFlow("https://example.com/a.xml")
    req = one(flow)
    assert flow.on_redirect(req, req.url, "/b.xml") == "https://example.com/b.xml"
    with pytest.raises(FetchError, match="loop"):
        flow.on_redirect(req, "https://example.com/b.xml", "/a.xml")
    with pytest.raises(FetchError, match="only http"):
        flow.on_redirect(req, req.url, "file:///etc/passwd")
    flow2 = DiscoveryFlow("https://example.com/0.xml", max_redirects=2)
    req2 = one(flow2)
    assert flow2.on_redirect(req2, req2.url, "/1.xml")
    assert flow2.on_redirect(req2, req2.url, "/2.xml")
    with pytest.raises(LimitError, match="More than 2 redirects"):
        flow2.on_redirect(req2, req2.url, "/3.xml")


def test_depth_budget() -> None:
    flow = DiscoveryFlow("https://example.com/0.xml", max_depth=1)
    index(flow, one(flow), "https://example.com/1.xml")
    r1 = one(flow)
    assert r1.depth == 1
    index(flow, r1, "https://example.com/2.xml")
    assert flow.done
    (skipped,) = flow.tree.skipped
    assert skipped.url == "https://example.com/2.xml" and "max_depth=1" in skipped.reason


def test_sitemap_budget() -> None:
    flow = DiscoveryFlow("https://example.com/0.xml", max_sitemaps=3)
    index(flow, one(flow), *(f"https://example.com/{i}.xml" for i in range(1, 10)))
    assert [r.url for r in flow.next_requests()] == [
        "https://example.com/1.xml",
        "https://example.com/2.xml",
    ]
    assert flow.tree.skipped_count == 7


def test_byte_budget_caps_each_request_and_stops_issuing() -> None:
    flow = DiscoveryFlow("https://example.com/0.xml", max_bytes=1000, max_document_bytes=800)
    req = one(flow)
    assert req.max_bytes == 800
    flow.on_records(req, [SitemapRef("https://example.com/1.xml")])
    flow.on_records(req, [SitemapRef("https://example.com/2.xml")])
    flow.on_response(ok(req, kind="sitemapindex", size=700))
    r1, r2 = flow.next_requests(limit=1) + flow.next_requests(limit=1)
    assert r1.max_bytes == 300 and r2.max_bytes == 300
    flow.on_response(ok(r1, kind="urlset", size=300))
    flow.on_response(ok(r2, kind="urlset", size=300))
    flow3 = DiscoveryFlow("https://example.com/0.xml", max_bytes=100)
    req = one(flow3)
    flow3.on_records(req, [SitemapRef("https://example.com/x.xml")])
    flow3.on_response(ok(req, kind="sitemapindex", size=200))
    assert flow3.next_requests() == [] and flow3.done
    assert "byte budget" in flow3.tree.skipped[0].reason


def test_follow_false_reads_no_children() -> None:
    flow = DiscoveryFlow("https://example.com/0.xml", follow=False)
    index(flow, one(flow), "https://example.com/1.xml")
    assert flow.done and flow.next_requests() == []


def test_next_requests_limit_and_pending() -> None:
    flow = DiscoveryFlow("https://example.com/0.xml")
    req = one(flow)
    flow.on_records(req, [SitemapRef(f"https://example.com/{i}.xml") for i in range(1, 6)])
    assert flow.pending == 6
    assert len(flow.next_requests(limit=2)) == 2
    assert len(flow.next_requests()) == 3
    assert not flow.done


def test_url_records_do_not_queue_anything() -> None:
    flow = DiscoveryFlow("https://example.com/s.xml")
    req = one(flow)
    flow.on_records(req, [Url("https://example.com/a"), Url("https://example.com/b")])
    flow.on_response(ok(req, kind="urlset", entries=2))
    assert flow.done and flow.tree.urls == 2


def test_non_http_children_are_skipped() -> None:
    flow = DiscoveryFlow("https://example.com/0.xml")
    req = one(flow)
    flow._child(req, flow._nodes[req], "ftp://example.com/x.xml")
    assert flow.tree.skipped[0].reason.startswith("not an http(s) URL")


def test_visit_key_normalisation() -> None:
    assert visit_key("http://EXAMPLE.com:80") == "http://example.com/"
    assert visit_key("https://example.com:8443/a?b=1#f") == "https://example.com:8443/a?b=1"
    assert visit_key("http://[::1]:8080/x") == "http://[::1]:8080/x"
    assert visit_key("http://example.com:bad/") == "http://example.com:bad/"


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        ({"max_depth": -1}, "budgets must be positive"),
        ({"max_sitemaps": 0}, "budgets must be positive"),
        ({"max_bytes": 0}, "budgets must be positive"),
        ({"max_document_bytes": 0}, "budgets must be positive"),
        ({"max_redirects": -1}, "max_redirects must not be negative"),
    ],
)
def test_budgets_out_of_range_are_refused(budget: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DiscoveryFlow("https://example.com/", **budget)  # type: ignore[arg-type]


def test_the_budgets_are_one_frozen_value() -> None:
    import dataclasses

    flow = DiscoveryFlow("https://example.com/", max_depth=0, follow=False)
    assert (flow.limits.max_depth, flow.limits.follow) == (0, False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        flow.limits.max_depth = 3  # type: ignore[misc]


def test_document_order_in_the_flow() -> None:
    flow = DiscoveryFlow("https://example.com/index.xml")
    (top,) = flow.next_requests()
    flow.on_records(top, [SitemapRef(f"https://example.com/{n}.xml") for n in "abc"])
    a, b, c = flow.next_requests()
    assert [r.order for r in (top, a, b, c)] == [(), (1,), (2,), (3,)]
    assert not flow.blocked(a.order) and flow.blocked(b.order) and flow.blocked(c.order)
    flow.on_response(FetchResponse(a, a.url, 200, kind="urlset"))
    assert not flow.blocked(b.order) and flow.blocked(c.order)


# -- budgets said: what was not read, grouped (issue #16) ------------------------------------


def test_references_not_read_are_grouped_by_listing_and_budget() -> None:
    flow = DiscoveryFlow(SITE, max_sitemaps=2)
    lines = b"".join(b"Sitemap: https://example.com/r%d.xml\n" % i for i in range(5))
    robots(flow, lines)
    r0, r1 = flow.next_requests()
    index(flow, r0, "https://example.com/c1.xml", "https://example.com/c2.xml")
    flow.on_response(ok(r1, kind="urlset"))
    budget, child = flow.tree.unread
    where = "https://example.com/robots.txt"
    assert (budget.parent, budget.count, budget.first) == (where, 3, "https://example.com/r2.xml")
    assert "max_sitemaps=2" in budget.reason and "--max-sitemaps" in budget.reason
    assert (child.parent, child.count, child.first) == (r0.url, 2, "https://example.com/c1.xml")
    assert flow.tree.skipped_count == 5
    findings = flow.tree.unread_findings()
    assert [(f.rule, f.where) for f in findings] == [("SM012", where), ("SM012", r0.url)]
    assert findings[0].message == (
        f"3 sitemaps it lists were not read: {budget.reason} "
        "(the first: 'https://example.com/r2.xml')"
    )


def test_stop_skips_what_is_queued_and_what_is_listed_later() -> None:
    flow = DiscoveryFlow("https://example.com/i.xml")
    req = one(flow)
    flow.on_records(req, [SitemapRef(f"https://example.com/{i}.xml") for i in range(3)])
    (first,) = flow.next_requests(limit=1)
    flow.stop("the time is up")
    assert flow.next_requests() == []
    flow.on_records(req, [SitemapRef("https://example.com/late.xml")])
    flow.on_response(ok(req, kind="sitemapindex", entries=4))
    flow.drop(first, "the time is up")
    assert flow.done
    (group,) = flow.tree.unread
    assert (group.count, group.first, group.reason) == (
        4,
        "https://example.com/1.xml",
        "the time is up",
    )
    assert [s.url for s in flow.tree.sitemaps] == [req.url]


def test_a_body_cut_after_200_is_said_by_budget() -> None:
    flow = DiscoveryFlow("https://example.com/i.xml", max_bytes=1000, max_document_bytes=800)
    req = one(flow)
    flow.on_records(req, [SitemapRef("https://example.com/a.xml")])
    flow.on_records(req, [SitemapRef("https://example.com/b.xml")])
    flow.on_response(ok(req, kind="sitemapindex", size=700))
    a, b = flow.next_requests()
    flow.on_response(ok(a, kind="urlset", error=FetchError("The deadline passed")))
    size = LimitError("The document is larger than 300 bytes after decompression")
    flow.on_response(ok(b, kind="urlset", error=size))
    by = {s.url: s for s in flow.tree.sitemaps}
    (cut,) = by[a.url].findings
    assert cut.rule == "SM012" and cut.message == (
        "The sitemap was not read to the end: The deadline passed"
    )
    (big,) = by[b.url].findings
    assert big.rule == "SM006" and "max_bytes=1,000, --max-bytes" in big.message


def test_a_robots_txt_cut_after_200_is_not_probed() -> None:
    flow = DiscoveryFlow(SITE)
    req = one(flow)
    flow.on_response(ok(req, error=FetchError("The deadline passed")))
    assert flow.done and flow.tree.probes == []
    nothing = flow.nothing_found()
    assert nothing is not None and "The deadline passed" in nothing.message
