"""``sitemapkit validate``: exit codes, rule selection, formats, build folders, URLs; and
``write --validate``, which refuses to publish output that fails validation."""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree

import sitemapkit as sk
from sitemapkit.core.finding import Finding
from sitemapkit.errors import InputError

from .. import conftest
from ..conftest import cli, cli_modules
from ..site import Site

HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


urlset = functools.partial(conftest.urlset, indent="  ")


def index(*locs: str) -> str:
    rows = "".join(
        f"  <sitemap><loc>{loc}</loc><lastmod>2024-05-01</lastmod></sitemap>\n" for loc in locs
    )
    return HEAD + f"<sitemapindex {NS}>\n" + rows + "</sitemapindex>\n"


def url(loc: str, extra: str = "") -> str:
    return f"<url><loc>{loc}</loc>{extra}</url>"


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset(url("https://example.com/a"), url("https://example.com/b")))
    return path


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """An error (SM301, line 4) and a warning (SM208, line 5)."""
    path = tmp_path / "mixed.xml"
    path.write_text(
        urlset(
            url("https://example.com/a"),
            url("https://example.com/b", "<lastmod>2024/05/01</lastmod>"),
            url("https://example.com/c#top"),
        )
    )
    return path


def test_clean_file_exits_0(clean: Path) -> None:
    code, out, err = cli(["validate", str(clean)])
    assert (code, err) == (0, "")
    assert out == "1 sitemap, 2 entries: no problems found\n"


def test_findings_exit_1_grouped_with_the_source_line(mixed: Path) -> None:
    code, out, _ = cli(["validate", str(mixed)])
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == str(mixed)
    assert "error    SM301  Invalid <lastmod> '2024/05/01'" in lines[1]
    assert lines[1].split()[0] == "4:40"  # line:column of the <lastmod>
    assert lines[2].split("|", 1)[1].strip() == (
        "<url><loc>https://example.com/b</loc><lastmod>2024/05/01</lastmod></url>"
    )
    assert "warning  SM208" in lines[3]
    assert lines[-1] == "1 sitemap, 3 entries: 1 error, 1 warning (SM208 ×1, SM301 ×1)"
    assert "\x1b[" not in out  # not a terminal: no colour


def test_fail_on_warning(tmp_path: Path) -> None:
    path = tmp_path / "s.xml"
    path.write_text(urlset(url("https://example.com/guide#top")))
    assert cli(["validate", str(path)])[0] == 0
    assert cli(["validate", str(path), "--fail-on", "warning"])[0] == 1


def test_select_and_ignore(mixed: Path) -> None:
    code, out, _ = cli(["validate", str(mixed), "--ignore", "SM301"])
    assert code == 0 and "SM301" not in out and "SM208" in out
    code, out, _ = cli(["validate", str(mixed), "--select", "SM2"])
    assert code == 0 and "SM301" not in out and "SM208" in out
    code, out, _ = cli(["validate", str(mixed), "--select", "SM301,SM208", "--ignore", "SM208"])
    assert code == 1 and "SM208" not in out
    code, _, err = cli(["validate", str(mixed), "--select", "XX9"])
    assert code == 2 and "'XX9' names no rule" in err


def test_off_by_default_rule_runs_when_selected(tmp_path: Path) -> None:
    path = tmp_path / "s.xml"
    path.write_text(urlset(url("https://example.com/a", "<changefreq>daily</changefreq>")))
    assert "SM404" not in cli(["validate", str(path)])[1]
    assert "SM404" in cli(["validate", str(path), "--select", "SM404"])[1]


def test_strict_promotes_marked_rules(tmp_path: Path) -> None:
    path = tmp_path / "s.xml"
    path.write_text(
        urlset("<url><lastmod>2024-05-01</lastmod><loc>https://example.com/</loc></url>")
    )
    code, out, _ = cli(["validate", str(path)])
    assert code == 0 and "warning  SM105" in out
    code, out, _ = cli(["validate", str(path), "--strict"])
    assert code == 1 and "error    SM105" in out


def test_unreadable_target_exits_3(clean: Path) -> None:
    code, out, _ = cli(["validate", str(clean), str(clean.parent / "missing.xml")])
    assert code == 3
    assert "could not read" in out and "missing.xml" in out


def test_usage_errors_exit_2(clean: Path) -> None:
    assert (
        cli(
            [
                "validate",
            ]
        )[0]
        == 2
    )
    assert cli(["validate", str(clean), "--format", "yaml"])[0] == 2
    code, _, err = cli(
        [
            "validate",
            str(clean),
            str(clean),
            "--published-at",
            "https://a.example/",
            "--published-at",
            "https://b.example/",
            "--published-at",
            "https://c.example/",
        ]
    )
    assert code == 2 and "--published-at" in err


def test_location_rules_need_the_url(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset(url("https://example.com/a"), url("https://other.example.org/b")))
    assert cli(["validate", str(path)])[0] == 0  # no URL: the location rules cannot apply
    code, out, _ = cli(["validate", str(path), "--published-at", "https://example.com/sitemap.xml"])
    assert code == 1 and "SM210" in out and "other.example.org" in out
    code, out, _ = cli(
        [
            "validate",
            str(path),
            "--published-at",
            "https://example.com/sitemap.xml",
            "--allow-host",
            "other.example.org",
        ]
    )
    assert code == 0 and "SM210" not in out


@pytest.fixture
def build(tmp_path: Path) -> Path:
    """A build folder: an index, two children present (one gzip, one in a subfolder with an
    error), one missing, one on another site."""
    public = tmp_path / "public"
    (public / "news").mkdir(parents=True)
    (public / "sitemap.xml").write_text(
        index(
            "https://example.com/sitemap-1.xml",
            "https://example.com/sitemap-2.xml.gz",
            "https://example.com/news/sitemap.xml",
            "https://example.com/sitemap-3.xml",
        )
    )
    (public / "sitemap-1.xml").write_text(urlset(url("https://example.com/a")))
    (public / "sitemap-2.xml.gz").write_bytes(
        gzip.compress(urlset(url("https://example.com/b"), url("https://example.com/a")).encode())
    )
    (public / "news" / "sitemap.xml").write_text(
        urlset(url("https://example.com/news/1", "<lastmod>2024-13-01</lastmod>"))
    )
    return public


def test_build_folder_is_checked_as_a_set(build: Path) -> None:
    index_path = build / "sitemap.xml"
    code, out, _ = cli(
        ["validate", str(index_path), "--published-at", "https://example.com/sitemap.xml"]
    )
    assert code == 1
    assert f"{build / 'news' / 'sitemap.xml'}\n" in out
    assert "SM304" in out  # the error is in the child in news/
    assert "SM215" in out and "also listed in" in out  # /a is in two children
    assert (
        "note: not checked: https://example.com/sitemap-3.xml "
        f"(no local file {build / 'sitemap-3.xml'})" in out
    )
    assert out.splitlines()[-1].startswith("4 sitemaps, 8 entries: 1 error, 1 warning")
    assert out.splitlines()[-1].endswith("; 1 not checked")


def test_build_folder_json(build: Path) -> None:
    (build / "news" / "sitemap.xml").write_text(urlset(url("https://example.com/news/1")))
    code, out, _ = cli(
        [
            "validate",
            str(build / "sitemap.xml"),
            "--published-at",
            "https://example.com/sitemap.xml",
            "--format",
            "json",
            "--ignore",
            "SM215",
        ]
    )
    assert code == 0  # a missing child is noted, not an error
    doc = json.loads(out)
    assert doc["findings"] == []
    assert doc["summary"]["files"] == 4
    assert doc["summary"]["not_checked"][0]["sitemap"] == "https://example.com/sitemap-3.xml"


def test_child_outside_the_folder_is_an_error_and_not_checked(build: Path) -> None:
    (build / "sitemap.xml").write_text(index("https://cdn.example.net/sitemap-9.xml"))
    code, out, _ = cli(
        [
            "validate",
            str(build / "sitemap.xml"),
            "--published-at",
            "https://example.com/sitemap.xml",
        ]
    )
    assert code == 1 and "SM504" in out
    assert "not checked: https://cdn.example.net/sitemap-9.xml (outside the local" in out


def test_several_targets_are_one_set(tmp_path: Path) -> None:
    a, b = tmp_path / "a.xml", tmp_path / "b.xml"
    a.write_text(urlset(url("https://example.com/x")))
    b.write_text(urlset(url("https://example.com/x")))
    code, out, _ = cli(["validate", str(a), str(b)])
    assert code == 0
    assert f"Duplicate URL 'https://example.com/x', also listed in {a}" in out


def test_output_formats(mixed: Path, tmp_path: Path) -> None:
    code, out, _ = cli(["validate", str(mixed), "--format", "json"])
    doc = json.loads(out)
    assert code == 1 and [f["rule"] for f in doc["findings"]] == ["SM301", "SM208"]
    report = sk.validate(mixed)
    assert doc["summary"] == report.summary()
    code, out, _ = cli(["validate", str(mixed), "--format", "junit"])
    assert etree.fromstring(out.encode()).get("failures") == "1"
    code, out, _ = cli(["validate", str(mixed), "--format", "sarif"])
    sarif = json.loads(out)
    assert sarif["version"] == "2.1.0" and len(sarif["runs"][0]["results"]) == 2
    assert sarif["runs"][0]["tool"]["driver"]["version"] == sk.__version__
    code, out, _ = cli(["validate", str(mixed), "--format", "github"])
    assert out.splitlines()[0].startswith(f"::error file={mixed},line=4,col=40,title=SM301::")
    target = tmp_path / "report.sarif"
    code, out, _ = cli(["validate", str(mixed), "--format", "sarif", "-o", str(target)])
    assert code == 1 and out == "" and json.loads(target.read_text())["version"] == "2.1.0"


# -- URLs ----------------------------------------------------------------------------------


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "www"
    root.mkdir()
    with Site() as site:
        site.static(root)
        yield site.base, root


def test_url_target_and_its_children_are_fetched(server: tuple[str, Path]) -> None:
    base, root = server
    (root / "sitemap.xml").write_text(index(f"{base}/pages.xml", f"{base}/gone.xml"))
    (root / "pages.xml").write_text(urlset(url(f"{base}/a"), url("https://example.com/b")))
    code, out, _ = cli(["validate", f"{base}/sitemap.xml"])
    assert code == 1
    assert "SM210" in out and "'https://example.com/b' is on host 'example.com'" in out
    assert f"{base}/gone.xml\n" in out and "SM012" in out and "HTTP 404" in out


def test_url_that_cannot_be_fetched_exits_3() -> None:
    code, out, _ = cli(["validate", "http://127.0.0.1:9/sitemap.xml"])
    assert code == 3 and "could not read" in out


# -- write --validate ----------------------------------------------------------------------


def test_write_validate_publishes_clean_output(tmp_path: Path) -> None:
    urls = tmp_path / "urls.txt"
    urls.write_text("https://example.com/a\nhttps://example.com/b\n")
    out = tmp_path / "out"
    code, _, _ = cli(
        ["write", str(urls), "-o", str(out), "--base-url", "https://example.com/", "--validate"]
    )
    assert code == 0
    assert (out / "sitemap.xml").is_file()


def test_write_validate_refuses_to_publish_errors(tmp_path: Path) -> None:
    urls = tmp_path / "urls.txt"
    urls.write_text("https://example.com/a\nhttps://other.example.org/b\n")
    out = tmp_path / "out"
    code, _, err = cli(
        [
            "write",
            str(urls),
            "-o",
            str(out),
            "--base-url",
            "https://example.com/",
            "--no-location-check",
            "--validate",
        ]
    )
    assert code == 1
    assert "SM210" in err and "nothing was published" in err
    assert not (out / "sitemap.xml").exists()


def test_writer_check_hook_runs_before_publishing(tmp_path: Path) -> None:
    seen: list[str] = []

    def check(path: Path) -> list[Finding]:
        seen.append(path.name)
        assert path.is_file() and not (tmp_path / "out" / path.name).exists()
        return [Finding("SM301", "error", "Invalid lastmod", str(path), 3)]

    writer = sk.SitemapWriter(tmp_path / "out", base_url="https://example.com/", check=check)
    with pytest.raises(InputError, match="SM301 Invalid lastmod"), writer:
        writer.add(sk.Url("https://example.com/a"))
    assert seen == ["sitemap.xml"]
    assert not (tmp_path / "out" / "sitemap.xml").exists()
    ok = sk.SitemapWriter(tmp_path / "ok", base_url="https://example.com/", check=lambda p: [])
    with ok:
        ok.add(sk.Url("https://example.com/a"))
    assert (tmp_path / "ok" / "sitemap.xml").is_file()


# -- findings people and CI systems can use ----------------------------------------------


def test_location_findings_say_how_cross_submission_is_proven_and_passed(
    tmp_path: Path,
) -> None:
    (tmp_path / "s.xml").write_text(
        urlset(url("https://other.example/a"), url("https://example.com:8443/b"))
    )
    code, out, _ = cli(
        ["validate", str(tmp_path / "s.xml"), "--published-at", "https://example.com/s.xml"]
    )
    assert code == 1
    assert "SM210" in out and "SM212" in out
    assert (
        "Allowed when https://other.example/robots.txt names this sitemap in a 'Sitemap:' "
        "line (cross-submission): then validate with --allow-host other.example (and write "
        "with --no-location-check)"
    ) in out
    assert "--allow-host https://example.com:8443 " in out
    code, _, err = cli(
        ["write", "-", "-o", str(tmp_path / "o"), "--base-url", "https://example.com/"],
        input="loc\nhttps://other.example/a\n",
    )
    assert code == 1 and "--no-location-check" in err and "'Sitemap:' line" in err


def test_sarif_from_the_command_points_at_the_rules_page(tmp_path: Path) -> None:
    (tmp_path / "s.xml").write_text(urlset(url("https://other.example/a")))
    code, out, _ = cli(
        [
            "validate",
            str(tmp_path / "s.xml"),
            "--published-at",
            "https://example.com/s.xml",
            "--format",
            "sarif",
        ]
    )
    assert code == 1
    rules = json.loads(out)["runs"][0]["tool"]["driver"]["rules"]
    sm210 = next(r for r in rules if r["id"] == "SM210")
    # no repository URL in the package's metadata: relative to the repository's root
    assert sm210["helpUri"] == "docs/rules.md#sm210"


def _on_a_terminal(args: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    """Run the command with stderr on a pseudo-terminal: (exit code, stdout, stderr)."""
    import os
    import pty
    import subprocess
    import sys

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sitemapkit", *args],
        stdout=subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
    )
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    out = proc.stdout.read() if proc.stdout else b""
    return proc.wait(timeout=60), out, err


def _write_args(tmp_path: Path, out: str, *more: str) -> list[str]:
    """``write`` of 60 URLs in shards of 20 into ``tmp_path / out``."""
    src = tmp_path / "in.txt"
    src.write_text("".join(f"https://example.com/p{i}\n" for i in range(60)))
    base = ["--base-url", "https://example.com/", "--max-urls", "20"]
    return ["write", str(src), "-o", str(tmp_path / out), *base, *more]


def _site(tmp_path: Path) -> Path:
    code, _, err = cli(_write_args(tmp_path, "public"))
    assert code == 0, err
    return tmp_path / "public"


def test_validate_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    public = _site(tmp_path)
    args = [
        "validate",
        str(public / "sitemap.xml"),
        "--published-at",
        "https://example.com/sitemap.xml",
    ]
    code, out, err = _on_a_terminal(args, tmp_path)
    assert code == 0, err
    assert b"\r\x1b[Kvalidating sitemap.xml (0 sitemaps, 0 entries done)" in err
    assert err.endswith(b"\r\x1b[K")  # erased before the report
    assert b"validating" not in out  # the report itself stays plain
    code, _, piped = cli(args)
    assert code == 0 and "validating" not in piped and "\x1b" not in piped


def test_write_validate_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    code, out, err = _on_a_terminal(_write_args(tmp_path, "public", "--validate"), tmp_path)
    assert code == 0, err
    assert b"validating the output: sitemap-1.xml (0 files, 0 entries done)" in err
    assert b"sitemap-3.xml" in out
    code, _, piped = cli(_write_args(tmp_path, "again", "--validate"))
    assert code == 0 and "validating" not in piped


#: What validating local files never needs: an HTTP client and the modules that only a
#: fetch or a date header uses (tens of milliseconds of start-up, on every CI run).
_NOT_FOR_LOCAL_FILES = {"httpx", "httpcore", "http.client", "urllib.request", "email.utils"}


def test_validating_local_files_imports_no_http_client(tmp_path: Path) -> None:
    (tmp_path / "a.xml").write_text(
        urlset(
            url("https://example.com/a", "<lastmod>2024/05/01</lastmod>"),
            url("https://example.com/b"),
        )
    )
    (tmp_path / "sitemap.xml").write_text(index("https://example.com/a.xml"))
    code, out, loaded = cli_modules(
        ["validate", str(tmp_path / "sitemap.xml"), "--format", "json"], cwd=tmp_path
    )
    assert code == 1  # the lastmod's finding
    assert "SM301" in {f["rule"] for f in json.loads(out)["findings"]}  # the child was read
    assert not _NOT_FOR_LOCAL_FILES & loaded
