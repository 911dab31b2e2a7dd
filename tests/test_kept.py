"""Issue #11 §4 end to end: ``sitemapkit read`` keeps usable off-spec values (exit 0, a
warning), its CSV and JSON Lines carry them and ``write`` takes them back; ``validate``
keeps the catalogue's severities (spec/RULES.md) for the same files."""

from __future__ import annotations

from pathlib import Path

import pytest

import sitemapkit as sk
from tests.conftest import cli

CORPUS = Path(__file__).parent / "corpus" / "files"


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("ok-news-en-us.xml", "NEWS804"),
        ("ok-xhtml-mobile-media.xml", "HRE901"),
        ("enc-latin1.xml", "SM001"),
        ("enc-utf16le.xml", "SM001"),
        ("enc-shift-jis.xml", "SM001"),
    ],
)
def test_read_keeps_with_a_warning_what_validate_reports_as_an_error(name: str, rule: str) -> None:
    code, out, err = cli(["read", str(CORPUS / name), "--format", "urls"])
    assert code == 0, err
    assert out.strip()
    assert f"{rule} warning" in err and " error" not in err
    report = sk.validate(CORPUS / name)
    assert rule in {f.rule for f in report.findings if f.severity == "error"}


def test_read_file_takes_a_path() -> None:
    records = [s.record for s in sk.read_file(CORPUS / "ok-news-pt-br.xml")]
    assert isinstance(records[0], sk.Url) and records[0].news is not None
    assert records[0].news.publication_language == "pt-BR"


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_read_output_of_kept_alternates_and_news_is_written_back(fmt: str, tmp_path: Path) -> None:
    source = tmp_path / "in.xml"
    source.write_bytes(
        (CORPUS / "ok-xhtml-mobile-media.xml")
        .read_bytes()
        .replace(
            b"</urlset>",
            b'<url><loc>https://www.example.com/app/</loc><xhtml:link rel="alternate" '
            b'href="android-app://com.example/https/www.example.com/app/"/>'
            b'<xhtml:link rel="alternate" hreflang="de" href="https://www.example.com/de/"/>'
            b"</url></urlset>",
        )
    )
    code, out, err = cli(["read", str(source), "--format", fmt])
    assert code == 0, err
    if fmt == "csv":
        assert "@only%20screen%20and%20(max-width:%20640px)=https://m.example.com/page-1/" in out
        assert "=android-app://com.example/https/www.example.com/app/ de=" in out
    dumped = tmp_path / f"records.{fmt}"
    dumped.write_text(out, encoding="utf-8")
    site = tmp_path / "site"
    code, _, err = cli(
        ["write", str(dumped), "-o", str(site), "--base-url", "https://www.example.com/"]
    )
    assert code == 0, err
    written = (site / "sitemap.xml").read_text(encoding="utf-8")
    assert (
        'media="only screen and (max-width: 640px)" href="https://m.example.com/page-1/"' in written
    )
    assert (
        '<xhtml:link rel="alternate" href="android-app://com.example/https/www.example.com/app/"/>'
        in written
    )
    again = [r.record for r in sk.read_file(site / "sitemap.xml")]
    before = [r.record for r in sk.read_file(source)]
    assert again == before


def test_an_alternate_without_hreflang_raises_no_hreflang_cluster_findings() -> None:
    report = sk.validate(CORPUS / "ok-xhtml-mobile-media.xml")
    # a mobile URL is not a language version: no HRE904 (self-reference) nor HRE905
    assert {f.rule for f in report.findings} == {"HRE901"}
