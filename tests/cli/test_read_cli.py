"""``sitemapkit read`` on local files: formats, findings and exit codes."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import pytest

import sitemapkit as sk

from ..conftest import cli, cli_bytes
from ..site import Site

DOC = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    b"<url><loc>https://example.com/a?x=1&amp;y=2</loc><lastmod>2024-05-01</lastmod></url>\n"
    b"<url><loc>https://example.com/b</loc><priority>0.3</priority></url>\n"
    b"</urlset>\n"
)


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    p = tmp_path / "s.xml.gz"
    p.write_bytes(gzip.compress(DOC))
    return p


def test_urls_format(doc: Path) -> None:
    code, out, _ = cli_bytes(["read", str(doc), "--format", "urls"])
    assert code == 0
    assert out == b"https://example.com/a?x=1&y=2\nhttps://example.com/b\n"


def test_jsonl_format_is_the_record_shape(doc: Path) -> None:
    _, out, _ = cli_bytes(["read", str(doc)])
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows[0] == {
        "kind": "url",
        "loc": "https://example.com/a?x=1&y=2",
        "lastmod": "2024-05-01",
        "changefreq": None,
        "priority": None,
        "images": [],
        "videos": [],
        "news": None,
        "alternates": [],
        "source": str(doc),
    }
    assert rows[1]["priority"] == 0.3


def test_csv_format(doc: Path) -> None:
    _, out, _ = cli_bytes(["read", str(doc), "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(out.decode())))
    assert [r["loc"] for r in rows] == ["https://example.com/a?x=1&y=2", "https://example.com/b"]
    assert rows[1]["priority"] == "0.3"


def test_damaged_file_prints_what_it_can_and_exits_1(tmp_path: Path) -> None:
    p = tmp_path / "bad.xml"
    p.write_bytes(DOC[: DOC.index(b"<url><loc>https://example.com/b")] + b"<url><loc>https://exa")
    code, out, err = cli(["read", str(p), "--format", "urls"])
    assert code == 1
    assert out == "https://example.com/a?x=1&y=2\n"
    assert "SM004" in err and str(p) in err


def test_not_a_sitemap_exits_3(tmp_path: Path) -> None:
    p = tmp_path / "page.html"
    p.write_bytes(b"<!DOCTYPE html><html><body>hi</body></html>")
    code, out, err = cli(["read", str(p)])
    assert code == 3 and out == ""
    assert err.startswith("sitemapkit: error:")


def test_relative_locs_with_published_at(tmp_path: Path) -> None:
    p = tmp_path / "r.xml"
    p.write_bytes(DOC.replace(b"https://example.com/b", b"/shop/b"))
    _, out, _ = cli_bytes(
        ["read", str(p), "--format", "urls", "--published-at", "https://example.com/sitemap.xml"]
    )
    assert out.splitlines()[1] == b"https://example.com/shop/b"


def test_a_site_whose_sitemap_is_missing_exits_3(tmp_path: Path) -> None:
    with Site() as site:
        site.static(tmp_path)
        (tmp_path / "robots.txt").write_text(f"Sitemap: {site.url('/gone.xml')}\n")
        code, out, err = cli(["read", site.url("/"), "--format", "urls"])
    assert code == 3 and out == ""
    assert "SM012" in err and "404" in err


def test_tree_shows_each_sitemap_with_its_status(tmp_path: Path) -> None:
    with Site() as site:
        base = site.url("/")
        with sk.SitemapWriter(tmp_path, base_url=base, max_urls=2, gzip=True) as w:
            for i in range(5):
                w.add(f"{base}p{i}")
        (tmp_path / "robots.txt").write_text(f"Sitemap: {base}sitemap.xml\n")
        site.static(tmp_path)
        code, out, _ = cli(["read", base, "--format", "tree"])
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"{base}robots.txt  robots.txt  HTTP 200"
    assert lines[1].startswith(f"{base}sitemap.xml  sitemapindex  HTTP 200  3 entries")
    children = sorted(line.strip().split("  ")[0] for line in lines[2:5])
    assert children == [f"{base}sitemap-{n}.xml.gz" for n in (1, 2, 3)]
    assert all(line.startswith("  ") and "HTTP 200" in line for line in lines[2:5])
    assert lines[5] == "4 sitemaps, 5 entries"


def test_an_entry_dropped_with_a_warning_still_exits_1(tmp_path: Path) -> None:
    p = tmp_path / "ent.xml"
    p.write_bytes(
        b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY e "x">]>'
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>https://example.com/a</loc></url>"
        b"<url><loc>https://example.com/&e;</loc></url></urlset>"
    )
    code, out, err = cli(["read", str(p), "--format", "urls"])
    assert (code, out) == (1, "https://example.com/a\n")
    assert "SM011" in err
