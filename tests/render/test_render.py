"""The report's parts without a browser: the counts, the page's escaping, the charts' data."""

from __future__ import annotations

import itertools
import json
import random

import lxml.html
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapkit.core.finding import Finding
from sitemapkit.lint.report import ValidationReport, render_json
from sitemapkit.render import SetStats, render_html
from sitemapkit.render.stats import MAX_HOSTS
from sitemapkit.render.view import build_page, tree_rows

SM = "http://www.sitemaps.org/schemas/sitemap/0.9"
IMAGE = "http://www.google.com/schemas/sitemap-image/1.1"
XHTML = "http://www.w3.org/1999/xhtml"


def urlset(*rows: str) -> bytes:
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SM}" '
    head += f'xmlns:image="{IMAGE}" xmlns:xhtml="{XHTML}">\n'
    return (head + "\n".join(rows) + "\n</urlset>\n").encode()


DOC = urlset(
    "<url><loc>https://a.example/1</loc><lastmod>2024-01-31T23:00:00-05:00</lastmod>"
    "<changefreq>daily</changefreq><priority>0.4</priority></url>",
    "<url><loc>https://a.example/2</loc><lastmod>2024-02-01T02:00:00+00:00</lastmod>"
    "<image:image><image:loc>https://a.example/i.png</image:loc></image:image></url>",
    "<url><loc>https://B.example:8080/3</loc><lastmod>2023-11-05</lastmod>"
    '<xhtml:link rel="alternate" hreflang="de" href="https://b.example:8080/de/3"/></url>',
)


def test_the_counts_of_a_document() -> None:
    stats = SetStats()
    doc = stats.add("s.xml", [DOC])
    assert (doc.kind, doc.entries, doc.urls, doc.size, doc.plain, doc.gzip) == (
        "urlset",
        3,
        3,
        len(DOC),
        len(DOC),
        False,
    )
    # compared as instants: 23:00-05:00 on Jan 31 is 04:00 UTC on Feb 1, after 02:00 UTC
    assert doc.lastmod == "2024-01-31T23:00:00-05:00"
    assert dict(stats.months) == {"2024-01": 1, "2024-02": 1, "2023-11": 1}
    assert dict(stats.changefreq) == {"daily": 1, "none": 2}
    assert dict(stats.priority) == {"0.4": 1, "none": 2}
    assert dict(stats.extensions) == {"image": 1, "video": 0, "news": 0, "hreflang": 1}
    assert stats.hosts == {"a.example", "b.example:8080"}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=len(DOC) - 1), max_size=8))
def test_the_counts_do_not_depend_on_how_the_bytes_are_split(cuts: list[int]) -> None:
    edges = [0, *sorted(set(cuts)), len(DOC)]
    pieces = [DOC[a:b] for a, b in itertools.pairwise(edges)]
    whole, split = SetStats(), SetStats()
    whole.add("s.xml", [DOC])
    split.add("s.xml", pieces)
    assert split == whole


def test_hosts_are_counted_up_to_a_bound() -> None:
    rows = [f"<url><loc>https://h{i}.example/</loc></url>" for i in range(MAX_HOSTS + 5)]
    stats = SetStats()
    stats.add("s.xml", [urlset(*rows)])
    assert stats.urls == MAX_HOSTS + 5
    assert len(stats.hosts) == MAX_HOSTS and stats.more_hosts


def test_a_damaged_document_counts_what_was_read() -> None:
    stats = SetStats()
    doc = stats.add("s.xml", [DOC[: DOC.index(b"<url><loc>https://B")] + b"<url><loc>x</lo"])
    assert doc.urls == 2 and stats.urls == 2


def test_a_set_of_many_sitemaps_is_charted_by_size_class() -> None:
    stats = SetStats()
    report = ValidationReport()
    for i in range(45):
        doc = stats.add(f"s{i}.xml", [urlset("<url><loc>https://a.example/</loc></url>")])
        doc.urls = 12_000 if i < 5 else 60_000 if i == 5 else 10
        report.files.append(doc.name)
    chart = build_page(report, stats, title="t").charts[1]
    assert chart.title == "URLs per sitemap"
    assert [b.title for b in chart.bars if not b.title.endswith(": 0")] == [
        "0k–5k: 39",
        "10k–15k: 5",
        "50k+: 1",
    ]


def test_lastmods_over_more_than_ten_years_are_charted_by_year() -> None:
    stats = SetStats()
    stats.add(
        "s.xml",
        [
            urlset(
                "<url><loc>https://a.example/1</loc><lastmod>2001-03-01</lastmod></url>",
                "<url><loc>https://a.example/2</loc><lastmod>2024-05-01</lastmod></url>",
                "<url><loc>https://a.example/3</loc><lastmod>2024-06-01</lastmod></url>",
            )
        ],
    )
    chart = build_page(ValidationReport(files=["s.xml"]), stats, title="t").charts[0]
    assert [b.title for b in chart.bars] == ["2001: 1", "2024: 2"]


# Text as documents hold it: markup, quotes, the ends of script elements and comments.
_TRICKY = st.lists(
    st.one_of(
        st.sampled_from(["<", ">", "&", '"', "'", "</script>", "</SCRIPT ", "<!--", "-->", "\\"]),
        st.characters(blacklist_categories=("Cs", "Cc")),
    ),
    max_size=12,
).map("".join)


@settings(max_examples=60, deadline=None)
@given(message=_TRICKY, loc=_TRICKY, where=_TRICKY)
def test_the_page_holds_document_text_as_text(message: str, loc: str, where: str) -> None:
    finding = Finding("SM301", "error", message, where or None, 3, 7, loc or None)
    report = ValidationReport(findings=[finding], files=[where], notes=[message])
    page = render_html(report, SetStats(), title=message)
    dom = lxml.html.fromstring(page)
    scripts = dom.xpath("//script")
    assert len(scripts) == 2  # nothing in the text made an element
    assert json.loads(scripts[0].text) == json.loads(render_json(report))
    (row,) = dom.xpath('//table[@class="findings"]/tbody/tr')
    cells = [td.text_content() for td in row]
    assert cells[2] == message and cells[4] == loc


def test_the_cap_per_rule_is_kept_in_document_order() -> None:
    rnd = random.Random(7)
    findings = [
        Finding(rnd.choice(["SM301", "SM402"]), "error", f"m{i}", "s.xml", i + 1) for i in range(60)
    ]
    report = ValidationReport(findings=findings, files=["s.xml"])
    page = build_page(report, SetStats(), title="t", per_rule=10)
    assert [r.message for r in page.findings] == [
        f.message
        for f in findings
        if sum(1 for g in findings[: findings.index(f) + 1] if g.rule == f.rule) <= 10
    ]
    counts = {rule: sum(1 for f in findings if f.rule == rule) - 10 for rule in ("SM301", "SM402")}
    assert page.hidden == counts


def test_a_robots_txt_of_the_set_lists_its_sitemaps_under_it() -> None:
    stats = SetStats()
    robots = stats.add(
        "https://e.example/robots.txt",
        [b"User-agent: *\nSitemap: https://e.example/s.xml\n", b"Sitemap: /t.xml\n"],
    )
    assert (robots.kind, robots.entries) == ("robots.txt", 2)
    assert robots.children == ["https://e.example/s.xml", "https://e.example/t.xml"]
    stats.add("https://e.example/s.xml", [urlset("<url><loc>https://e.example/a</loc></url>")])
    report = ValidationReport(files=["https://e.example/robots.txt", "https://e.example/s.xml"])
    rows = tree_rows(report, stats)
    assert [(r.name, r.depth, r.kind) for r in rows] == [
        ("https://e.example/robots.txt", 0, "robots.txt"),
        ("https://e.example/s.xml", 1, "urlset"),
    ]
    assert stats.urls == 1  # a robots.txt lists sitemaps, not pages


def test_documents_after_an_index_that_it_does_not_list_are_not_its_children() -> None:
    stats = SetStats()
    index = f'<sitemapindex xmlns="{SM}"><sitemap><loc>https://e.example/in/a.xml</loc>'
    index += "</sitemap></sitemapindex>"
    stats.add("site/index.xml", [index.encode()])
    for name in ("site/a.xml", "other/b.xml"):
        stats.add(name, [urlset("<url><loc>https://e.example/x</loc></url>")])
    report = ValidationReport(files=["site/index.xml", "site/a.xml", "other/b.xml"])
    assert [(r.name, r.depth) for r in tree_rows(report, stats)] == [
        ("site/index.xml", 0),
        ("site/a.xml", 1),
        ("other/b.xml", 0),
    ]
