"""validation's tree process, on the one child-process helper: the same pass as in-process,
and a dead process is one of the failures the validator goes on from."""

from __future__ import annotations

import datetime as dt
import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from sitemapkit.lint.checks import Context, entry_anchors
from sitemapkit.lint.tree import Scan, tree_pass
from sitemapkit.validation.process import FAILURES, TreeProcess

DOC = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    b"<url><loc>https://example.com/a</loc><priority>2</priority></url>\n"
    b"<url><loc>https://example.com/b</loc><changefreq>often</changefreq></url>\n"
    b"</urlset>\n"
)


def test_the_child_gives_the_pass_this_process_gives() -> None:
    ctx = Context()
    here = tree_pass(DOC, "s.xml", ctx)
    assert here.root is not None
    anchors = list(entry_anchors(here.root, here.kind))
    proc = TreeProcess()
    try:
        there = proc.run(DOC, "s.xml", ctx)
        again = proc.run(DOC, "t.xml", ctx)  # one process serves document after document
    finally:
        proc.close()
    assert there.root is None  # never a tree across the boundary
    assert there.findings == here.findings and there.findings
    assert there.kind == here.kind == "urlset"
    assert list(there.anchors or ()) == anchors
    assert {f.where for f in again.findings} == {"t.xml"}


def test_a_dead_tree_process_is_a_failure_the_validator_goes_on_from() -> None:
    proc = TreeProcess()
    try:
        os.kill(proc.pid, signal.SIGKILL)  # as the OOM killer would
        with pytest.raises(FAILURES):
            proc.run(DOC * 200, "s.xml", Context())
    finally:
        proc.close()


def _mixed(n: int) -> bytes:
    """A urlset that is not plain, with findings of every kind the locator places: images
    (one loc bad), hreflang clusters (some without their return link: set findings placed
    on the <loc> of the entry), a bad lastmod, a comment holding tags, a CDATA loc, and
    entries that share a line."""
    rows = []
    for i in range(n):
        alt = ""
        if i % 5 == 0:
            alt = (
                f'<xhtml:link rel="alternate" hreflang="en" href="https://example.com/p{i}"/>'
                f'<xhtml:link rel="alternate" hreflang="de" href="https://example.com/p{i + 1}"/>'
            )
        image = "not a url" if i % 7 == 3 else f"https://example.com/i{i}.jpg"
        lastmod = "2024-13-01" if i % 11 == 4 else "2024-01-02"
        loc = (
            f"<![CDATA[https://example.com/p{i}]]>" if i % 13 == 6 else f"https://example.com/p{i}"
        )
        rows.append(
            f"<url><loc>{loc}</loc><lastmod>{lastmod}</lastmod>{alt}"
            f"<image:image><image:loc>{image}</image:loc></image:image></url>"
        )
        rows.append("<!-- <url><loc>https://example.com/x</loc></url> -->\n" if i % 9 == 2 else "")
        rows.append(" " if i % 4 == 1 else "\n")  # some entries share a line
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
        ' xmlns:xhtml="http://www.w3.org/1999/xhtml"'
        ' xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">\n'
        + "".join(rows)
        + "</urlset>\n"
    ).encode()


def _scans(monkeypatch: pytest.MonkeyPatch, what: Callable[[Scan], int]) -> list[int]:
    """``what`` of each Scan the tree process returns from now on, in order (the real
    process runs; only its answers are looked at)."""
    seen: list[int] = []
    real = TreeProcess.run

    def run(self: TreeProcess, plain: bytes, where: str, ctx: Context) -> Scan:
        scan = real(self, plain, where, ctx)
        seen.append(what(scan))
        return scan

    monkeypatch.setattr(TreeProcess, "run", run)
    return seen


@pytest.mark.parametrize("pieces", [False, True])
def test_the_tree_process_beside_the_reader_gives_the_serial_findings_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pieces: bool
) -> None:
    from sitemapkit import validate
    from sitemapkit.validation import Tuning

    path = tmp_path / "sitemap.xml"
    path.write_bytes(_mixed(300))
    spans = _scans(monkeypatch, lambda scan: len(scan.spans or ()))
    split = {"pieces_from": 0, "piece": 7} if pieces else {}
    url = "https://example.com/sitemap.xml"
    now = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    parallel = validate(path, published_at=url, now=now, tuning=Tuning(remote_from=0, **split))
    assert spans == [2 * 300]  # the tree process ran, and found every entry's span
    serial = validate(path, published_at=url, now=now, tuning=Tuning(remote_from=1 << 40, **split))
    assert len(spans) == 1  # the serial run kept the pass in this process
    assert parallel.findings == serial.findings  # every field, in the same order
    rules = {f.rule for f in serial.findings}
    assert {"IMG603", "SM304", "HRE905"} <= rules, rules
    assert all(f.column is not None for f in serial.findings if f.line is not None)


def test_the_loc_offsets_found_with_the_spans_place_each_entry_where_its_tags_do() -> None:
    from array import array

    from sitemapkit.lint.checks.position import Locator, entry_spans

    data = _mixed(300)
    locs: array[int] = array("q")
    spans = entry_spans(data, "urlset", locs=locs)
    assert len(locs) == len(spans) // 2 == 300
    wanted = [(n, None) for n in range(300)]
    by_tags = Locator(data, "urlset", spans=spans).positions(wanted)
    by_offsets = Locator(data, "urlset", spans=spans, locs=locs).positions(wanted)
    assert by_offsets == by_tags and len(by_tags) == 300
    assert all(data.startswith(b"<loc>", at) for at in locs)


def _cluster_set(folder: Path) -> list[Path]:
    """Three non-plain files whose hreflang clusters cross the files (some return links
    missing: set findings placed on an entry's <loc> in another file) and repeat locs."""
    paths = []
    for k in range(3):
        doc = _mixed(200 + 40 * k).decode()
        # file k's alternates name file k+1's pages, and every file lists p0..p199 again
        doc = doc.replace(
            'hreflang="de" href="https://example.com/p',
            f'hreflang="de" href="https://example.com/f{(k + 1) % 3}/p',
        )
        doc = doc.replace("<loc>https://example.com/p1", f"<loc>https://example.com/f{k}/p1")
        path = folder / f"sitemap-{k + 1}.xml"
        path.write_text(doc)
        paths.append(path)
    return paths


def test_a_non_plain_set_validated_beside_the_tree_process_gives_the_serial_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sitemapkit import validate
    from sitemapkit.validation import Tuning

    paths = _cluster_set(tmp_path)
    runs = _scans(monkeypatch, lambda scan: len(scan.locs or ()))
    now = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    parallel = validate(paths, now=now, excerpts=True, tuning=Tuning(remote_from=0))
    assert runs == [200, 240, 280]  # each file's pass ran there, with its entries' locs
    serial = validate(paths, now=now, excerpts=True, tuning=Tuning(remote_from=1 << 40))
    assert len(runs) == 3
    assert parallel.findings == serial.findings  # every field, in the same order
    assert (parallel.notes, parallel.files, parallel.entries, parallel.omitted) == (
        serial.notes,
        serial.files,
        serial.entries,
        serial.omitted,
    )
    assert parallel.excerpts == serial.excerpts
    rules = {f.rule for f in serial.findings}
    assert {"IMG603", "SM304", "HRE905"} <= rules, rules
    across = [f for f in serial.findings if f.rule.startswith("HRE") and f.column is not None]
    assert {f.where for f in across} >= {str(p) for p in paths[1:]}, across
