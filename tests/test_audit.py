"""`sitemapkit audit` of build folders, end to end: the folder source's pages against the
folder's sitemaps (written by our writer, and by hand with positions to check), in every
output format, with the exit codes of `validate`; and a site on the loopback server,
its sitemaps found by discovery and its pages crawled, each URL requested once.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import sitemapkit as sk
from sitemapkit.auditing.site import site_sitemaps
from sitemapkit.lint.audit import Audit, AuditReport
from sitemapkit.validation.fetcher import HttpFetcher

from .conftest import cli
from .site import Reply, Site

B = "https://example.com"
HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'
URLSET = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'


def _page(title: str, head: str = "", links: tuple[str, ...] = ()) -> str:
    body = "".join(f'<a href="{h}">{h}</a>' for h in links)
    return (
        f"<!doctype html><html><head><title>{title}</title>{head}</head><body>{body}</body></html>"
    )


def _site(root: Path) -> Path:
    """A small built site: a home linking two pages and a blog; a noindex draft, an
    error page, a page with its canonical elsewhere, a page robots.txt disallows, and
    an orphan nothing links to."""
    files = {
        "index.html": _page("Home", links=("/about.html", "/blog/", "/draft.html", "/print.html")),
        "about.html": _page(
            "About", '<meta property="article:modified_time" content="2024-05-01T10:00:00Z">'
        ),
        "blog/index.html": _page("Blog", links=("/blog/post.html", "/")),
        "blog/post.html": _page("Post", links=("/private/",)),
        "draft.html": _page("Draft", '<meta name="robots" content="noindex">'),
        "print.html": _page("Print", f'<link rel="canonical" href="{B}/about.html">'),
        "private/index.html": _page("Private"),
        "orphan.html": _page("Orphan"),
        "404.html": _page("Not found"),
        "robots.txt": "User-agent: *\nDisallow: /private/\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _urlset(*rows: str) -> str:
    return HEAD + URLSET + "\n" + "".join(f"  {r}\n" for r in rows) + "</urlset>\n"


def _by_rule(report: AuditReport) -> dict[str, list[tuple[str | None, int | None, str | None]]]:
    out: dict[str, list[tuple[str | None, int | None, str | None]]] = {}
    for f in report.findings:
        out.setdefault(f.rule, []).append((f.loc, f.line, f.column and str(f.column)))
    return out


def test_a_folder_our_writer_listed_audits_clean_but_for_its_orphan(tmp_path: Path) -> None:
    """`write DIR` lists the indexable pages; the audit of that folder then finds no
    page left unlisted, no listed URL that is not indexable, no drift: only the page no
    link reaches."""
    root = _site(tmp_path / "site")
    code, _, err = cli(["write", str(root), "-o", str(root), "--base-url", B + "/"])
    assert code == 0, err
    report = sk.audit(root, base_url=B + "/")
    assert [(f.rule, f.loc) for f in report.findings] == [("AUD002", B + "/orphan.html")]
    (f,) = report.findings
    assert f.where == str(root / "sitemap.xml") and f.line and f.column
    pages = report.summary()["pages"]
    # 9 pages read or left out by path (robots.txt's page is never read), 5 listed
    assert pages["crawled"] == 9 and pages["crawled_only"] == 4
    assert pages["listed"] == 5 and pages["indexable"] == 5
    assert pages["listed_and_crawled"] == 5 and pages["listed_only"] == 0


def test_every_finding_of_a_hand_written_set_at_its_file_line_and_column(tmp_path: Path) -> None:
    root = _site(tmp_path / "site")
    (root / "robots.txt").write_text(
        f"User-agent: *\nDisallow: /private/\nSitemap: {B}/sitemap_index.xml\n"
    )
    index = HEAD + '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    index += f"<sitemap><loc>{B}/maps/pages.xml</loc></sitemap>\n"
    index += f"<sitemap><loc>{B}/maps/blog.xml.gz</loc></sitemap>\n"
    index += f"<sitemap><loc>{B}/maps/missing.xml</loc></sitemap>\n</sitemapindex>\n"
    (root / "sitemap_index.xml").write_text(index)
    (root / "maps").mkdir()
    (root / "maps/pages.xml").write_text(
        _urlset(
            f"<url><loc>{B}/</loc></url>",
            f"<url><lastmod>2024-06-01</lastmod><loc>{B}/about.html</loc></url>",
            f"<url>\t<loc>{B}/draft.html</loc></url>",
            f"<url><loc>{B}/print.html</loc></url>",
            f"<url><loc>{B}/private/</loc></url>",
            f"<url><loc>{B}/404.html</loc></url>",
            f"<url><loc>{B}/orphan.html</loc></url>",
            f"<url><loc>{B}/gone/</loc></url>",
        )
    )
    blog = _urlset(f"<url><loc>{B}/blog/</loc></url>", f"<url><loc>{B}/</loc></url>")
    (root / "maps/blog.xml.gz").write_bytes(gzip.compress(blog.encode(), mtime=0))
    report = sk.audit(root, base_url=B)
    pages, blog_gz = str(root / "maps/pages.xml"), str(root / "maps/blog.xml.gz")
    assert report.files == [str(root / "sitemap_index.xml"), pages, blog_gz]
    assert report.not_checked == [
        (f"{B}/maps/missing.xml", "no file 'maps/missing.xml' in the folder")
    ]
    got = {(f.rule, f.where, f.line, f.column, f.loc) for f in report.findings}
    assert got == {
        ("AUD003", pages, 4, 37, f"{B}/about.html"),
        ("SM217", pages, 5, 9, f"{B}/draft.html"),
        ("SM217", pages, 6, 8, f"{B}/print.html"),
        ("SM217", pages, 7, 8, f"{B}/private/"),
        ("SM217", pages, 8, 8, f"{B}/404.html"),
        ("AUD002", pages, 9, 8, f"{B}/orphan.html"),
        ("SM217", pages, 10, 8, f"{B}/gone/"),
        ("AUD001", f"{B}/blog/post.html", None, None, f"{B}/blog/post.html"),
        ("AUD004", blog_gz, 4, 8, f"{B}/"),
    }
    why = {f.loc: f.message for f in report.findings if f.rule == "SM217"}
    assert "noindex" in why[f"{B}/draft.html"]
    assert f"canonical URL is '{B}/about.html'" in why[f"{B}/print.html"]
    assert "robots.txt disallows it" in why[f"{B}/private/"]
    assert "error page" in why[f"{B}/404.html"]
    assert "HTTP 404" in why[f"{B}/gone/"]
    assert f"also listed in {pages}" in next(
        f.message for f in report.findings if f.rule == "AUD004"
    )
    # in the validator's order: by sitemap, line and column; a page's finding last
    assert [f.line for f in report.findings] == [4, 5, 6, 7, 8, 9, 10, 4, None]


def test_links_land_on_the_page_a_static_server_answers(tmp_path: Path) -> None:
    """`/about` is about.html, `/blog` is blog/index.html: those links reach the pages."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_text(_page("Home", links=("/about", "/blog", "/about.html#top")))
    (root / "about.html").write_text(_page("About"))
    (root / "blog").mkdir()
    (root / "blog/index.html").write_text(_page("Blog"))
    (root / "sitemap.xml").write_text(
        _urlset(*(f"<url><loc>{B}{p}</loc></url>" for p in ("/", "/about.html", "/blog/")))
    )
    assert sk.audit(root, base_url=B).findings == []
    # served with clean URLs the page is /about, which the sitemap must list
    (root / "sitemap.xml").write_text(
        _urlset(*(f"<url><loc>{B}{p}</loc></url>" for p in ("/", "/about", "/blog/")))
    )
    clean = sk.audit(root, base_url=B, folder=sk_folder(clean_urls=True))
    assert clean.findings == []
    # without clean URLs, /about still lands on about.html: the same page, listed
    assert sk.audit(root, base_url=B).findings == []
    (root / "sitemap-2.xml").write_text(_urlset(f"<url><loc>{B}/about.html</loc></url>"))
    twice = sk.audit(root, base_url=B)
    # the page listed by two sitemaps, under two of its URLs
    assert [(f.rule, f.loc, f.line) for f in twice.findings] == [("AUD004", f"{B}/about", 4)]
    assert str(root / "sitemap-2.xml") in twice.findings[0].message


def sk_folder(**kw: object) -> object:
    from sitemapkit.io.sources.folder import FolderOptions

    return FolderOptions(**kw)  # type: ignore[arg-type]


def test_sitemaps_are_those_robots_txt_names_else_the_top_sitemap_files(tmp_path: Path) -> None:
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_text(_page("Home"))
    (root / "sitemap-b.xml").write_text(_urlset(f"<url><loc>{B}/</loc></url>"))
    (root / "sitemap-a.xml.gz").write_bytes(gzip.compress(_urlset().encode()))
    (root / "other.xml").write_text(_urlset(f"<url><loc>{B}/x</loc></url>"))
    top = sk.audit(root, base_url=B)
    assert top.files == [str(root / "sitemap-a.xml.gz"), str(root / "sitemap-b.xml")]
    # a gzip copy beside its sitemap (as MkDocs writes them) is that sitemap, read once
    (root / "sitemap-b.xml.gz").write_bytes(gzip.compress((root / "sitemap-b.xml").read_bytes()))
    twin = sk.audit(root, base_url=B)
    assert twin.files == top.files
    assert not [f for f in twin.findings if f.rule == "AUD004"]
    (root / "sitemap-b.xml.gz").unlink()
    (root / "robots.txt").write_text(
        f"Sitemap: {B}/other.xml\nSitemap: https://elsewhere.example/s.xml\n"
    )
    named = sk.audit(root, base_url=B)
    assert named.files == [str(root / "other.xml")]
    assert named.not_checked[0][0] == "https://elsewhere.example/s.xml"
    assert "not a file of the folder" in named.not_checked[0][1]
    # robots.txt names only sitemaps the folder does not hold: nothing to audit against
    (root / "robots.txt").write_text("Sitemap: https://elsewhere.example/s.xml\n")
    none = sk.audit(root, base_url=B)
    assert none.files == [] and none.findings == []
    assert none.unreadable == [(str(root), "no sitemap of the folder could be read")]
    # a sitemap that is not one: unreadable, with the reader's reason
    (root / "robots.txt").write_text(f"Sitemap: {B}/other.xml\n")
    (root / "other.xml").write_text("<html><body>oops</body></html>")
    broken = sk.audit(root, base_url=B)
    assert broken.unreadable[0][0] == str(root / "other.xml") and broken.findings == []


def test_a_folder_without_sitemaps_says_so_and_exits_3(tmp_path: Path) -> None:
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_text(_page("Home"))
    report = sk.audit(root, base_url=B)
    assert report.unreadable and "no sitemap" in report.unreadable[0][1]
    code, out, err = cli(["audit", str(root), "--base-url", B])
    assert code == 3 and "no sitemap: no robots.txt with Sitemap: lines" in out
    code, _, err = cli(["audit", str(root)])
    assert code == 2 and "give --base-url" in err
    code, out, err = cli(["audit", str(tmp_path / "nothing"), "--base-url", B])
    assert code == 3 and "no such folder" in out and "Traceback" not in err


def test_json_has_validates_shape_and_exit_codes_follow_fail_on(tmp_path: Path) -> None:
    root = _site(tmp_path / "site")
    (root / "sitemap.xml").write_text(
        _urlset(f"<url><loc>{B}/</loc></url>", f"<url><loc>{B}/draft.html</loc></url>")
    )
    code, out, err = cli(["audit", str(root), "--base-url", B, "--format", "json"])
    assert code == 0, err  # warnings only, --fail-on error
    doc = json.loads(out)
    _, vout, _ = cli(["validate", str(root / "sitemap.xml"), "--format", "json"])
    valid = json.loads(vout)
    assert set(doc) == set(valid) == {"findings", "summary"}
    assert set(doc["summary"]) == set(valid["summary"]) | {"pages"}
    assert all(
        set(f) == {"rule", "severity", "message", "file", "line", "column", "loc"}
        for f in doc["findings"]
    )
    assert doc["summary"]["rules"] == {"AUD001": 4, "SM217": 1} and doc["summary"]["warnings"] == 5
    assert doc["summary"]["pages"] == {
        "crawled": 9,
        "listed": 2,
        "indexable": 5,
        "listed_and_crawled": 2,
        "listed_only": 0,
        "crawled_only": 7,
    }
    code, _, _ = cli(["audit", str(root), "--base-url", B, "--fail-on", "warning"])
    assert code == 1
    code, out, _ = cli(
        ["audit", str(root), "--base-url", B, "--ignore", "AUD,SM217", "--fail-on", "warning"]
    )
    assert code == 0 and "SM217" not in out and "no problems found" in out


@pytest.mark.parametrize("fmt", ["text", "junit", "sarif", "github"])
def test_every_format_of_validate_carries_the_audit_findings(tmp_path: Path, fmt: str) -> None:
    root = _site(tmp_path / "site")
    (root / "sitemap.xml").write_text(
        _urlset(f"<url><loc>{B}/</loc></url>", f"<url>\n <loc>{B}/draft.html</loc></url>")
    )
    code, out, err = cli(
        ["audit", str(root), "--base-url", B, "--format", fmt, "--select", "SM217"]
    )
    assert code == 0, err
    where = str(root / "sitemap.xml")
    if fmt == "text":
        assert f"{where}\n" in out and "5:2  warning  SM217  Listed URL" in out
        assert "note: audit: 9 pages found, 2 URLs listed, 5 indexable pages" in out
    elif fmt == "junit":
        assert 'name="SM217 line 5"' in out
    elif fmt == "sarif":
        (result,) = json.loads(out)["runs"][0]["results"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert result["ruleId"] == "SM217" and region == {"startLine": 5, "startColumn": 2}
        assert "AUD001" in {r["id"] for r in json.loads(out)["runs"][0]["tool"]["driver"]["rules"]}
    else:
        assert f"::warning file={where},line=5,col=2,title=SM217::Listed URL" in out


def test_max_findings_caps_each_rule_and_counts_the_rest(tmp_path: Path) -> None:
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_text(_page("Home", links=tuple(f"/p{i}.html" for i in range(7))))
    for i in range(7):
        (root / f"p{i}.html").write_text(_page(f"P{i}"))
    (root / "sitemap.xml").write_text(
        _urlset(
            f"<url><loc>{B}/</loc></url>", *(f"<url><loc>{B}/gone{i}</loc></url>" for i in range(5))
        )
    )
    report = sk.audit(root, base_url=B, max_findings=3)
    assert [f.rule for f in report.findings] == ["SM217"] * 3 + ["AUD001"] * 3
    assert report.omitted == {"AUD001": 4, "SM217": 2}
    assert report.summary()["omitted"] == {"AUD001": 4, "SM217": 2}


def test_the_sitemaps_of_a_site_come_through_discovery_with_positions() -> None:
    """The site half's sitemaps: robots.txt → an index → its children, each fetched once
    and placed by URL, line and column (the crawl is the crawler's)."""
    with Site() as site:
        base = site.base
        site["/robots.txt"] = Reply(body=f"Sitemap: {base}/index.xml\n".encode())
        site["/index.xml"] = Reply(
            body=(
                HEAD + '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
                f"<sitemap><loc>{base}/a.xml</loc></sitemap>\n"
                f"<sitemap><loc>{base}/b.xml</loc></sitemap>\n"
                f"<sitemap><loc>{base}/gone.xml</loc></sitemap>\n</sitemapindex>\n"
            ).encode()
        )
        site["/a.xml"] = Reply(body=_urlset(f"<url><loc>{base}/x</loc></url>").encode())
        site["/b.xml"] = Reply(
            body=_urlset(
                f"<url><loc>{base}/y</loc></url>", f"<url><loc>{base}/x</loc></url>"
            ).encode()
        )
        report = AuditReport()
        a = Audit(start=base + "/")
        with HttpFetcher() as fetcher:
            site_sitemaps(base + "/", a, report, fetcher)
        assert report.files == [f"{base}/index.xml", f"{base}/a.xml", f"{base}/b.xml"]
        assert report.unreadable == [(f"{base}/gone.xml", "HTTP 404")]
        assert [(f.rule, f.where, f.line, f.column) for f in report.findings] == [
            ("AUD004", f"{base}/b.xml", 4, 8)
        ]
        assert list(a.listed()) == [f"{base}/x", f"{base}/y"]
        assert all(n == 1 for (_, path), n in site.hits.items() if path.endswith(".xml"))


def test_a_site_that_leads_to_no_sitemap_is_unreadable() -> None:
    with Site() as site:
        report = AuditReport()
        with HttpFetcher() as fetcher:
            site_sitemaps(site.base + "/", Audit(), report, fetcher)
        assert report.files == [] and report.unreadable[0][0] == site.base + "/"
        assert "robots.txt" in report.unreadable[0][1]


def _html(text: str, headers: dict[str, str] | None = None) -> Reply:
    return Reply(
        200,
        f"<!doctype html><html><head></head><body>{text}</body></html>".encode(),
        {"Content-Type": "text/html; charset=utf-8", **(headers or {})},
    )


def test_a_site_url_is_crawled_and_held_against_its_sitemaps(site: Site) -> None:
    """`audit URL`: the crawl and the sitemaps meet; a listed URL no link reaches is
    requested once all the same (an orphan, or not indexable and why)."""
    b = site.base
    site["/robots.txt"] = Reply(
        body=f"User-agent: *\nDisallow: /private\nSitemap: {b}/sitemap.xml\n".encode()
    )
    site["/sitemap.xml"] = Reply(
        body=_urlset(
            *(
                f"<url><loc>{b}{p}</loc>{lm}</url>"
                for p, lm in (
                    ("/", ""),
                    ("/moved", ""),
                    ("/gone", ""),
                    ("/hidden", ""),
                    ("/orphan", ""),
                    ("/private", ""),
                    ("/dated", "<lastmod>2024-03-10</lastmod>"),
                )
            )
        ).encode()
    )
    site["/"] = _html(
        '<a href="/moved">m</a><a href="/gone">g</a><a href="/hidden">h</a>'
        '<a href="/unlisted">u</a><a href="/dated">d</a>'
    )
    site["/moved"] = Reply(301, b"", {"Location": f"{b}/new"})
    site["/new"] = _html("new home")
    site["/hidden"] = _html("secret", {"X-Robots-Tag": "noindex"})
    site["/unlisted"] = _html("not in a sitemap")
    site["/orphan"] = _html("no link here")
    site["/dated"] = _html('<meta property="article:modified_time" content="2024-01-02">')
    code, out, err = cli(["audit", b + "/", "--format", "json", "--max-pages", "50"])
    assert code == 0, err
    doc = json.loads(out)
    got = {(f["rule"], f["loc"].removeprefix(b)) for f in doc["findings"]}
    assert got == {
        ("SM217", "/moved"),
        ("SM217", "/gone"),
        ("SM217", "/hidden"),
        ("SM217", "/private"),
        ("AUD001", "/unlisted"),
        ("AUD001", "/new"),
        ("AUD002", "/orphan"),
        ("AUD003", "/dated"),
    }
    why = {f["loc"].removeprefix(b): f["message"] for f in doc["findings"] if f["rule"] == "SM217"}
    assert f"{b}/new" in why["/moved"] and "404" in why["/gone"]
    assert "X-Robots-Tag" in why["/hidden"] and "robots.txt" in why["/private"]
    sm217 = next(f for f in doc["findings"] if f["rule"] == "SM217" and f["loc"].endswith("/gone"))
    assert (sm217["file"], sm217["line"]) == (f"{b}/sitemap.xml", 5)
    # every page and every listed URL requested once, the disallowed one never (robots.txt
    # is read by discovery and by the crawl: not shared yet)
    hits = {path: n for (_, path), n in site.hits.items() if path != "/robots.txt"}
    assert "/private" not in hits
    assert all(n == 1 for n in hits.values()), hits
    assert doc["summary"]["pages"]["crawled"] >= 7
