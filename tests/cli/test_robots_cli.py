"""``sitemapkit robots``: add or check Sitemap: lines in a file, or from stdin to stdout."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pytest

from sitemapkit.cli.main import main

S = "https://example.com/sitemap.xml"
ORIGINAL = b"\xef\xbb\xbf# robots\r\nUser-agent: *\r\nDisallow: /private/  # keep\r\n"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(["robots", *args])
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


@pytest.fixture
def robots(tmp_path: Path) -> Path:
    p = tmp_path / "robots.txt"
    p.write_bytes(ORIGINAL)
    p.chmod(0o640)
    return p


def test_adds_the_line_in_place(robots: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["--sitemap", S, "--robots", str(robots)], capsys)
    assert code == 0 and out == ""
    assert robots.read_bytes() == ORIGINAL + b"\r\nSitemap: " + S.encode() + b"\r\n"
    assert stat.S_IMODE(robots.stat().st_mode) == 0o640  # permissions kept
    assert f"added: Sitemap: {S}" in err
    assert [p.name for p in robots.parent.iterdir()] == ["robots.txt"]  # no temp file left


def test_a_second_run_changes_nothing(robots: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(["--sitemap", S, "--robots", str(robots)], capsys)
    os.utime(robots, (1_000_000, 1_000_000))
    code, _, err = run(["--sitemap", S, "--robots", str(robots)], capsys)
    assert code == 0
    assert robots.stat().st_mtime == 1_000_000  # not rewritten
    assert f"robots.txt:5: listed: {S}" in err


def test_check_mode(robots: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["--sitemap", S, "--robots", str(robots), "--check"], capsys)
    assert (code, out) == (1, "")
    assert f"missing: Sitemap: {S}" in err
    assert robots.read_bytes() == ORIGINAL  # untouched
    robots.write_bytes(ORIGINAL + b"site-map: " + S.encode() + b"\r\n")
    code, _, err = run(["--sitemap", S, "--robots", str(robots), "--check"], capsys)
    assert code == 0
    assert "misspelling of 'Sitemap'" in err and "listed" in err
    code, _, err = run(
        ["--sitemap", S, "--robots", str(robots.parent / "none.txt"), "--check"], capsys
    )
    assert code == 1 and "does not exist" in err
    assert not (robots.parent / "none.txt").exists()


def test_creates_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "robots.txt"
    code, _, _ = run(["--sitemap", S, "--sitemap", S + ".gz", "--robots", str(target)], capsys)
    assert code == 0
    assert target.read_bytes() == f"Sitemap: {S}\nSitemap: {S}.gz\n".encode()


def test_stdin_to_stdout(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b"User-agent: *\nDisallow:\n"))
    monkeypatch.setattr("sys.stdin", stdin)
    code, out, _ = run(["--sitemap", S], capsys)
    assert code == 0
    assert out == f"User-agent: *\nDisallow:\n\nSitemap: {S}\n"


@pytest.mark.parametrize("bad", ["/sitemap.xml", "example.com/sitemap.xml", "https://e.com/#x"])
def test_relative_urls_are_refused(
    bad: str, robots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["--sitemap", bad, "--robots", str(robots)], capsys)
    assert code == 2 and "--sitemap" in err
    assert robots.read_bytes() == ORIGINAL


def test_unreadable_file_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["--sitemap", S, "--robots", str(tmp_path)], capsys)  # a folder
    assert code == 3 and "cannot read" in err
