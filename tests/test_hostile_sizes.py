"""Huge values in inputs stay bounded: each command runs under an address-space cap.

A regular expression that keeps backtracking state per character needs about 120 bytes a
character; a 10 MB value would need over 1 GB and fail under the cap.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

CAP = 600 << 20  # bytes of address space: the commands need a fraction of it
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def run_capped(args: list[str]) -> subprocess.CompletedProcess[str]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))

    return subprocess.run(
        [sys.executable, "-m", "sitemapkit", *args],
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=cap,
        timeout=120,
    )


@pytest.mark.parametrize("suffix", [".txt", ".csv"])
def test_a_10_mb_url_line_is_refused_by_length(tmp_path: Path, suffix: str) -> None:
    src = tmp_path / f"in{suffix}"
    head = "loc\n" if suffix == ".csv" else ""
    src.write_text(head + "https://e.com/" + "a" * 10_000_000 + "\n")
    proc = run_capped(
        ["write", str(src), "-o", str(tmp_path / "o"), "--base-url", "https://e.com/"]
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "sitemapkit: error:" in proc.stderr and "MemoryError" not in proc.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("command", ["read", "validate"])
def test_a_loc_of_five_million_entities_is_reported_without_blowing_up(
    tmp_path: Path, command: str
) -> None:
    doc = tmp_path / "amp.xml"
    doc.write_text(
        f'<urlset xmlns="{NS}"><url><loc>https://e.com/{"&amp;" * 5_000_000}</loc></url>'
        "<url><loc>https://e.com/ok</loc></url></urlset>"
    )
    proc = run_capped([command, str(doc)])
    assert proc.returncode == 1, proc.stderr[-2000:]
    said = proc.stdout + proc.stderr  # validate reports on stdout, read on stderr
    assert "SM203" in said and "MemoryError" not in said
    if command == "read":
        assert "https://e.com/ok" in proc.stdout
