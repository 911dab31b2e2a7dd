"""``sitemapkit diff``: the three formats, the summary and the exit codes."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

import sitemapkit as sk

from ..conftest import cli

BASE = "https://example.com/"


@pytest.fixture
def pair(tmp_path: Path) -> tuple[str, str]:
    old = tmp_path / "old.xml"
    new = tmp_path / "new.xml"
    old.write_bytes(
        sk.dumps(
            [
                sk.Url(BASE + "a", lastmod="2024-05-01", priority=0.5),
                sk.Url(BASE + "gone"),
                sk.Url(BASE + "same"),
            ]
        )
    )
    new.write_bytes(
        sk.dumps(
            [
                sk.Url(BASE + "same"),
                sk.Url(
                    BASE + "a",
                    lastmod="2024-06-01",
                    priority=0.5,
                    images=(sk.Image(BASE + "i.jpg"),),
                ),
                sk.Url(BASE + "new?x=1&y=2"),
            ]
        )
    )
    return str(old), str(new)


def test_text_format(pair: tuple[str, str]) -> None:
    code, out, err = cli(["diff", *pair])
    assert code == 1
    assert out.splitlines() == [
        f'~ {BASE}a  lastmod: 2024-05-01 -> 2024-06-01; images: [] -> [{{"loc":"{BASE}i.jpg"}}]',
        f"- {BASE}gone",
        f"+ {BASE}new?x=1&y=2",
        "1 added, 1 removed, 1 changed, 1 unchanged (old 3 URLs, new 3 URLs)",
    ]
    assert err == ""


def test_jsonl_format(pair: tuple[str, str]) -> None:
    code, out, err = cli(["diff", *pair, "--format", "jsonl"])
    assert code == 1
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["change"], r["loc"], r["fields"]) for r in rows] == [
        ("changed", BASE + "a", ["lastmod", "images"]),
        ("removed", BASE + "gone", []),
        ("added", BASE + "new?x=1&y=2", []),
    ]
    assert rows[0]["old"]["lastmod"] == "2024-05-01" and rows[0]["new"]["images"] == [
        {"loc": BASE + "i.jpg"}
    ]
    assert rows[1]["new"] is None and rows[2]["old"] is None
    assert rows[2]["new"] == sk.Url(BASE + "new?x=1&y=2").to_record()
    assert (
        err == "sitemapkit: 1 added, 1 removed, 1 changed, 1 unchanged (old 3 URLs, new 3 URLs)\n"
    )


def test_csv_format(pair: tuple[str, str]) -> None:
    code, out, _ = cli(["diff", *pair, "--format", "csv"])
    assert code == 1
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == ["change", "loc", "fields", "old_lastmod", "new_lastmod", "old", "new"]
    assert [(r["change"], r["loc"], r["fields"]) for r in rows] == [
        ("changed", BASE + "a", "lastmod images"),
        ("removed", BASE + "gone", ""),
        ("added", BASE + "new?x=1&y=2", ""),
    ]
    assert (rows[0]["old_lastmod"], rows[0]["new_lastmod"]) == ("2024-05-01", "2024-06-01")
    assert json.loads(rows[0]["old"]) == {
        "kind": "url",
        "loc": BASE + "a",
        "lastmod": "2024-05-01",
        "priority": 0.5,
    }
    assert rows[1]["new"] == ""


def test_equal_sets_exit_0(tmp_path: Path) -> None:
    a = tmp_path / "a.txt"
    a.write_text(f"{BASE}x\n{BASE}y\n")
    b = tmp_path / "b.xml"
    b.write_bytes(sk.dumps([sk.Url(BASE + "y"), sk.Url(BASE + "x")]))
    code, out, _ = cli(["diff", str(a), str(b)])
    assert code == 0
    assert out == "0 added, 0 removed, 0 changed, 2 unchanged (old 2 URLs, new 2 URLs)\n"
    code, out, _ = cli(["diff", str(a), str(b), "--format", "jsonl"])
    assert (code, out) == (0, "")


def test_unreadable_input_exits_3(pair: tuple[str, str], tmp_path: Path) -> None:
    code, out, err = cli(["diff", pair[0], str(tmp_path / "nope.xml")])
    assert code == 3 and out == ""
    assert err.startswith("sitemapkit: error: cannot open")
    broken = tmp_path / "broken.xml"
    broken.write_bytes(Path(pair[1]).read_bytes()[:-30])
    code, out, err = cli(["diff", pair[0], str(broken)])
    assert code == 3 and out == ""
    assert "not read completely (SM004" in err and "--partial" in err
    code, out, err = cli(["diff", pair[0], str(broken), "--partial"])
    assert code == 1 and "SM004" in err and out.startswith("~ ")


def test_small_memory_budget(pair: tuple[str, str], tmp_path: Path) -> None:
    code, out, _ = cli(["diff", *pair, "--max-memory", "1", "--tmpdir", str(tmp_path)])
    assert code == 1 and len(out.splitlines()) == 4


def test_help_documents_formats_and_exit_codes() -> None:
    code, out, _ = cli(["diff", "--help"])
    assert code == 0
    for word in ("jsonl", "csv", "Exit codes", "folder", "--partial"):
        assert word in out
