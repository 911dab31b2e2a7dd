"""`sitemapkit report`: real reports of real validations, rendered in headless Chromium."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import lxml.html
import pytest

from sitemapkit.cli.validate import repository_url
from sitemapkit.lint.report import help_uri

from ..conftest import cli
from ..site import Site
from .browser import Chromium, chromium_or_fail, first_pixel, requests_of

ROOT = Path(__file__).resolve().parents[2]
SM = "http://www.sitemaps.org/schemas/sitemap/0.9"
DECL = '<?xml version="1.0" encoding="UTF-8"?>\n'
PUBLISHED = "https://example.com/sitemap.xml"
#: A loc that is markup, and a message quoting it: the page must show both as text.
XSS = "https://example.com/p?q=&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"
IMG = "https://example.com/x&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Chromium:
    return chromium_or_fail(tmp_path_factory.mktemp("chromium"))


def write_set(folder: Path, base: str = "https://example.com") -> Path:
    """An index, two children beside it (one gzip), one listed child missing; findings
    of several rules, two of them on locs that are markup."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitemap.xml").write_text(
        f'{DECL}<sitemapindex xmlns="{SM}">\n'
        f"<sitemap><loc>{base}/a.xml</loc><lastmod>2024-05-01</lastmod></sitemap>\n"
        f"<sitemap><loc>{base}/b.xml.gz</loc></sitemap>\n"
        f"<sitemap><loc>{base}/missing.xml</loc></sitemap>\n"
        "</sitemapindex>\n"
    )
    (folder / "a.xml").write_text(
        f'{DECL}<urlset xmlns="{SM}">\n'
        f"<url><loc>{XSS}</loc><lastmod>2024/05/01</lastmod></url>\n"
        f"<url><loc>{IMG}</loc><priority>1.5</priority></url>\n"
        "<url><loc>https://example.com/ok</loc><lastmod>2024-03-01</lastmod>"
        "<changefreq>daily</changefreq><priority>0.5</priority></url>\n"
        "<url><loc>https://other.example/</loc><changefreq>sometimes</changefreq></url>\n"
        "</urlset>\n"
    )
    child = f'{DECL}<urlset xmlns="{SM}">\n<url><loc>https://example.com/c</loc>'
    child += "<lastmod>2024-06-01</lastmod></url>\n</urlset>\n"
    (folder / "b.xml.gz").write_bytes(gzip.compress(child.encode(), mtime=0))
    return folder / "sitemap.xml"


def report(target: Path | str, out: Path, *args: str) -> tuple[int, str]:
    """``sitemapkit report TARGET ARGS -o OUT``: (exit code, the page)."""
    code, stdout, stderr = cli(["report", str(target), *args, "-o", str(out)])
    assert stdout == "" and "Traceback" not in stderr
    return code, out.read_text(encoding="utf-8")


def embedded(page: str) -> object:
    (script,) = lxml.html.fromstring(page).xpath('//script[@id="sitemapkit-report"]')
    assert script.get("type") == "application/json"
    return json.loads(script.text)


def tiles(dom: lxml.html.HtmlElement) -> dict[str, str]:
    return {
        t.get("data-tile"): t.find_class("value")[0].text_content() for t in dom.find_class("tile")
    }


def test_the_page_embeds_what_validate_json_prints_and_shows_its_counts(
    tmp_path: Path, chromium: Chromium
) -> None:
    index = write_set(tmp_path / "public")
    code, page = report(index, tmp_path / "report.html", "--published-at", PUBLISHED)
    args = ["validate", str(index), "--published-at", PUBLISHED, "--format", "json"]
    vcode, printed, _ = cli(args)
    assert code == vcode == 1
    data = json.loads(printed)
    assert embedded(page) == data
    dom = lxml.html.fromstring(chromium.dom((tmp_path / "report.html").as_uri()))
    assert tiles(dom) == {
        "sitemaps": "3",
        "URLs": "5",
        "errors": str(data["summary"]["errors"]),
        "warnings": str(data["summary"]["warnings"]),
        "extensions used": "0",
        "hosts": "2",
    }
    rows = dom.xpath('//table[@class="findings"]/tbody/tr')
    assert len(rows) == len(data["findings"]) == 7
    first = rows[1]  # SM204 on the loc that is a script: text, not markup
    assert [td.text_content() for td in first] == [
        "SM204",
        "error",
        data["findings"][1]["message"],
        f"{index.parent / 'a.xml'}:3:6",
        "https://example.com/p?q=</script><script>alert(1)</script>",
    ]
    # the page's own two scripts, and not one element from the documents' text
    assert len(dom.xpath("//script")) == 2
    assert dom.xpath("//img") == [] and dom.xpath("//b") == []
    assert dom.get("data-filter") == "ready" and dom.get("data-shown") == "7"


def test_the_tree_shows_each_sitemap_under_its_index(tmp_path: Path) -> None:
    index = write_set(tmp_path / "public")
    _, page = report(index, tmp_path / "report.html", "--published-at", PUBLISHED)
    rows = lxml.html.fromstring(page).xpath('//table[@class="tree"]/tbody/tr')
    cells = [[td.text_content().strip() for td in tr] for tr in rows]
    folder = index.parent
    assert [(tr.get("data-depth"), tr.get("data-status")) for tr in rows] == [
        ("0", "warnings"),
        ("1", "errors"),
        ("1", "ok"),
        ("1", "not checked"),
    ]
    assert cells[0][:7] == [str(index), "sitemapindex", "3", "328", "no", "2024-05-01", "1 warning"]
    assert cells[1][:7] == [
        f"└ {folder / 'a.xml'}",
        "urlset",
        "4",
        str((folder / "a.xml").stat().st_size),
        "no",
        "2024-03-01",
        "6 errors",
    ]
    packed = (folder / "b.xml.gz").read_bytes()
    plain = f"gzip ({len(gzip.decompress(packed))} bytes plain)"
    assert cells[2][1:6] == ["urlset", "1", f"{len(packed)}", plain, "2024-06-01"]
    assert cells[3][0].startswith("└ https://example.com/missing.xml")
    assert "no local file" in cells[3][0]


def test_the_filter_keeps_the_rule_and_severity_asked_for(
    tmp_path: Path, chromium: Chromium
) -> None:
    index = write_set(tmp_path / "public")
    out = tmp_path / "report.html"
    report(index, out, "--published-at", PUBLISHED)
    dom = lxml.html.fromstring(chromium.dom(out.as_uri() + "#rule=SM204&severity=error"))
    shown = dom.xpath('//table[@class="findings"]/tbody/tr[not(@hidden)]')
    assert {tr.get("data-rule") for tr in shown} == {"SM204"}
    assert len(shown) == 2 and dom.get("data-shown") == "2"
    assert len(dom.xpath('//table[@class="findings"]/tbody/tr[@hidden]')) == 5
    assert dom.get_element_by_id("filter").get("hidden") is None
    assert dom.get_element_by_id("filter-count").text_content() == "2 of 7 shown"


def test_without_script_the_filter_is_hidden_and_every_finding_shown(tmp_path: Path) -> None:
    index = write_set(tmp_path / "public")
    _, page = report(index, tmp_path / "report.html", "--published-at", PUBLISHED)
    dom = lxml.html.fromstring(page)
    assert dom.get_element_by_id("filter").get("hidden") is not None
    assert not dom.xpath('//table[@class="findings"]/tbody/tr[@hidden]')


#: Attributes and CSS through which a page would load something.
_LOADS = re.compile(r"url\(|@import", re.IGNORECASE)


def test_the_page_refers_to_nothing_outside_itself(tmp_path: Path, chromium: Chromium) -> None:
    index = write_set(tmp_path / "public")
    out = tmp_path / "report.html"
    _, page = report(index, out, "--published-at", PUBLISHED)
    dom = lxml.html.fromstring(page)
    for el in dom.iter():
        for name in ("src", "srcset", "data", "poster", "action", "formaction", "background"):
            assert el.get(name) is None, (el.tag, name)
        if el.tag != "a" and el.get("href") is not None:
            assert el.tag == "link" and el.get("href") == "data:,"
    links = {a.get("href") for a in dom.iter("a")}
    rules = {f["rule"] for f in embedded(page)["findings"]}  # type: ignore[index]
    assert links == {help_uri(r, repository_url()) for r in rules}
    # the package names no repository: the links stay relative (docs/rules.md#sm204)
    assert all(not re.match(r"[a-z]+:", href) for href in links)
    styles = " ".join(s.text or "" for s in dom.iter("style")) + " ".join(
        el.get("style") or "" for el in dom.iter()
    )
    assert not _LOADS.search(styles)
    # loaded in Chromium, the page requests nothing but itself (the DevTools protocol's
    # record of the requests), and its script ran
    assert requests_of(chromium, out.as_uri()) == ([out.as_uri()], "ready")
    # served from the loopback server, the page asks it for nothing more
    with Site() as site:
        site.static(tmp_path)
        dom = lxml.html.fromstring(chromium.dom(site.url("/report.html")))
        assert tiles(dom)["sitemaps"] == "3"
        assert [(r.method, r.path) for r in site.log] == [("GET", "/report.html")]


def test_the_request_record_sees_what_a_page_loads(tmp_path: Path, chromium: Chromium) -> None:
    """The check above can fail: a page that loads a style, an image and a fetch."""
    with Site() as site:
        page = tmp_path / "loads.html"
        page.write_text(
            f'<!doctype html><link rel="stylesheet" href="{site.url("/s.css")}">'
            f'<img src="{site.url("/i.png")}"><script>fetch("{site.url("/f")}")</script>'
        )
        seen, _ = requests_of(chromium, page.as_uri())
        wanted = [page.as_uri(), site.url("/s.css"), site.url("/i.png"), site.url("/f")]
        assert seen[0] == wanted[0] and sorted(seen) == sorted(wanted)


def test_light_and_dark(tmp_path: Path, chromium: Chromium) -> None:
    index = write_set(tmp_path / "public")
    out = tmp_path / "report.html"
    report(index, out, "--published-at", PUBLISHED)
    light = first_pixel(chromium.screenshot(out.as_uri(), tmp_path / "light.png", size="800,600"))
    dark = first_pixel(
        chromium.screenshot(out.as_uri(), tmp_path / "dark.png", size="800,600", dark=True)
    )
    assert light == (255, 255, 255)
    assert dark == (0x14, 0x17, 0x1B)


def sitemap_of_bad_lastmods(path: Path, n: int) -> None:
    rows = "".join(
        f"<url><loc>https://example.com/{path.stem}/{i}</loc><lastmod>2024/01/01</lastmod></url>\n"
        for i in range(n)
    )
    path.write_text(f'{DECL}<urlset xmlns="{SM}">\n{rows}</urlset>\n')


def test_at_most_a_thousand_findings_of_a_rule_are_in_the_table(tmp_path: Path) -> None:
    files = [tmp_path / "one.xml", tmp_path / "two.xml"]
    for f in files:
        sitemap_of_bad_lastmods(f, 700)
    out = tmp_path / "report.html"
    code, stdout, _ = cli(["report", *map(str, files), "-o", str(out), "--select", "SM301"])
    assert code == 1 and stdout == ""
    page = out.read_text(encoding="utf-8")
    data = embedded(page)
    assert len(data["findings"]) == 1_400  # the JSON has them all, as validate prints
    dom = lxml.html.fromstring(page)
    assert len(dom.xpath('//table[@class="findings"]/tbody/tr[@data-rule="SM301"]')) == 1_000
    (note,) = dom.xpath('//p[@data-hidden="SM301"]')
    assert note.text_content().startswith("400 more SM301 findings")


def test_findings_the_validator_did_not_list_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "s.xml"
    sitemap_of_bad_lastmods(path, 30)
    out = tmp_path / "report.html"
    cli(["report", str(path), "-o", str(out), "--max-findings", "10", "--select", "SM301"])
    dom = lxml.html.fromstring(out.read_text(encoding="utf-8"))
    assert len(dom.xpath('//table[@class="findings"]/tbody/tr')) == 10
    (note,) = dom.xpath('//p[@data-omitted="SM301"]')
    assert note.text_content().startswith("20 more SM301 findings were counted")
    assert embedded(out.read_text(encoding="utf-8"))["summary"]["omitted"] == {"SM301": 20}


def test_a_url_target_is_fetched_once_and_counted(tmp_path: Path) -> None:
    folder = tmp_path / "site"
    with Site() as site:
        write_set(folder, site.base)
        site.static(folder)
        url = site.url("/sitemap.xml")
        out = tmp_path / "report.html"
        code, page = report(url, out)
        # each sitemap requested once: the page's counts come from the validator's fetch
        assert sorted((r.method, r.path) for r in site.log) == [
            ("GET", "/a.xml"),
            ("GET", "/b.xml.gz"),
            ("GET", "/missing.xml"),
            ("GET", "/sitemap.xml"),
        ]
        vcode, printed, _ = cli(["validate", url, "--format", "json"])
    assert code == vcode == 1 and embedded(page) == json.loads(printed)
    rows = lxml.html.fromstring(page).xpath('//table[@class="tree"]/tbody/tr')
    cells = [[td.text_content().strip() for td in tr] for tr in rows]
    size = (folder / "sitemap.xml").stat().st_size
    assert cells[0][:6] == [url, "sitemapindex", "3", f"{size:,}", "no", "2024-05-01"]
    assert cells[2][:3] == [f"└ {site.base}/b.xml.gz", "urlset", "1"]
    assert [tr.get("data-status") for tr in rows][3] == "warnings"  # 404: SM012


def test_the_same_validation_gives_the_same_page(tmp_path: Path) -> None:
    index = write_set(tmp_path / "public")
    _, first = report(index, tmp_path / "one.html", "--published-at", PUBLISHED)
    _, second = report(index, tmp_path / "two.html", "--published-at", PUBLISHED)
    assert first == second


def test_bad_arguments_and_targets(tmp_path: Path) -> None:
    index = write_set(tmp_path / "public")
    code, _, err = cli(["report", str(index), "-o", str(tmp_path / "no" / "such" / "r.html")])
    assert code == 2 and "--output" in err and "no folder" in err
    code, _, err = cli(["report", str(index)])
    assert code == 2 and "Missing option '-o'" in err
    out = tmp_path / "r.html"
    code, _, err = cli(["report", str(tmp_path / "absent.xml"), "-o", str(out)])
    assert code == 3 and err == ""
    data = embedded(out.read_text(encoding="utf-8"))
    assert data["summary"]["unreadable"][0]["target"] == str(tmp_path / "absent.xml")
    rows = lxml.html.fromstring(out.read_text(encoding="utf-8")).xpath(
        '//table[@class="tree"]/tbody/tr'
    )
    assert [tr.get("data-status") for tr in rows] == ["unreadable"]


def test_the_readme_screenshot_is_of_the_bundled_example(tmp_path: Path) -> None:
    shot = ROOT / "docs" / "report.png"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "docs/report.png" in (ROOT / "README.md").read_text(encoding="utf-8")


def write_site(folder: Path) -> Path:
    """A build folder and its sitemap: a home linking two pages (one unlisted), a noindex
    page listed, an orphan listed, a listed URL no file answers."""
    folder.mkdir(parents=True, exist_ok=True)
    pages = {
        "index.html": "".join(f'<a href="/{p}.html">{p}</a>' for p in ("a", "new", "draft")),
        "a.html": "<title>A</title>",
        "new.html": "<title>New</title>",
        "draft.html": '<meta name="robots" content="noindex">',
        "orphan.html": "<title>Orphan</title>",
    }
    for name, body in pages.items():
        (folder / name).write_text(f"<!doctype html><html><head>{body}</head></html>")
    rows = "".join(
        f"<url><loc>https://example.com{p}</loc></url>\n"
        for p in ("/", "/a.html", "/draft.html", "/orphan.html", "/gone.html")
    )
    (folder / "sitemap.xml").write_text(f'{DECL}<urlset xmlns="{SM}">\n{rows}</urlset>\n')
    return folder


def _coverage(dom: lxml.html.HtmlElement) -> list[str]:
    (figure,) = dom.xpath('//figure[@data-chart="Coverage: sitemaps and pages"]')
    return [t.text_content() for t in figure.xpath(".//rect/title")]


def test_report_audit_adds_the_coverage_and_embeds_the_audit_json(
    tmp_path: Path, chromium: Chromium
) -> None:
    folder = write_site(tmp_path / "site")
    out = tmp_path / "report.html"
    code, page = report(folder, out, "--audit", "--published-at", "https://example.com/")
    acode, printed, _ = cli(
        ["audit", str(folder), "--base-url", "https://example.com/", "--format", "json"]
    )
    assert code == acode == 0  # warnings only
    data = json.loads(printed)
    # the sitemap is valid: validate adds no finding, and the page's data is the audit's
    assert embedded(page) == data
    assert data["summary"]["rules"] == {"AUD001": 1, "AUD002": 1, "SM217": 2}
    dom = lxml.html.fromstring(chromium.dom(out.as_uri()))
    assert tiles(dom)["pages crawled"] == "5" and tiles(dom)["warnings"] == "4"
    assert _coverage(dom) == [
        "listed∩crawled: 4 both",
        "listed only: 1 listed",
        "crawled only: 1 crawled",
    ]
    rows = dom.xpath('//table[@class="findings"]/tbody/tr')
    assert [tr.get("data-rule") for tr in rows] == ["SM217", "AUD002", "SM217", "AUD001"]
    assert rows[0].xpath("td")[3].text_content() == f"{folder / 'sitemap.xml'}:5:6"
    assert requests_of(chromium, out.as_uri()) == ([out.as_uri()], "ready")
    # without --audit the page has no coverage chart
    _, plain = report(folder, tmp_path / "plain.html", "--published-at", "https://example.com/")
    assert not lxml.html.fromstring(plain).xpath('//figure[starts-with(@data-chart, "Coverage")]')


def test_audit_html_writes_the_same_page(tmp_path: Path) -> None:
    folder = write_site(tmp_path / "site")
    out = tmp_path / "audit.html"
    code, printed, err = cli(
        ["audit", str(folder), "--base-url", "https://example.com/", "--html", str(out)]
    )
    assert code == 0 and "AUD001" in printed, err
    page = out.read_text(encoding="utf-8")
    assert _coverage(lxml.html.fromstring(page))[0] == "listed∩crawled: 4 both"
    assert embedded(page)["summary"]["pages"]["crawled"] == 5  # type: ignore[index]
    code, _, err = cli(["report", str(folder), str(folder), "--audit", "-o", str(out)])
    assert code == 2 and "--audit takes one TARGET" in err
    code, _, err = cli(["report", str(folder), "--audit", "-o", str(out)])
    assert code == 2 and "needs --published-at" in err
