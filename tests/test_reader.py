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


def test_nothing_found_is_a_finding_not_a_silent_empty_list(tmp_path: Path) -> None:
    from .site import Site

    with Site() as site:
        site.static(tmp_path)  # nothing there: robots.txt and every known path 404
        report = ReadReport()
        assert list(read(site.url("/"), report=report)) == []
    (finding,) = report.findings
    assert finding.rule == "SM012" and finding.where == site.url("/")
    assert f"{site.url('/robots.txt')} HTTP 404" in finding.message
    assert f"{site.url('/sitemap.xml')} HTTP 404" in finding.message
    assert report.tree is not None and len(report.tree.probes) >= 9


def test_offline_refuses_a_url_target() -> None:
    import pytest

    from sitemapkit.errors import InputError

    with pytest.raises(InputError, match="--offline"):
        list(read("https://example.com/sitemap.xml", offline=True))


def test_a_folder_reads_its_robots_txt_or_its_sitemaps_indexes_first(tmp_path: Path) -> None:
    ns = "http://www.sitemaps.org/schemas/sitemap/0.9"
    (tmp_path / "a.xml").write_text(
        f'<urlset xmlns="{ns}"><url><loc>https://example.com/a</loc></url></urlset>'
    )
    (tmp_path / "z_index.xml").write_text(
        f'<sitemapindex xmlns="{ns}"><sitemap><loc>https://example.com/a.xml</loc></sitemap>'
        "</sitemapindex>"
    )
    (tmp_path / "b.txt").write_text("https://example.com/b\n")
    (tmp_path / "page.html").write_text("<html></html>")
    report = ReadReport()
    got = [(r.record.loc, Path(r.source).name) for r in read(str(tmp_path), report=report)]
    # the index first, its child through it (once), then the rest in name order
    assert got == [("https://example.com/a", "a.xml"), ("https://example.com/b", "b.txt")]
    assert {f.rule for f in report.findings} == {"SM010"}  # no XML declaration: a warning
    (tmp_path / "robots.txt").write_text("Sitemap: https://example.com/b.txt\n")
    got = [r.record.loc for r in read(str(tmp_path), published_at="https://example.com/")]
    assert got == ["https://example.com/b"]


def test_an_empty_folder_is_nothing_found(tmp_path: Path) -> None:
    report = ReadReport()
    assert list(read(str(tmp_path), report=report)) == []
    assert [f.rule for f in report.findings] == ["SM012"]
