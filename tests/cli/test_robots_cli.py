"""``sitemapkit robots``: add or check Sitemap: lines in a file, or from stdin to stdout."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ..conftest import cli

S = "https://example.com/sitemap.xml"
ORIGINAL = b"\xef\xbb\xbf# robots\r\nUser-agent: *\r\nDisallow: /private/  # keep\r\n"


@pytest.fixture
def robots(tmp_path: Path) -> Path:
    p = tmp_path / "robots.txt"
    p.write_bytes(ORIGINAL)
    p.chmod(0o640)
    return p


def test_adds_the_line_in_place(robots: Path) -> None:
    code, out, err = cli(["robots", "--sitemap", S, "--robots", str(robots)])
    assert code == 0 and out == ""
    assert robots.read_bytes() == ORIGINAL + b"\r\nSitemap: " + S.encode() + b"\r\n"
    assert stat.S_IMODE(robots.stat().st_mode) == 0o640  # permissions kept
    assert f"added: Sitemap: {S}" in err
    assert [p.name for p in robots.parent.iterdir()] == ["robots.txt"]  # no temp file left


def test_a_second_run_changes_nothing(robots: Path) -> None:
    cli(["robots", "--sitemap", S, "--robots", str(robots)])
    os.utime(robots, (1_000_000, 1_000_000))
    code, _, err = cli(["robots", "--sitemap", S, "--robots", str(robots)])
    assert code == 0
    assert robots.stat().st_mtime == 1_000_000  # not rewritten
    assert f"robots.txt:5: listed: {S}" in err


def test_check_mode(robots: Path) -> None:
    code, out, err = cli(["robots", "--sitemap", S, "--robots", str(robots), "--check"])
    assert (code, out) == (1, "")
    assert f"missing: Sitemap: {S}" in err
    assert robots.read_bytes() == ORIGINAL  # untouched
    robots.write_bytes(ORIGINAL + b"site-map: " + S.encode() + b"\r\n")
    code, _, err = cli(["robots", "--sitemap", S, "--robots", str(robots), "--check"])
    assert code == 0
    assert "misspelling of 'Sitemap'" in err and "listed" in err
    code, _, err = cli(
        ["robots", "--sitemap", S, "--robots", str(robots.parent / "none.txt"), "--check"]
    )
    assert code == 1 and "does not exist" in err
    assert not (robots.parent / "none.txt").exists()


def test_creates_a_missing_file(tmp_path: Path) -> None:
    target = tmp_path / "robots.txt"
    code, _, _ = cli(["robots", "--sitemap", S, "--sitemap", S + ".gz", "--robots", str(target)])
    assert code == 0
    assert target.read_bytes() == f"Sitemap: {S}\nSitemap: {S}.gz\n".encode()


def test_stdin_to_stdout() -> None:
    code, out, _ = cli(["robots", "--sitemap", S], input=b"User-agent: *\nDisallow:\n")
    assert code == 0
    assert out == f"User-agent: *\nDisallow:\n\nSitemap: {S}\n"


@pytest.mark.parametrize("bad", ["/sitemap.xml", "example.com/sitemap.xml", "https://e.com/#x"])
def test_relative_urls_are_refused(bad: str, robots: Path) -> None:
    code, _, err = cli(["robots", "--sitemap", bad, "--robots", str(robots)])
    assert code == 2 and "--sitemap" in err
    assert robots.read_bytes() == ORIGINAL


def test_unreadable_file_exits_3(tmp_path: Path) -> None:
    code, _, err = cli(["robots", "--sitemap", S, "--robots", str(tmp_path)])  # a folder
    assert code == 3 and "cannot read" in err
