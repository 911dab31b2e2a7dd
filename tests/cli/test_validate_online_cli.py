"""``sitemapkit validate --online / --check-urls`` against a real server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import cli
from ..site import Reply, Site, html

HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site()
    s["/robots.txt"] = Reply(200, b"User-agent: *\nDisallow: /private/\n")
    s["/ok"] = html()
    s["/gone"] = Reply(404, b"")
    s["/private/x"] = html()
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def sitemap(site: Site, tmp_path: Path) -> Path:
    rows = "".join(f"<url><loc>{site.url(p)}</loc></url>\n" for p in ("/ok", "/gone", "/private/x"))
    text = HEAD + f"<urlset {NS}>\n{rows}</urlset>\n"
    path = tmp_path / "sitemap.xml"
    path.write_text(text, encoding="utf-8")
    site["/sitemap.xml"] = Reply(200, text.encode(), {"Content-Type": "application/xml"})
    return path


def test_findings_are_warnings_exit_0_unless_fail_on_warning(site: Site, sitemap: Path) -> None:
    args = [str(sitemap), "--published-at", site.url("/sitemap.xml"), "--check-urls"]
    code, out, err = cli(["validate", *args])
    assert code == 0 and err == ""  # no progress line when stderr is not a terminal
    assert "SM217" in out and "HTTP 404" in out and "disallowed for 'Googlebot'" in out
    assert "online: 3 URLs checked (3 distinct), robots agent 'Googlebot'" in out
    code, out, _ = cli(["validate", *args, "--fail-on", "warning", "--timeout", "5"])
    assert code == 1


def test_json_output(site: Site, sitemap: Path) -> None:
    code, out, _ = cli(
        [
            "validate",
            str(sitemap),
            "--published-at",
            site.url("/sitemap.xml"),
            "--check-urls",
            "--format",
            "json",
            "--concurrency",
            "2",
        ]
    )
    doc = json.loads(out)
    found = [(f["rule"], f["severity"], f["line"], f["loc"]) for f in doc["findings"]]
    assert found == [
        ("SM217", "warning", 4, site.url("/gone")),
        ("SM217", "warning", 5, site.url("/private/x")),
    ]
    assert doc["findings"][0]["file"] == str(sitemap)
    assert doc["summary"]["rules"] == {"SM217": 2} and code == 0


def test_online_without_check_urls_fetches_the_sitemap_only(site: Site, sitemap: Path) -> None:
    site["/sitemap.xml"] = Reply(404, b"")
    args = [str(sitemap), "--published-at", site.url("/sitemap.xml"), "--online"]
    code, out, _ = cli(["validate", *args])
    assert code == 0 and "SM012" in out and "The published copy" in out
    assert site.paths() == {"/sitemap.xml"}


def test_check_limit_and_robots_agent(site: Site, sitemap: Path) -> None:
    _, out, _ = cli(
        [
            "validate",
            str(sitemap),
            "--published-at",
            site.url("/sitemap.xml"),
            "--check-urls",
            "--check-limit",
            "1",
            "--robots-agent",
            "Bingbot",
        ]
    )
    assert "2 URLs of the set were not checked online" in out
    assert "online: 1 URLs checked (1 distinct), robots agent 'Bingbot'" in out
    assert len(site.paths() - {"/sitemap.xml"}) == 1


def test_usage_errors_exit_2(sitemap: Path) -> None:
    for extra in (["--robots-agent", "Google bot"], ["--concurrency", "0"], ["--timeout", "0"]):
        code, _, err = cli(["validate", str(sitemap), "--online", *extra])
        assert code == 2, extra
        assert "Traceback" not in err


def test_unreachable_target_exits_3() -> None:
    code, out, err = cli(["validate", "http://127.0.0.1:9/sitemap.xml", "--check-urls"])
    assert code == 3 and "could not read" in out and "Traceback" not in out + err
    assert "SM012" in out  # and its robots.txt could not be read either


def test_help_shows_an_example() -> None:
    code, out, _ = cli(["validate", "--help"])
    assert code == 0 and "--check-urls --check-limit 500" in out and "--robots-agent" in out
