"""sitemapkit crawl: a served site to sitemaps, to JSONL for `write -`, and the same output
as `write FOLDER` from the folder it serves."""

from __future__ import annotations

import os
from pathlib import Path

from lxml import etree

from ..conftest import NS, cli, locs, parse
from ..site import Reply, Site

STAMP = 1_714_557_600  # 2024-05-01T10:00:00Z


def build(root: Path) -> Path:
    """A small built site whose links reach every page a folder lists."""
    pages = {
        "index.html": '<a href="/about.html">about</a><a href="/blog/">blog</a>'
        '<a href="/caf%C3%A9/">café</a><a href="/hidden.html">h</a><a href="/copy.html">c</a>'
        '<a href="/private/x.html">p</a><img src="/logo.png">'
        '<link rel="alternate" hreflang="de" href="/de/"><link rel="alternate" '
        'hreflang="x-default" href="/">',
        "about.html": '<meta property="article:modified_time" content="2024-02-03">'
        '<a href="/">home</a>',
        "blog/index.html": '<a href="/blog/post.html">post</a><a href="/de/">de</a>',
        "blog/post.html": '<img src="https://cdn.example.net/p.jpg" width="800">',
        "de/index.html": '<link rel="alternate" hreflang="de" href="/de/">',
        "café/index.html": "<p>café</p>",
        "hidden.html": '<meta name="robots" content="noindex"><a href="/blog/">b</a>',
        "copy.html": '<link rel="canonical" href="/about.html">',
        "private/x.html": "<p>secret</p>",
    }
    for rel, body in pages.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"<!doctype html><html><head></head><body>{body}</body></html>")
        os.utime(path, (STAMP, STAMP))
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    return root


def entries(out: Path) -> list[bytes]:
    return sorted(etree.tostring(u) for u in parse(out / "sitemap.xml").iterfind("s:url", NS))


def test_crawling_a_served_folder_writes_what_write_folder_writes(
    site: Site, tmp_path: Path
) -> None:
    root = build(tmp_path / "site")
    site.static(root)
    base = site.url("/")
    code, _, err = cli(["write", str(root), "-o", str(tmp_path / "a"), "--base-url", base])
    assert code == 0, err
    code, _, err = cli(["crawl", base, "-o", str(tmp_path / "b")])
    assert code == 0, err
    # the same entries, byte for byte; a folder lists them in its walk's order, a crawl
    # in the order links reach them
    assert entries(tmp_path / "b") == entries(tmp_path / "a")
    assert sorted(u.removeprefix(base) for u in locs(tmp_path / "b" / "sitemap.xml")) == [
        "", "about.html", "blog/", "blog/post.html", "caf%C3%A9/", "de/",
    ]  # fmt: skip
    tree = parse(tmp_path / "b" / "sitemap.xml")
    lastmods = {
        u.findtext("s:loc", namespaces=NS): u.findtext("s:lastmod", namespaces=NS)
        for u in tree.iterfind("s:url", NS)
    }
    assert lastmods[base + "about.html"] == "2024-02-03"  # the page's own date
    assert lastmods[base + "blog/"] == "2024-05-01T10:00:00+00:00"  # Last-Modified
    assert "1 noindex (e.g." in err and "1 canonical elsewhere (e.g." in err
    assert "1 disallowed by robots.txt" in err and "7 pages listed" not in err
    assert "/private/x.html" not in site.paths()
    assert all(n == 1 for n in site.hits.values())


def test_jsonl_piped_into_write_gives_the_same_sitemap(site: Site, tmp_path: Path) -> None:
    site.static(build(tmp_path / "site"))
    base = site.url("/")
    code, records, err = cli(["crawl", base, "--format", "jsonl"])
    assert code == 0, err
    assert records.count("\n") == 6 and '"kind": "url"' in records
    assert "pages listed" in err
    code, _, err = cli(
        ["write", "-", "-o", str(tmp_path / "piped"), "--base-url", base], input=records
    )
    assert code == 0, err
    site.hits.clear()
    code, _, err = cli(["crawl", base, "-o", str(tmp_path / "direct")])
    assert code == 0, err
    piped = (tmp_path / "piped" / "sitemap.xml").read_bytes()
    assert piped == (tmp_path / "direct" / "sitemap.xml").read_bytes()


def test_a_calendar_trap_is_stopped_by_the_page_budget_and_summarised(
    site: Site, tmp_path: Path
) -> None:
    site["/"] = Reply(200, b'<a href="/cal?month=1">calendar</a>', {"Content-Type": "text/html"})
    for n in range(1, 40):
        site[f"/cal?month={n}"] = Reply(
            200, f'<a href="/cal?month={n + 1}">next</a>'.encode(), {"Content-Type": "text/html"}
        )
    code, _, err = cli(["crawl", site.url("/"), "-o", str(tmp_path / "o"), "--max-pages", "10"])
    assert code == 0, err
    assert len(locs(tmp_path / "o" / "sitemap.xml")) == 10
    assert "1 budget (e.g. " in err and "max_pages=10" in err
    assert site.requests == 11  # robots.txt and the ten pages


def test_max_depth_and_included_types(site: Site, tmp_path: Path) -> None:
    html = {"Content-Type": "text/html"}
    site["/"] = Reply(200, b'<a href="/one">1</a><a href="/doc.pdf">pdf</a>', html)
    site["/one"] = Reply(200, b'<a href="/two">2</a>', html)
    site["/doc.pdf"] = Reply(200, b"%PDF-1.4", {"Content-Type": "application/pdf"})
    out = tmp_path / "o"
    args = ["crawl", site.url("/"), "-o", str(out), "--max-depth", "1"]
    code, _, err = cli([*args, "--include-type", "application/pdf"])
    assert code == 0, err
    assert sorted(locs(out / "sitemap.xml")) == [site.url(p) for p in ("/", "/doc.pdf", "/one")]
    assert site.count("/two") == 0 and "deeper than max_depth=1" in err
    code, _, err = cli(args)
    assert code == 0 and "1 not HTML (e.g." in err


def test_exit_codes_and_usage(site: Site, tmp_path: Path) -> None:
    with Site() as gone:
        dead = gone.url("/")
    out = str(tmp_path / "o")
    code, _, err = cli(["crawl", dead, "-o", out, "--timeout", "1"])
    assert code == 3  # robots.txt unreachable: nothing may be crawled
    assert "cannot crawl: robots.txt failed: robots.txt could not be read (Connection" in err
    assert not (tmp_path / "o").exists()  # nothing published
    site["/robots.txt"] = Reply(404, b"")
    site["/"] = Reply(200, b"", {}, reset=True)
    code, _, err = cli(["crawl", site.url("/"), "-o", out, "--timeout", "1"])
    assert code == 3 and "the start page failed" in err
    assert not (tmp_path / "o").exists()  # nothing published
    code, _, err = cli(["crawl", "ftp://example.com/", "-o", out])
    assert code == 2 and "not an http(s) URL" in err
    code, _, err = cli(["crawl", site.url("/"), "-o", out, "--format", "jsonl"])
    assert code == 2 and "give no -o" in err
    code, _, err = cli(["crawl", site.url("/")])
    assert code == 2 and "give -o FOLDER" in err
