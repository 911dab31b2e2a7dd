"""A built site folder as input: URLs, every reason a file is left out, lastmod from the
page, git or mtime, and output that validates and is the same on a second run."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sitemapkit as sk
from sitemapkit.core.outcome import PageOutcome
from sitemapkit.io.sources import folder as folder_source
from sitemapkit.io.sources import write_inputs
from sitemapkit.io.sources.folder import FolderOptions, FolderSummary, write_folder
from sitemapkit.lint.xsd import xsd_errors

from ..conftest import NS, cli, parse

BASE = "https://example.com/"
OLD = 1_600_000_000  # 2020-09-13T12:26:40Z, an mtime no build has
OLD_TEXT = "2020-09-13T12:26:40+00:00"


def build(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        os.utime(path, (OLD, OLD))
    return root


def run(
    root: Path, out: Path | None = None, **options: object
) -> tuple[FolderSummary, dict[str, str | None], bytes]:
    """Write the folder; return the summary, each loc's lastmod, and the sitemap's bytes."""
    out = out or root.parent / "out"
    opts = FolderOptions(output=out, **options)  # type: ignore[arg-type]
    with sk.SitemapWriter(out, base_url=BASE) as w:
        summary, _ = write_folder(w, str(root), opts)
    data = (out / "sitemap.xml").read_bytes()
    doc = parse(data)
    listed = {
        u.findtext("s:loc", namespaces=NS): u.findtext("s:lastmod", namespaces=NS)
        for u in doc.iterfind("s:url", NS)
    }
    return summary, listed, data


def page(body: str = "", head: str = "") -> str:
    return f"<!DOCTYPE html><html><head><title>t</title>{head}</head><body>{body}</body></html>"


# -- URLs -----------------------------------------------------------------------------------


def test_index_pages_are_their_folders_url_and_paths_are_percent_encoded(tmp_path: Path) -> None:
    site = build(
        tmp_path / "site",
        {
            "index.html": page(),
            "blog/index.htm": page(),
            "blog/first-post.html": page(),
            "café/menu.html": page(),
            "100%.html": page(),
            "a b?.html": page(),
            "style.css": "body{}",
            "Index.html": page(),  # not a folder index: servers are case-sensitive
        },
    )
    _, listed, _ = run(site)
    assert sorted(listed) == [
        "https://example.com/",
        "https://example.com/100%25.html",
        "https://example.com/Index.html",
        "https://example.com/a%20b%3F.html",
        "https://example.com/blog/",
        "https://example.com/blog/first-post.html",
        "https://example.com/caf%C3%A9/menu.html",
    ]


def test_clean_urls_drop_the_extension_but_keep_folder_urls(tmp_path: Path) -> None:
    site = build(tmp_path / "site", {"about.html": page(), "docs/index.html": page()})
    _, listed, _ = run(site, clean_urls=True)
    assert sorted(listed) == ["https://example.com/about", "https://example.com/docs/"]


def test_a_page_that_names_its_own_clean_url_as_canonical_is_listed_there(tmp_path: Path) -> None:
    site = build(
        tmp_path / "site",
        {
            "about.html": page(head='<link rel="canonical" href="https://example.com/about">'),
            "docs/index.html": page(head='<link rel="canonical" href="/docs/index.html">'),
        },
    )
    summary, listed, _ = run(site)
    assert sorted(listed) == ["https://example.com/about", "https://example.com/docs/index.html"]
    assert not summary.left_out


def test_include_adds_documents_and_exclude_removes_files_and_folders(tmp_path: Path) -> None:
    site = build(
        tmp_path / "site",
        {
            "guide.pdf": "%PDF-1.4",
            "img/a.png": "png",
            "drafts/one.html": page(),
            "tmp/two.html": page(),
            "keep.html": page(),
            "skip-me.html": page(),
        },
    )
    summary, listed, _ = run(site, include=("*.pdf",), exclude=("drafts/*", "tmp", "skip-*.html"))
    assert sorted(listed) == ["https://example.com/guide.pdf", "https://example.com/keep.html"]
    assert listed["https://example.com/guide.pdf"] == OLD_TEXT
    assert summary.left_out["excluded by --exclude"] == 3


# -- what is left out -----------------------------------------------------------------------


def test_every_reason_to_leave_a_file_out_is_counted(tmp_path: Path) -> None:
    site = build(
        tmp_path / "site",
        {
            "index.html": page(),
            "a.html": page(),
            "b.html": page(head='<link rel="canonical" href="/a.html">'),
            "c.html": page(head='<link rel="canonical" href="https://elsewhere.example.org/c">'),
            "d.html": page(head='<meta name="robots" content="noindex, follow">'),
            "e.html": page(head='<meta name="googlebot" content="none">'),
            "404.html": page(),
            "500.htm": page(),
            "404/index.html": page(),
            "docs/404.html": page(),
            "1404.html": page(),
            "404-guide.html": page(),
            "private/p.html": page(),
            "g/for-others.html": page(),
            ".well-known/x.html": page(),
            ".hidden.html": page(),
            ".git/HEAD": "ref",
            "robots.txt": "User-agent: googlebot\nDisallow: /g/\n\n"
            "User-agent: *\nDisallow: /private/\n",
        },
    )
    summary, listed, _ = run(site)
    assert sorted(listed) == [
        "https://example.com/",
        "https://example.com/1404.html",
        "https://example.com/404-guide.html",
        "https://example.com/a.html",  # b.html's canonical target, a page of the folder
        "https://example.com/g/for-others.html",  # disallowed for googlebot only
    ]
    assert dict(summary.left_out) == {
        "noindex": 2,
        "canonical elsewhere": 2,
        "error page": 4,
        "disallowed by robots.txt": 1,
        "hidden": 3,
    }
    assert summary.examples["canonical elsewhere"] == "b.html → https://example.com/a.html"
    assert summary.listed == 5
    note = summary.note("site")
    assert note.startswith("site: 5 pages listed; left out: 2 noindex (e.g. d.html), ")
    assert "4 error pages (e.g. 404.html)" in note
    assert "1 disallowed by robots.txt (e.g. private/p.html)" in note


def test_robots_txt_patterns_and_pdf_documents(tmp_path: Path) -> None:
    site = build(
        tmp_path / "site",
        {
            "robots.txt": "\ufeffUser-agent: *\nDisallow: /*.pdf$\nDisallow: /shop\n"
            "Allow: /shop/open.html\n",
            "a.pdf": "%PDF",
            "shop/closed.html": page(),
            "shop/open.html": page(),
            "shopping.html": page(),
        },
    )
    summary, listed, _ = run(site, include=("*.pdf",))
    assert sorted(listed) == ["https://example.com/shop/open.html"]
    assert summary.left_out["disallowed by robots.txt"] == 3


def test_robots_txt_applies_to_the_file_url_with_clean_urls_too(tmp_path: Path) -> None:
    site = build(
        tmp_path / "site",
        {"robots.txt": "User-agent: *\nDisallow: /secret.html\n", "secret.html": page()},
    )
    summary, listed, _ = run(site, clean_urls=True)
    assert listed == {} and summary.left_out["disallowed by robots.txt"] == 1


# -- images and hreflang --------------------------------------------------------------------


def test_images_and_a_hreflang_cluster_reach_the_sitemap(tmp_path: Path) -> None:
    cluster = (
        '<link rel="alternate" hreflang="en" href="/en/">'
        '<link rel="alternate" hreflang="de" href="/de/">'
        '<link rel="alternate" hreflang="x-default" href="/en/">'
    )
    site = build(
        tmp_path / "site",
        {
            "en/index.html": page('<img src="hero.jpg"><img src="data:,x">', cluster),
            "de/index.html": page(
                '<img src="https://cdn.example.net/hero-de.jpg" width="1" height="1">'
                '<img srcset="a.jpg 300w, b.jpg 900w">',
                cluster + '<link rel="alternate" hreflang="not a code" href="/x/">',
            ),
        },
    )
    summary, _, data = run(site)
    doc = parse(data)
    by_loc = {u.findtext("s:loc", namespaces=NS): u for u in doc.iterfind("s:url", NS)}
    en, de = by_loc["https://example.com/en/"], by_loc["https://example.com/de/"]
    assert [i.text for i in en.iterfind("image:image/image:loc", NS)] == [
        "https://example.com/en/hero.jpg"
    ]
    assert [i.text for i in de.iterfind("image:image/image:loc", NS)] == [
        "https://example.com/de/b.jpg"
    ]
    for u in (en, de):
        links = [(a.get("hreflang"), a.get("href")) for a in u.iterfind("xhtml:link", NS)]
        assert links == [
            ("en", "https://example.com/en/"),
            ("de", "https://example.com/de/"),
            ("x-default", "https://example.com/en/"),
        ]
    assert summary.bad_hreflang == 1
    assert "1 hreflang values that are not language codes skipped" in summary.note("s")


# -- lastmod --------------------------------------------------------------------------------


def _git(root: Path, *args: str, date: str | None = None) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    if date:
        env |= {"GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date}
    subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)


def _git_site(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    site = build(
        repo / "public",
        {
            "dated.html": page(head='<meta property="og:updated_time" content="2023-01-02">'),
            "old.html": page(),
            "new.html": page(),
        },
    )
    (repo / "outside.html").write_text(page())
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one", date="2024-01-01T10:00:00+02:00")
    (site / "new.html").write_text(page("<p>changed</p>"))
    os.utime(site / "new.html", (OLD, OLD))
    _git(repo, "commit", "-qam", "two", date="2024-02-01T09:30:00+00:00")
    build(site, {"untracked.html": page()})
    return site


def test_lastmod_is_the_page_date_then_the_last_commit_then_the_mtime(tmp_path: Path) -> None:
    _, listed, _ = run(_git_site(tmp_path))
    assert listed == {
        "https://example.com/dated.html": "2023-01-02",
        "https://example.com/old.html": "2024-01-01T10:00:00+02:00",
        "https://example.com/new.html": "2024-02-01T09:30:00+00:00",
        "https://example.com/untracked.html": OLD_TEXT,
    }


def test_lastmod_from_chooses_and_orders_the_sources(tmp_path: Path) -> None:
    site = _git_site(tmp_path)
    _, listed, _ = run(site, lastmod_from=("mtime", "git"))
    assert set(listed.values()) == {OLD_TEXT}
    _, listed, _ = run(site, lastmod_from=("git",))
    assert listed["https://example.com/dated.html"] == "2024-01-01T10:00:00+02:00"
    assert listed["https://example.com/untracked.html"] is None
    _, listed, _ = run(site, lastmod_from=())
    assert set(listed.values()) == {None}


def test_one_git_log_for_the_whole_tree(tmp_path: Path) -> None:
    site = _git_site(tmp_path)
    # a real git, behind a script that notes each command it is given
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    real = subprocess.run(["which", "git"], capture_output=True, text=True, check=True).stdout
    script = bin_dir / "git"
    script.write_text(f'#!/bin/sh\necho "$3" >> {calls}\nexec {real.strip()} "$@"\n')
    script.chmod(0o755)
    path = os.environ["PATH"]
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{path}"
    try:
        run(site)
    finally:
        os.environ["PATH"] = path
    assert calls.read_text().split() == ["rev-parse", "log"]


def test_without_git_the_mtime_and_a_folder_outside_any_repository(tmp_path: Path) -> None:
    site = build(tmp_path / "site", {"a.html": page()})
    _, listed, _ = run(site)
    assert listed == {"https://example.com/a.html": OLD_TEXT}


def test_an_unknown_lastmod_source_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown lastmod source 'build'"):
        FolderOptions(lastmod_from=("page", "build"))


# -- the run's own output and a second run --------------------------------------------------


def test_writing_into_the_folder_itself_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    site = build(
        tmp_path / "site",
        {"index.html": page(), "feed.xml": "<rss/>", **{f"p{i}.html": page() for i in range(7)}},
    )

    def once() -> tuple[list[str], dict[str, bytes]]:
        with sk.SitemapWriter(site, base_url=BASE, max_urls=3) as w:
            notes = write_inputs(
                w, [str(site)], folder=FolderOptions(include=("*.xml",), output=site)
            )
        return notes, {p.name: p.read_bytes() for p in site.glob("sitemap*")}

    first_notes, first = once()
    second_notes, second = once()
    assert first == second
    assert sorted(first) == [f"sitemap-{i}.xml" for i in (1, 2, 3)] + ["sitemap.xml"]
    assert first_notes == [f"{site}: 9 pages listed"]
    assert second_notes == [
        f"{site}: 9 pages listed; left out: 4 this run's output (e.g. sitemap-1.xml)"
    ]


def test_the_output_validates_clean_and_against_the_xsd(tmp_path: Path) -> None:
    cluster = "".join(
        f'<link rel="alternate" hreflang="{lang}" href="/{lang}/">' for lang in ("en", "fr")
    )
    site = build(
        tmp_path / "site",
        {
            "en/index.html": page('<img src="/a.png">', cluster),
            "fr/index.html": page('<img src="/b.png">', cluster),
            "café/index.html": page(
                head='<meta property="article:modified_time" '
                'content="2024-05-01T10:00:00.123+02:00">'
            ),
        },
    )
    out = tmp_path / "out"
    _, listed, data = run(site, out)
    # the page's date as it said it: the fraction kept (issue #11 §3)
    assert listed["https://example.com/caf%C3%A9/"] == "2024-05-01T10:00:00.123+02:00"
    assert xsd_errors(data) == []
    report = sk.validate(out / "sitemap.xml", published_at=BASE + "sitemap.xml", follow=False)
    assert report.findings == [] and report.entries == 3


# -- processes ------------------------------------------------------------------------------


def _many(root: Path, n: int) -> Path:
    files = {
        f"s{i % 7}/p{i}.html": page(
            f'<img src="/i/{i}.png">',
            f'<meta property="og:updated_time" content="2024-01-{1 + i % 28:02d}">',
        )
        for i in range(n)
    }
    files |= {f"n{i}.html": page(head='<meta name="robots" content="noindex">') for i in range(5)}
    return build(root, files)


def test_pages_read_in_worker_processes_give_the_same_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _many(tmp_path / "site", 300)
    one = run(site, tmp_path / "one", workers=1)
    monkeypatch.setattr(folder_source, "PARALLEL_PAGES", 20)
    two = run(site, tmp_path / "two", workers=2)
    assert one[2] == two[2] and one[0] == two[0]
    # while another thread runs, forking is not safe: fresh worker processes do it
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        fresh = run(site, tmp_path / "fresh", workers=2)
    finally:
        stop.set()
        thread.join()
    assert fresh[2] == one[2]
    assert one[0].listed == 300 and one[0].left_out["noindex"] == 5


def test_an_unreadable_page_is_an_error_naming_it_in_a_worker_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _many(tmp_path / "site", 50)
    (site / "s3" / "gone.html").symlink_to(site / "nowhere.html")
    for workers, limit in ((1, 2000), (2, 10)):
        monkeypatch.setattr(folder_source, "PARALLEL_PAGES", limit)
        out = tmp_path / f"out{workers}"
        with pytest.raises(sk.InputError) as info:
            run(site, out, workers=workers)
        assert info.value.where == str(site / "s3" / "gone.html")
        assert str(info.value).startswith("cannot read the page: No such file or directory")
        assert not out.exists()


# -- the command ----------------------------------------------------------------------------


def test_write_takes_a_folder_and_prints_the_summary(tmp_path: Path) -> None:
    site = build(
        tmp_path / "site",
        {"index.html": page(), "about.html": page(), "404.html": page(), "x/a.html": page()},
    )
    code, out, err = cli(
        [
            "write",
            str(site),
            "-o",
            str(site),
            "--base-url",
            BASE,
            "--clean-urls",
            "--exclude",
            "x",
            "--lastmod-from",
            "none",
        ]
    )
    assert code == 0, err
    assert "2 URLs in 1 files" in out
    assert (
        f"sitemapkit: note: {site}: 2 pages listed; left out: 1 error page (e.g. 404.html), "
        "1 excluded by --exclude (e.g. x/)" in err
    )
    data = (site / "sitemap.xml").read_bytes()
    assert b"<loc>https://example.com/about</loc>" in data and b"lastmod" not in data


def test_a_bad_lastmod_from_is_a_usage_error(tmp_path: Path) -> None:
    site = build(tmp_path / "site", {"index.html": page()})
    for value in ("page,build", "", "none,git"):
        code, _, err = cli(
            [
                "write",
                str(site),
                "-o",
                str(tmp_path / "o"),
                "--base-url",
                BASE,
                "--lastmod-from",
                value,
            ]
        )
        assert code == 2, value
        assert "--lastmod-from" in err and "give page, git and mtime" in err


_NAME = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0"), min_size=1, max_size=12
).filter(lambda n: not n.startswith(".") and n not in ("index",) and not n[:3].isdigit())


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(names=st.sets(_NAME, min_size=1, max_size=4))
def test_every_file_name_maps_to_a_url_that_decodes_back_to_it(
    tmp_path_factory: pytest.TempPathFactory, names: set[str]
) -> None:
    root = tmp_path_factory.mktemp("names")
    site = build(root / "site", {f"d/{n}.html": page() for n in names})
    _, listed, data = run(site, root / "out")
    assert {unquote(loc.removeprefix(BASE + "d/")) for loc in listed} == {
        f"{n}.html" for n in names
    }
    assert xsd_errors(data) == []


def test_a_page_whose_url_a_sitemap_cannot_carry_is_an_error_naming_it(tmp_path: Path) -> None:
    deep = "/".join(["d" * 200] * 11)
    site = build(tmp_path / "site", {"ok.html": page(), f"{deep}/long.html": page()})
    with pytest.raises(sk.InputError) as info:
        run(site)
    assert info.value.where == str(site / deep / "long.html")
    assert "sitemaps.org requires fewer than 2,048" in info.value.message
    assert not (tmp_path / "out").exists()


# -- pages as outcomes, with links (for an audit) --------------------------------------------


def _outcomes(root: Path, **options: object) -> dict[str, PageOutcome]:
    opts = FolderOptions(**options)  # type: ignore[arg-type]
    pages = folder_source.FolderPages(root, BASE, opts)
    return {o.url: o for o in pages.outcomes()}


def test_folder_pages_give_every_page_and_every_reason_with_links(tmp_path: Path) -> None:
    site = build(
        tmp_path / "site",
        {
            "index.html": page(
                '<a href="/a">a</a> <a href="docs/">docs</a> <a href="/x.pdf">x</a>'
            ),
            "a.html": page(head='<meta property="article:modified_time" content="2024-05-01">'),
            "b.html": page('<a href="/">home</a>', '<link rel="canonical" href="/a.html">'),
            "d.html": page('<a href="/a.html">a</a>', '<meta name="robots" content="noindex">'),
            "docs/index.html": page('<a href="../missing.html">gone</a>'),
            "404.html": page(),
            "private/p.html": page(),
            ".hidden.html": page(),
            "x.pdf": "%PDF-1.4",
            "robots.txt": "User-agent: *\nDisallow: /private/\n",
        },
    )
    got = _outcomes(site)
    assert sorted(got) == [
        BASE + p for p in ("", "404.html", "a.html", "b.html", "d.html", "docs/", "private/p.html")
    ]
    home = got[BASE]
    # links land on the page a static server answers: /a is a.html, /x.pdf no page
    assert home.listed and home.links == (BASE + "a.html", BASE + "docs/", BASE + "x.pdf")
    assert got[BASE + "a.html"].modified == "2024-05-01" and got[BASE + "a.html"].links == ()
    b, d = got[BASE + "b.html"], got[BASE + "d.html"]
    assert (b.reason, b.detail, b.links) == ("canonical elsewhere", BASE + "a.html", (BASE,))
    assert (d.reason, d.links) == ("noindex", (BASE + "a.html",))  # a noindex page's links count
    assert got[BASE + "docs/"].links == (BASE + "missing.html",)
    assert (got[BASE + "404.html"].reason, got[BASE + "404.html"].detail) == (
        "error page",
        "404.html",
    )
    assert got[BASE + "private/p.html"].reason == "disallowed by robots.txt"
    assert all(o.status is None and o.depth is None for o in got.values())


def test_folder_pages_judge_a_url_as_a_static_server_answers_it(tmp_path: Path) -> None:
    site = build(
        tmp_path / "site",
        {
            "index.html": page(),
            "about.html": page(),
            "blog/index.html": page(head='<meta name="robots" content="noindex">'),
            ".drafts/x.html": page(),
            "files/a.pdf": "%PDF",
            "404.html": page(),
        },
    )
    pages = folder_source.FolderPages(site, BASE)
    about = pages.judge(BASE + "about")
    assert about is not None and about.url == BASE + "about" and about.loc == BASE + "about.html"
    blog = pages.judge(BASE + "blog")
    assert blog is not None and blog.reason == "noindex"
    hidden = pages.judge(BASE + ".drafts/x.html")  # left out of a sitemap, but served
    assert hidden is not None and hidden.listed
    pdf = pages.judge(BASE + "files/a.pdf?v=2")
    assert pdf is not None and pdf.listed
    err = pages.judge(BASE + "404.html")
    assert err is not None and err.reason == "error page"
    gone = pages.judge(BASE + "nothing/")
    assert gone is not None and (gone.reason, gone.status) == ("error status", 404)
    assert pages.judge("https://elsewhere.example/about") is None
    # dot-segments are resolved inside the site (/etc/passwd: no such file of the folder),
    # and an encoded "../" never leaves the folder
    dots = pages.judge(BASE + "a/%2E%2E/%2E%2E/etc/passwd")
    assert dots is not None and dots.status == 404
    assert pages.judge(BASE + "..%2F..%2Fetc%2Fpasswd") is None


def test_folder_pages_read_in_workers_give_the_same_outcomes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _many(tmp_path / "site", 60)
    links = "".join(f'<a href="/s{i % 7}/p{i}.html">p</a>' for i in range(60))
    (site / "index.html").write_text(page(links))
    one = _outcomes(site, workers=1)
    monkeypatch.setattr(folder_source, "PARALLEL_PAGES", 10)
    two = _outcomes(site, workers=2)
    assert one == two and len(one[BASE].links) == 60
