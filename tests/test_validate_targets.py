"""``validate`` takes what ``read`` takes (issue #12 §3): a site, a robots.txt (local or at a
URL), files, folders, an index with its children beside it; and validates what it finds:
the robots.txt's ``Sitemap:`` lines, every sitemap, the set. Against the real server of
:mod:`tests.site`, through the command's entry point."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapkit import ReadReport, validate
from sitemapkit.reader import read_targets
from sitemapkit.validation.site import with_columns

from .conftest import DECL, SM, cli, urlset
from .site import Reply, Site, html

XML = {"Content-Type": "application/xml"}


def index(*locs: str) -> str:
    rows = "".join(
        f"<sitemap><loc>{loc}</loc><lastmod>2024-05-01</lastmod></sitemap>\n" for loc in locs
    )
    return f'{DECL}<sitemapindex xmlns="{SM}">\n{rows}</sitemapindex>\n'


def url(loc: str, extra: str = "") -> str:
    return f"<url><loc>{loc}</loc>{extra}</url>"


def _json(args: list[str]) -> tuple[int, dict[str, Any]]:
    code, out, _ = cli(["validate", *args, "--format", "json"])
    return code, json.loads(out)


def _rules(doc: dict[str, Any]) -> set[str]:
    return {f["rule"] for f in doc["findings"]}


# -- a site -----------------------------------------------------------------------------------


def test_a_site_root_is_validated_through_robots_txt_not_as_its_html_home_page(
    site: Site,
) -> None:
    site["/"] = html()
    site["/robots.txt"] = f"User-agent: *\nAllow: /\nSitemap: {site.url('/idx.xml')}\n".encode()
    site["/idx.xml"] = Reply(200, index(site.url("/a.xml"), site.url("/b.xml")).encode(), XML)
    site["/a.xml"] = Reply(200, urlset(url(site.url("/a"))).encode(), XML)
    site["/b.xml"] = Reply(
        200, urlset(url(site.url("/b"), "<lastmod>2024/05/01</lastmod>")).encode(), XML
    )
    code, doc = _json([site.url("/")])
    assert code == 1  # the child's error
    assert doc["summary"]["files"] == 4  # robots.txt, the index, its two children
    assert [(f["rule"], f["file"], f["line"]) for f in doc["findings"]] == [
        ("SM301", site.url("/b.xml"), 3)
    ]
    assert site.count("/") == 0  # the home page is not a sitemap: never requested
    assert site.connections == 1  # one fetcher, robots.txt included
    assert not doc["summary"]["unreadable"]


def test_a_site_without_robots_txt_is_found_at_a_known_path(site: Site) -> None:
    site["/sitemap.xml"] = html()  # a "soft 404": 200 and a page, not a sitemap
    site["/sitemap_index.xml"] = Reply(200, index(site.url("/a.xml")).encode(), XML)
    site["/a.xml"] = Reply(200, urlset(url(site.url("/a"))).encode(), XML)
    code, doc = _json([site.url("/")])
    assert (code, doc["findings"]) == (0, [])  # no SM005 for the page at /sitemap.xml
    assert doc["summary"]["files"] == 2
    assert site.count("/sitemap_index.xml") == 1  # the probe's answer is the one validated


def test_robots_txt_without_sitemap_line_gets_a_note_when_a_known_path_holds_one(
    site: Site,
) -> None:
    site["/robots.txt"] = b"User-agent: *\nDisallow:\n"
    site["/sitemap.xml"] = Reply(200, urlset(url(site.url("/a"))).encode(), XML)
    code, out, _ = cli(["validate", site.url("/")])
    assert code == 0
    assert (
        f"note: {site.url('/robots.txt')} lists no sitemap; {site.url('/sitemap.xml')} was "
        f"found at a known path: add 'Sitemap: {site.url('/sitemap.xml')}' to robots.txt"
    ) in out


def test_a_site_with_nothing_says_what_was_tried_and_exits_3_as_read_does(
    site: Site, tmp_path: Path
) -> None:
    site.static(tmp_path)
    code, out, _ = cli(["validate", site.url("/")])
    assert code == 3 == cli(["read", site.url("/")])[0]
    assert "SM012" in out and f"No sitemap found for {site.url('/')}" in out
    assert f"{site.url('/robots.txt')} HTTP 404" in out
    for path in ("/sitemap.xml", "/sitemap_index.xml", "/wp-sitemap.xml"):
        assert f"{site.url(path)} HTTP 404" in out
    assert f"error: could not read {site.url('/')}: no sitemap found to validate" in out


def test_a_host_that_does_not_answer_exits_3() -> None:
    code, out, _ = cli(["validate", "http://127.0.0.1:9/", "--timeout", "2"])
    assert code == 3 and "SM012" in out and "robots.txt" in out


def test_a_url_that_is_not_http_is_unreadable_not_a_traceback() -> None:
    code, out, err = cli(["validate", "ftp://example.com/sitemap.xml"])
    assert code == 3 and "Traceback" not in err
    assert "could not read ftp://example.com/sitemap.xml" in out and "http(s)" in out


# -- a robots.txt at a URL --------------------------------------------------------------------


def test_a_robots_txt_url_has_its_sitemap_lines_checked_then_its_sitemaps(site: Site) -> None:
    site["/robots.txt"] = (
        "# sitemaps\nUser-agent: *\n  Sitemap: /s.xml\n"
        f"Site-map: {site.url('/t.xml')}\n"
        f"Sitemap: {site.url('/gone.xml')}\n"
    ).encode()
    site["/s.xml"] = Reply(200, urlset(url(site.url("/a"))).encode(), XML)
    site["/t.xml"] = Reply(200, urlset(url(site.url("/b"))).encode(), XML)
    robots = site.url("/robots.txt")
    code, doc = _json([robots])
    assert code == 0  # warnings only
    found = [(f["rule"], f["severity"], f["file"], f["line"], f["column"]) for f in doc["findings"]]
    assert found == [
        ("RB003", "warning", robots, 3, 12),  # relative: resolved, but Google ignores it
        ("RB008", "warning", robots, 4, 11),  # the typo
        ("SM012", "warning", site.url("/gone.xml"), None, None),  # listed, not reachable
    ]
    assert site.count("/s.xml") == 1 and site.count("/t.xml") == 1
    assert doc["summary"]["files"] == 4  # robots.txt and the three sitemaps it lists


def test_the_text_report_shows_a_robots_finding_with_its_line(site: Site) -> None:
    site["/robots.txt"] = b"User-agent: *\nSitemap: /s.xml\n"
    site["/s.xml"] = Reply(200, urlset(url(site.url("/a"))).encode(), XML)
    code, out, _ = cli(["validate", site.url("/robots.txt")])
    assert code == 0  # a warning
    lines = out.splitlines()
    at = lines.index(site.url("/robots.txt"))
    assert lines[at + 1].split()[:3] == ["2:10", "warning", "RB003"]
    assert lines[at + 2].split("|", 1)[1].strip() == "Sitemap: /s.xml"


def test_a_robots_txt_url_with_no_follow_checks_only_the_robots_txt(site: Site) -> None:
    site["/robots.txt"] = f"Sitemap: {site.url('/s.xml')}\n".encode()
    code, doc = _json([site.url("/robots.txt"), "--no-follow"])
    assert (code, doc["findings"], doc["summary"]["files"]) == (0, [], 1)
    assert site.paths() == set()


# -- a local robots.txt -----------------------------------------------------------------------


def test_a_local_robots_txt_checks_its_lines_and_the_sitemaps_beside_it(tmp_path: Path) -> None:
    (tmp_path / "robots.txt").write_text(
        "User-agent: *\n"
        "Sitemap: https://example.com/sitemap.xml\n"
        "Sitemap:   /relative.xml\n"
        "Sitemap: https://example.com/missing.xml\n"
    )
    (tmp_path / "sitemap.xml").write_text(
        urlset(url("https://example.com/a"), url("https://elsewhere.example/b"))
    )
    code, doc = _json([str(tmp_path / "robots.txt")])
    assert code == 1
    robots, sitemap = str(tmp_path / "robots.txt"), str(tmp_path / "sitemap.xml")
    found = [(f["rule"], f["severity"], f["file"], f["line"], f["column"]) for f in doc["findings"]]
    # a relative value cannot be resolved without the robots.txt's URL: dropped, an error
    assert ("RB003", "error", robots, 3, 12) in found
    # the sitemap beside it is validated at the URL the line gives: its location rules apply
    assert ("SM210", "error", sitemap, 4, 6) in found
    assert doc["summary"]["files"] == 2
    # offline, nothing is fetched: the one not beside it is noted
    assert doc["summary"]["not_checked"] == [
        {
            "sitemap": "https://example.com/missing.xml",
            "reason": "no file of its name beside the index",
        }
    ]


def test_a_local_robots_txt_published_at_a_url_resolves_relative_lines(tmp_path: Path) -> None:
    (tmp_path / "robots.txt").write_text("Sitemap: /sitemap.xml\n")
    (tmp_path / "sitemap.xml").write_text(urlset(url("https://example.com/a")))
    code, doc = _json(
        [str(tmp_path / "robots.txt"), "--published-at", "https://example.com/robots.txt"]
    )
    assert code == 0 and doc["summary"]["files"] == 2
    assert [(f["rule"], f["severity"]) for f in doc["findings"]] == [("RB003", "warning")]


def test_a_local_robots_txt_fetches_what_is_not_beside_it_only_online(
    site: Site, tmp_path: Path
) -> None:
    (tmp_path / "robots.txt").write_text(f"Sitemap: {site.url('/s.xml')}\n")
    site["/s.xml"] = Reply(200, urlset(url(site.url("/a"))).encode(), XML)
    code, doc = _json([str(tmp_path / "robots.txt")])
    assert code == 0 and site.paths() == set()
    assert doc["summary"]["not_checked"][0]["sitemap"] == site.url("/s.xml")
    code, doc = _json([str(tmp_path / "robots.txt"), "--online"])
    assert code == 0 and doc["summary"]["files"] == 2 and not doc["summary"]["not_checked"]
    assert site.count("/s.xml") >= 1


def test_online_checks_a_local_robots_txts_sitemaps_where_they_are_published(
    site: Site, tmp_path: Path
) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_text(f"Sitemap: {site.url('/s.xml')}\n")
    (tmp_path / "s.xml").write_text(urlset(url(site.url("/a"))))
    site["/s.xml"] = Reply(404, b"")
    code, doc = _json([str(robots), "--published-at", site.url("/robots.txt"), "--online"])
    assert code == 0 and doc["summary"]["files"] == 2
    # the sitemap beside it is validated locally, its published copy is requested: SM012;
    # the robots.txt is not a sitemap: its own URL is not checked as one
    assert [(f["rule"], Path(f["file"]).name) for f in doc["findings"]] == [("SM012", "s.xml")]
    assert "404" in doc["findings"][0]["message"]


def test_a_robots_txt_is_known_by_its_content_too(tmp_path: Path) -> None:
    (tmp_path / "crawl-rules.txt").write_text("User-agent: *\nSitemap: /s.xml\n")
    code, doc = _json([str(tmp_path / "crawl-rules.txt")])
    assert "SM009" not in _rules(doc) and "SM204" not in _rules(doc)
    assert [(f["rule"], f["line"]) for f in doc["findings"]] == [("SM012", None), ("RB003", 2)]
    assert code == 1


def test_robots_rules_are_selected_and_ignored_by_id(tmp_path: Path) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_text("Site-map: https://example.com/s.xml\nSitemap: /r.xml\n")
    (tmp_path / "s.xml").write_text(urlset(url("https://example.com/a#x")))
    assert _rules(_json([str(robots)])[1]) == {"RB003", "RB008", "SM208"}
    assert _rules(_json([str(robots), "--ignore", "RB003"])[1]) == {"RB008", "SM208"}
    assert _rules(_json([str(robots), "--select", "rb"])[1]) == {"RB003", "RB008"}
    assert _rules(_json([str(robots), "--select", "SM2"])[1]) == {"SM208"}
    code, _, err = cli(["validate", str(robots), "--select", "RB999"])
    assert code == 2 and "'RB999' names no rule" in err


# -- folders and local indexes ----------------------------------------------------------------


@pytest.fixture
def public(tmp_path: Path) -> Path:
    """A build folder without robots.txt: an index of two children (one with an error on
    line 3), and a stray sitemap that repeats a URL of a child."""
    folder = tmp_path / "public"
    folder.mkdir()
    (folder / "sitemap_index.xml").write_text(
        index("https://example.com/sitemap-1.xml", "https://example.com/sitemap-2.xml")
    )
    (folder / "sitemap-1.xml").write_text(urlset(url("https://example.com/a")))
    (folder / "sitemap-2.xml").write_text(
        urlset(url("https://example.com/b", "<lastmod>2024/05/01</lastmod>"))
    )
    (folder / "extra.xml").write_text(urlset(url("https://example.com/a")))
    return folder


def test_a_folder_is_validated_as_one_set_indexes_first(public: Path) -> None:
    code, doc = _json([str(public)])
    assert code == 1
    assert [(f["rule"], Path(f["file"]).name, f["line"], f["column"]) for f in doc["findings"]] == [
        ("SM301", "sitemap-2.xml", 3, 38),  # the <lastmod>
        ("SM215", "extra.xml", 3, 6),  # /a is in sitemap-1.xml too
    ]
    assert doc["summary"]["files"] == 4 and not doc["summary"]["not_checked"]


def test_a_folder_validates_what_read_reads(public: Path) -> None:
    report = ReadReport()
    for _ in read_targets([(str(public), None)], report=report):
        pass
    assert validate(public).files == report.sitemaps


def test_a_folder_with_robots_txt_starts_there(public: Path) -> None:
    (public / "robots.txt").write_text("Sitemap: https://example.com/sitemap_index.xml\n")
    report = validate(public)
    assert [Path(f).name for f in report.files] == [
        "robots.txt",
        "sitemap_index.xml",
        "sitemap-1.xml",
        "sitemap-2.xml",
    ]
    assert not report.unreadable


def test_an_empty_folder_is_nothing_to_validate(tmp_path: Path) -> None:
    code, out, _ = cli(["validate", str(tmp_path)])
    assert code == 3
    assert "SM012" in out and "the folder holds no robots.txt and no sitemap file" in out


def test_a_local_index_without_its_url_checks_the_children_beside_it(public: Path) -> None:
    (public / "sitemap_index.xml").write_text(
        index(*(f"https://example.com/sitemap-{n}.xml" for n in (1, 2, 3)))
    )
    code, out, _ = cli(["validate", str(public / "sitemap_index.xml")])
    assert code == 1
    assert f"{public / 'sitemap-2.xml'}\n" in out and "SM301" in out
    lines = out.splitlines()
    # the one child missing is noted once; the others were checked
    assert [n for n in lines if n.startswith("note: not checked")] == [
        "note: not checked: https://example.com/sitemap-3.xml "
        "(no file of its name beside the index)"
    ]
    notes = [n for n in lines if "URL of the index is unknown" in n]
    assert notes == [
        f"note: {public / 'sitemap_index.xml'}: the URL of the index is unknown, so SM504 and "
        "SM505 (its children on its own site and under its folder) were not checked; its "
        "children beside it were found by file name and checked as published at the URLs it "
        "lists. Give --published-at URL (the index's URL) to check everything"
    ]
    assert lines[-1] == "3 sitemaps, 5 entries: 1 error, 0 warnings (SM301 ×1); 1 not checked"


def test_children_found_by_name_are_checked_at_the_url_the_index_lists(tmp_path: Path) -> None:
    (tmp_path / "sitemap.xml").write_text(index("https://example.com/blog/sitemap-1.xml"))
    (tmp_path / "sitemap-1.xml").write_text(
        urlset(url("https://example.com/blog/a"), url("https://example.com/shop/b"))
    )
    code, doc = _json([str(tmp_path / "sitemap.xml")])
    assert code == 1
    assert [(f["rule"], f["line"], f["loc"]) for f in doc["findings"]] == [
        ("SM213", 4, "https://example.com/shop/b")  # outside the child's own folder
    ]


def test_a_child_whose_name_is_the_index_s_own_is_noted_not_taken_for_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "sitemap.xml").write_text(index("https://example.com/news/sitemap.xml"))
    report = validate(tmp_path / "sitemap.xml")
    assert report.files == [str(tmp_path / "sitemap.xml")] and report.findings == []
    assert report.not_checked == [
        (
            "https://example.com/news/sitemap.xml",
            "the file of its name beside the index is the index itself",
        )
    ]


def test_an_index_with_its_url_gets_no_note(public: Path) -> None:
    report = validate(
        public / "sitemap_index.xml", published_at="https://example.com/sitemap_index.xml"
    )
    assert not any("unknown" in n for n in report.notes)
    assert len(report.files) == 3


# -- the columns of a robots.txt's findings: a property --------------------------------------

_space = st.text(" \t", max_size=3)
_value = st.from_regex(r"/[a-z0-9_-]{1,12}\.xml", fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            _space,
            st.sampled_from(["Sitemap", "sitemap", "SITEMAP", "Site-map"]),
            _space,
            _space,
            _value,
        ),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),
)
def test_a_robots_finding_points_at_its_value(
    records: list[tuple[str, str, str, str, str]], eol: str, bom: bool
) -> None:
    """For any robots.txt of relative Sitemap lines (any spacing, spelling, line ending),
    each RB003 finding's line:column is where its value starts in that line."""
    from sitemapkit.core.robots import parse_robots

    text = eol.join(f"{lead}{key}{a}:{b}{value}" for lead, key, a, b, value in records) + eol
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    findings = with_columns(parse_robots(data, None, where="robots.txt").findings, data)
    lines = re.split(r"\r\n|\r|\n", text)
    relative = [f for f in findings if f.rule == "RB003"]
    assert len(relative) == len(records)
    for f, (_, _, _, _, value) in zip(relative, records, strict=True):
        assert f.line is not None and f.column is not None
        assert lines[f.line - 1][f.column - 1 :].startswith(value)
