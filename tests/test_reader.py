"""sitemapkit.reader: read() passes its keywords on to read_batches()."""

from __future__ import annotations

from pathlib import Path

from sitemapkit.reader import ReadReport, read


def test_read_passes_its_keywords_on(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text("https://example.com/a\nnot a url\n")
    report = ReadReport()
    assert [r.record.loc for r in read(str(path), report=report)] == ["https://example.com/a"]
    assert [f.rule for f in report.findings] == ["SM009"]
