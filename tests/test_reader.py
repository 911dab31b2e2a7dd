"""sitemapkit.reader: read() is read_batches() record by record, with the same keywords."""

from __future__ import annotations

import inspect
from pathlib import Path

from sitemapkit.reader import ReadKeywords, ReadReport, read, read_batches


def test_read_takes_the_keywords_of_read_batches() -> None:
    keywords = [
        name
        for name, p in inspect.signature(read_batches).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    assert list(ReadKeywords.__annotations__) == keywords


def test_read_passes_its_keywords_on(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text("https://example.com/a\nnot a url\n")
    report = ReadReport()
    assert [r.record.loc for r in read(str(path), report=report)] == ["https://example.com/a"]
    assert [f.rule for f in report.findings] == ["SM009"]
