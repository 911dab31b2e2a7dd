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


def test_tree_of_one_sitemap_says_it_in_the_singular(tmp_path: Path) -> None:
    with Site() as site:
        base = site.url("/")
        (tmp_path / "sitemap.txt").write_text(f"{base}only\n")
        (tmp_path / "robots.txt").write_text(f"Sitemap: {base}sitemap.txt\n")
        site.static(tmp_path)
        code, out, _ = cli(["read", base, "--format", "tree"])
    assert code == 0
    assert out.splitlines()[-1] == "1 sitemap, 1 entry"


def test_a_value_read_without_its_entity_exits_1(tmp_path: Path) -> None:
    # issue #11 (corpus dx-xxe): the loc is read without the entity it used; the entity
    # is lost, so the read exits 1 although SM011 is a warning in the catalogue
    p = tmp_path / "ent.xml"
    p.write_bytes(
        b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY e "x">]>'
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>https://example.com/a</loc></url>"
        b"<url><loc>https://example.com/&e;</loc></url></urlset>"
    )
    code, out, err = cli(["read", str(p), "--format", "urls"])
    assert (code, out) == (1, "https://example.com/a\nhttps://example.com/\n")
    assert "SM011 error: <loc> uses the entity &e;" in err


# -- robots.txt as the target (issue #11 §1) ---------------------------------------------

ROBOTS = (
    b"\xef\xbb\xbfUser-agent: *\r\nDisallow: /private/\r\n"
    b"SITEMAP : https://Example.COM/sitemap_index.xml # main\r\n"
    b"Site-map:/news.xml\r\n"
    b"sitemap: https://example.com/sitemap_index.xml\r\n"
)


def test_a_robots_txt_lists_its_sitemaps_with_no_follow(tmp_path: Path) -> None:
    p = tmp_path / "robots.txt"
    p.write_bytes(ROBOTS)
    code, out, err = cli(
        ["read", str(p), "--published-at", "https://example.com/robots.txt", "--no-follow"]
    )
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0, err
    assert [(r["kind"], r["loc"]) for r in rows] == [
        ("sitemap", "https://example.com/sitemap_index.xml"),
        ("sitemap", "https://example.com/news.xml"),
    ]
    assert "RB003 warning" in err and "RB008 warning" in err


@pytest.mark.parametrize("name", ["robots.txt", "anything.txt"])
def test_robots_is_known_by_name_or_content(tmp_path: Path, name: str) -> None:
    p = tmp_path / name
    p.write_bytes(b"User-agent: *\nDisallow:\nSitemap: https://example.com/s.xml\n")
    code, out, _ = cli(["read", str(p), "--no-follow", "--format", "urls"])
    assert (code, out) == (0, "https://example.com/s.xml\n")


def test_a_file_published_as_robots_txt_is_read_as_one(tmp_path: Path) -> None:
    p = tmp_path / "copy"
    p.write_bytes(b"# nothing but\nSitemap: /s.xml\n")
    code, out, _ = cli(
        [
            "read",
            str(p),
            "--published-at",
            "https://example.com/robots.txt",
            "--no-follow",
            "--format",
            "urls",
        ]
    )
    assert (code, out) == (0, "https://example.com/s.xml\n")


def test_a_robots_txt_without_sitemap_is_a_finding_and_exit_3(tmp_path: Path) -> None:
    p = tmp_path / "robots.txt"
    p.write_bytes(b"User-agent: *\nDisallow: /\n")
    code, out, err = cli(["read", str(p)])
    assert (code, out) == (3, "")
    assert "SM012" in err and "no Sitemap: line" in err and str(p) in err


def test_a_robots_txt_is_followed_into_the_files_beside_it(tmp_path: Path) -> None:
    (tmp_path / "robots.txt").write_text("Sitemap: https://example.com/sitemap_index.xml\n")
    (tmp_path / "sitemap_index.xml").write_text(
        INDEX.format("https://example.com/maps/a.xml", "https://example.com/b.xml")
    )
    (tmp_path / "maps").mkdir()
    (tmp_path / "maps" / "a.xml").write_text(URLSET.format("https://example.com/a1"))
    (tmp_path / "b.xml").write_text(URLSET.format("https://example.com/b1"))
    code, out, err = cli(
        [
            "read",
            str(tmp_path / "robots.txt"),
            "--published-at",
            "https://example.com/robots.txt",
            "--format",
            "urls",
        ]
    )
    assert (code, out) == (0, "https://example.com/a1\nhttps://example.com/b1\n"), err


# -- a local index is followed (issue #11 §7) ------------------------------------------

INDEX = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    "<sitemap><loc>{}</loc></sitemap>\n<sitemap><loc>{}</loc></sitemap>\n</sitemapindex>\n"
)
URLSET = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    "<url><loc>{}</loc></url></urlset>\n"
)


def test_a_local_index_reads_children_beside_it_else_fetches_them(tmp_path: Path) -> None:
    with Site() as site:
        site["/remote.xml"] = URLSET.format("https://example.com/r1").encode()
        pub = tmp_path / "public"
        pub.mkdir()
        (pub / "sitemap_index.xml").write_text(
            INDEX.format("https://example.com/local.xml", site.url("/remote.xml"))
        )
        (pub / "local.xml").write_text(URLSET.format("https://example.com/l1"))
        args = ["read", str(pub / "sitemap_index.xml"), "--format", "urls", "--published-at"]
        args.append("https://example.com/sitemap_index.xml")
        code, out, err = cli(args)
        assert (code, out) == (0, "https://example.com/l1\nhttps://example.com/r1\n"), err
        assert site.count("/remote.xml") == 1
        # --offline reads the local child only and says what it did not fetch
        code, out, err = cli([*args, "--offline"])
        assert (code, out) == (1, "https://example.com/l1\n")
        assert "not fetched (--offline)" in err and site.url("/remote.xml") in err
        assert site.count("/remote.xml") == 1


def test_a_local_index_listing_itself_is_flagged_not_fetched(tmp_path: Path) -> None:
    with Site() as site:
        index = tmp_path / "sitemap_index.xml"
        me = site.url("/sitemap_index.xml")
        index.write_text(INDEX.format(me, site.url("/a.xml")))
        (tmp_path / "a.xml").write_text(URLSET.format("https://example.com/a1"))
        code, out, err = cli(["read", str(index), "--published-at", me, "--format", "urls"])
        assert site.requests == 0  # neither itself nor anything else was fetched
    assert (code, out) == (1, "https://example.com/a1\n")
    assert "SM506" in err and "itself" in err


def test_a_cycle_of_local_indexes_is_exit_1_not_3(tmp_path: Path) -> None:
    base = "https://example.com/"
    for name, child in (("a.xml", "b.xml"), ("b.xml", "c.xml"), ("c.xml", "a.xml")):
        (tmp_path / name).write_text(INDEX.format(base + child, base + "leaf.xml"))
    (tmp_path / "leaf.xml").write_text(URLSET.format(base + "p"))
    code, out, err = cli(
        ["read", str(tmp_path / "a.xml"), "--published-at", base + "a.xml", "--format", "urls"]
    )
    assert (code, out) == (1, base + "p\n")
    assert err.count("SM506") == 1


def test_a_child_missing_locally_without_a_published_url_is_fetched_by_name(
    tmp_path: Path,
) -> None:
    # without --published-at the index's URL is unknown: the file of the child's name
    (tmp_path / "index.xml").write_text(
        INDEX.format("https://example.com/x/one.xml", "https://example.com/y/two.xml")
    )
    (tmp_path / "one.xml").write_text(URLSET.format("https://example.com/1"))
    (tmp_path / "two.xml").write_text(URLSET.format("https://example.com/2"))
    code, out, _ = cli(["read", str(tmp_path / "index.xml"), "--format", "urls"])
    assert (code, out) == (0, "https://example.com/1\nhttps://example.com/2\n")


# -- exit codes tell the truth (issue #11 §5) ------------------------------------------


def test_nothing_listening_is_a_finding_and_exit_3() -> None:
    code, out, err = cli(["read", "http://127.0.0.1:9/"])
    assert (code, out) == (3, "")
    assert "SM012" in err and "No sitemap found" in err and "robots.txt" in err


def test_a_site_with_nothing_says_what_it_tried(tmp_path: Path) -> None:
    with Site() as site:
        site.static(tmp_path)
        code, out, err = cli(["read", site.url("/")])
    assert (code, out) == (3, "")
    assert f"{site.url('/robots.txt')} HTTP 404" in err
    for path in ("/sitemap.xml", "/sitemap_index.xml", "/wp-sitemap.xml"):
        assert f"{site.url(path)} HTTP 404" in err


def test_a_cycle_over_http_is_exit_1(tmp_path: Path) -> None:
    with Site() as site:
        u = site.url
        site["/robots.txt"] = f"Sitemap: {u('/a.xml')}\n".encode()
        site["/a.xml"] = INDEX.format(u("/b.xml"), u("/leaf.xml")).encode()
        site["/b.xml"] = INDEX.format(u("/c.xml"), u("/a.xml")).encode()
        site["/c.xml"] = INDEX.format(u("/a.xml"), u("/b.xml")).encode()
        site["/leaf.xml"] = URLSET.format("https://example.com/p").encode()
        code, out, err = cli(["read", u("/"), "--format", "urls"])
        assert all(site.count(p) == 1 for p in ("/a.xml", "/b.xml", "/c.xml", "/leaf.xml"))
    assert (code, out) == (1, "https://example.com/p\n")
    assert "SM506" in err


def test_a_robots_url_with_no_follow_lists_and_fetches_nothing_else() -> None:
    with Site() as site:
        site["/robots.txt"] = f"Sitemap: {site.url('/s.xml')}\nSitemap: /t.xml\n".encode()
        code, out, _ = cli(["read", site.url("/robots.txt"), "--no-follow", "--format", "urls"])
        assert site.paths() == set() and site.count("/robots.txt") == 1
    assert (code, out) == (0, f"{site.url('/s.xml')}\n{site.url('/t.xml')}\n")


# -- every format of read that write accepts round-trips (issue #11 §6) ---------------

RICH = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
    b' xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'
    b' xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">\n'
    b"<url><loc>https://example.com/a</loc><lastmod>2024-05-01</lastmod>"
    b"<priority>0.5</priority><news:news><news:publication><news:name>N</news:name>"
    b"<news:language>en</news:language></news:publication>"
    b"<news:publication_date>2024-05-01</news:publication_date><news:title>T</news:title>"
    b"</news:news><video:video><video:thumbnail_loc>https://example.com/t.jpg"
    b"</video:thumbnail_loc><video:title>V</video:title><video:description>D"
    b"</video:description><video:content_loc>https://example.com/v.mp4</video:content_loc>"
    b"<video:duration>30</video:duration><video:family_friendly>no</video:family_friendly>"
    b"<video:tag>x</video:tag><video:tag>y</video:tag>"
    b'<video:restriction relationship="deny">US GB</video:restriction></video:video></url>\n'
    b"<url><loc>https://example.com/b</loc></url>\n"
    b"</urlset>\n"
)


def _records(path: Path) -> list[dict[str, object]]:
    _, out, _ = cli_bytes(["read", str(path)])
    rows = [json.loads(line) for line in out.splitlines()]
    for r in rows:
        del r["source"]
    return rows


@pytest.mark.parametrize(("fmt", "name"), [("jsonl", "in.jsonl"), ("csv", "in.csv")])
def test_read_output_written_again_gives_the_same_records(
    tmp_path: Path, fmt: str, name: str
) -> None:
    src = tmp_path / "rich.xml"
    src.write_bytes(RICH)
    code, out, _ = cli_bytes(["read", str(src), "--format", fmt])
    assert code == 0
    (tmp_path / name).write_bytes(out)
    code, _, err = cli(
        [
            "write",
            str(tmp_path / name),
            "-o",
            str(tmp_path / fmt),
            "--base-url",
            "https://example.com/",
        ]
    )
    assert code == 0, err
    again = _records(tmp_path / fmt / "sitemap.xml")
    assert again == _records(src)
    assert again[0]["news"] and again[0]["videos"]  # nothing lost on the way


def test_csv_keeps_news_and_video_fields_and_write_skips_index_rows(tmp_path: Path) -> None:
    src = tmp_path / "rich.xml"
    src.write_bytes(RICH)
    _, out, _ = cli_bytes(["read", str(src), "--format", "csv"])
    row = next(csv.DictReader(io.StringIO(out.decode())))
    assert (row["news_language"], row["video_title"], row["video_tags"]) == ("en", "V", "x,y")
    assert (row["video_family_friendly"], row["video_restriction_deny"]) == ("no", "US GB")
    index = tmp_path / "index.xml"
    index.write_text(INDEX.format("https://example.com/s1.xml", "https://example.com/s2.xml"))
    code, listing, _ = cli_bytes(["read", str(index), "--format", "csv", "--no-follow"])
    rows = list(csv.DictReader(io.StringIO(listing.decode())))
    assert code == 0 and [r["kind"] for r in rows] == ["sitemap", "sitemap"]
    # index entries among the rows are not pages: write skips them
    (tmp_path / "both.csv").write_bytes(out + listing.split(b"\n", 1)[1])
    code, _, err = cli(
        [
            "write",
            str(tmp_path / "both.csv"),
            "-o",
            str(tmp_path / "w"),
            "--base-url",
            "https://example.com/",
        ]
    )
    assert code == 0, err
    assert [r["loc"] for r in _records(tmp_path / "w" / "sitemap.xml")] == [
        "https://example.com/a",
        "https://example.com/b",
    ]


def test_several_targets_and_a_folder_in_the_order_given(tmp_path: Path) -> None:
    (tmp_path / "one.txt").write_text("https://example.com/1\n")
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "sitemap.xml").write_text(URLSET.format("https://example.com/f"))
    (tmp_path / "two.xml").write_text(URLSET.format("/2"))
    code, out, err = cli(
        [
            "read",
            str(tmp_path / "one.txt"),
            str(folder),
            str(tmp_path / "two.xml"),
            "--format",
            "urls",
            "--published-at",
            "https://example.com/one.txt",
            "--published-at",
            "https://example.com/",
            "--published-at",
            "https://example.com/two.xml",
        ]
    )
    assert (code, out) == (
        0,
        "https://example.com/1\nhttps://example.com/f\nhttps://example.com/2\n",
    ), err
    code, _, err = cli(
        ["read", str(tmp_path / "one.txt"), str(folder), "--published-at", "https://example.com/"]
    )
    assert code == 2 and "one per local target" in err


def test_a_document_reached_by_two_targets_is_read_once(tmp_path: Path) -> None:
    (tmp_path / "index.xml").write_text(
        INDEX.format("https://example.com/a.xml", "https://example.com/b.xml")
    )
    for name in "ab":
        (tmp_path / f"{name}.xml").write_text(URLSET.format(f"https://example.com/{name}"))
    code, out, err = cli(
        ["read", str(tmp_path / "index.xml"), str(tmp_path / "a.xml"), "--format", "urls"]
    )
    assert (code, out) == (0, "https://example.com/a\nhttps://example.com/b\n"), err
