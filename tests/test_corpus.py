"""The wild corpus (tests/corpus/, issue #11): the classes this suite holds, every row.

Every row of ``cases.tsv`` is read with ``sitemapkit read`` in-process as check.py does
it; its records' kind, count, first and last loc, its exit code and the field checks of
its note are asserted. The site rows are read twice: from the files beside their entry,
and over HTTP from tests/site.py's server with the site's origin rewritten to the
server's (in document order however the fetches overlap). Every document that is not a
robots.txt is also fed to the incremental parser byte by byte and split at random
offsets: the same records, findings and stop as whole. (A robots.txt is read whole, at
most 500 KiB: it has no incremental reader to split.)
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
import json
import random
from pathlib import Path
from typing import Any

import pytest

from sitemapkit.core.parse import SitemapParser
from sitemapkit.errors import SitemapError

from .conftest import cli_bytes
from .site import Reply, Site

CORPUS = Path(__file__).parent / "corpus"
_spec = importlib.util.spec_from_file_location("corpus_check", CORPUS / "check.py")
assert _spec is not None and _spec.loader is not None
check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check)

with open(CORPUS / "cases.tsv", encoding="utf-8", newline="") as _f:
    ROWS = list(csv.DictReader(_f, delimiter="\t", quoting=csv.QUOTE_NONE))


def _cls(row: dict[str, str]) -> str:
    return row["note"].split(":", 1)[0]


HELD = ROWS
SITES = [r for r in ROWS if _cls(r) == "site"]
DOCUMENTS = [r for r in ROWS if _cls(r) not in ("robots", "site")]


def _read(args: list[str], row: dict[str, str]) -> tuple[int, list[dict[str, Any]], str]:
    cmd = ["read", *args, "--format", "jsonl"]
    if row["kind"] == "sitemap":
        cmd.append("--no-follow")
    code, out, err = cli_bytes(cmd)
    return code, [json.loads(line) for line in out.splitlines() if line.strip()], err


def _assert_row(row: dict[str, str], code: int, records: list[dict[str, Any]], err: str) -> None:
    what = f"{row['id']}: {row['note']}\nstderr:\n{err}"
    assert code == int(row["exit"]), what
    assert len(records) == int(row["count"]), what
    if records:
        assert {r["kind"] for r in records} == {row["kind"]}, what
        assert records[0]["loc"] == row["first_loc"], what
        assert records[-1]["loc"] == row["last_loc"], what
    for which, name, op, expected in check.CHECK.findall(row["note"]):
        assert records, what
        value = check.field(records[0] if which == "first" else records[-1], name)
        assert check.same(value, op, expected), f"{which}.{name} = {value!r}; {what}"
    if int(row["exit"]) == 3:
        assert "sitemapkit:" in err, f"nothing read is a finding: {what}"


def test_the_corpus_is_large_and_its_rows_complete() -> None:
    assert len(ROWS) >= 150
    for row in ROWS:
        assert (CORPUS / row["file"]).exists(), row["id"]
        assert row["kind"] in ("url", "sitemap", "none"), row["id"]
        assert (row["kind"] == "none") == (row["count"] == "0"), row["id"]


@pytest.mark.parametrize("row", HELD, ids=[r["id"] for r in HELD])
def test_row_read_from_its_files(row: dict[str, str]) -> None:
    args = [str(CORPUS / row["file"])]
    if row["served_url"]:
        args += ["--published-at", row["served_url"]]
    _assert_row(row, *_read(args, row))


def _serve(site: Site, folder: Path, origin: str) -> None:
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        body = path.read_bytes()
        gz = body[:2] == b"\x1f\x8b"
        if gz:
            body = gzip.decompress(body)
        body = body.replace(origin.encode(), site.base.encode())
        if gz:
            body = gzip.compress(body, mtime=0)
        site["/" + path.relative_to(folder).as_posix()] = Reply(body=body)


@pytest.mark.parametrize("row", SITES, ids=[r["id"] for r in SITES])
def test_site_row_read_over_http(row: dict[str, str]) -> None:
    origin = "/".join(row["served_url"].split("/", 3)[:3])
    with Site() as site:
        _serve(site, CORPUS / "sites" / Path(row["file"]).parts[1], origin)
        moved = {k: v.replace(origin, site.base) for k, v in row.items()}
        _assert_row(moved, *_read([moved["served_url"]], moved))


def _parse(
    data: bytes, pieces: list[int], base_url: str | None
) -> tuple[list[object], list[tuple[str, int | None, int | None]], str]:
    """The records, the findings and the error that stopped the parser (``""``: none)."""
    parser = SitemapParser(source="doc", strict=False, base_url=base_url)
    records: list[object] = []
    stopped = ""
    at = 0
    try:
        for size in pieces:
            records += parser.feed(data[at : at + size])
            at += size
        records += parser.feed(data[at:])
        records += parser.close()
    except SitemapError as exc:
        stopped = exc.message
    return records, [(f.rule, f.line, f.column) for f in parser.findings], stopped


@pytest.mark.parametrize("row", DOCUMENTS, ids=[r["id"] for r in DOCUMENTS])
def test_document_read_alike_whole_byte_by_byte_and_split(row: dict[str, str]) -> None:
    data = (CORPUS / row["file"]).read_bytes()
    base = row["served_url"] or None
    whole = _parse(data, [], base)
    assert len(whole[0]) == int(row["count"]), row["id"]
    splits = [[1] * len(data)]
    rng = random.Random(row["id"])
    for _ in range(5):
        cuts = sorted(rng.sample(range(1, len(data)), min(4, len(data) - 1))) if data else []
        splits.append([b - a for a, b in zip([0, *cuts], cuts, strict=False)])
    for sizes in splits:
        assert _parse(data, sizes, base) == whole, row["id"]
