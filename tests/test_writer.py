"""The writer: limits, index, namespaces, hreflang, gzip, publishing, duplicates."""

from __future__ import annotations

import datetime as dt
import gzip
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sitemapkit as sk
from sitemapkit.core import limits
from sitemapkit.lint.xsd import xsd_errors

from .conftest import NS, locs, parse, read_bytes

BASE = "https://example.com/"


def write(out: Path, urls: list[sk.Url | str], **kw: object) -> sk.WriteResult:
    with sk.SitemapWriter(out, base_url=BASE, **kw) as w:  # type: ignore[arg-type]
        for u in urls:
            w.add(u)
    return w.result


def shard_files(out: Path) -> list[Path]:
    return sorted(
        (p for p in out.iterdir() if p.name != "sitemap.xml"),
        key=lambda p: int(p.name.split("-")[1].split(".")[0]),
    )


def all_locs(out: Path) -> list[str]:
    """The locs a reader finds who follows ``sitemap.xml`` (an index: its shards in order)."""
    root = parse(out / "sitemap.xml")
    if root.tag != f"{{{NS['s']}}}sitemapindex":
        return locs(out / "sitemap.xml")
    names = [e.text.rsplit("/", 1)[-1] for e in root.iterfind("s:sitemap/s:loc", NS)]
    return [loc for n in names for loc in locs(out / n)]


FULL = sk.Url(
    "https://example.com/watch/ü?a=1&b='2'",
    lastmod=dt.datetime(2024, 5, 1, 10, 0, tzinfo=dt.UTC),
    changefreq="weekly",
    priority=0.8,
    images=[sk.Image("https://cdn.example.net/i.jpg")],
    videos=[
        sk.Video(
            thumbnail_loc="https://cdn.example.net/t.jpg",
            title="A <video> & more",
            description="Déscription",
            content_loc="https://cdn.example.net/v.mp4",
            player_loc="https://example.com/player?id=1",
            duration=600,
            expiration_date="2030-01-01",
            rating=4.2,
            view_count=12,
            publication_date="2024-05-01T10:00:00+02:00",
            family_friendly=True,
            restriction=sk.VideoRestriction("allow", ("IE", "GB")),
            platform=sk.VideoPlatform("deny", ("tv",)),
            requires_subscription=False,
            uploader="Üploader",
            uploader_info="https://example.com/u",
            live=False,
            tags=("a", "b"),
        )
    ],
    news=sk.News("The Times", "en", "2024-05-01", "Title & co"),
    alternates=[
        sk.Alternate("de", "https://example.com/de"),
        sk.Alternate("x-default", "https://example.com/"),
    ],
)


def test_every_extension_validates_against_the_official_schemas(out: Path) -> None:
    write(out, [FULL, sk.Url("https://example.com/plain")])
    data = (out / "sitemap.xml").read_bytes()
    assert xsd_errors(data) == []
    root = parse(data)
    assert set(root.nsmap.values()) == {*NS.values()}  # all five, because all are used
    assert root.find("s:url/video:video/video:title", NS).text == "A <video> & more"
    assert root.find("s:url/s:loc", NS).text == "https://example.com/watch/%C3%BC?a=1&b='2'"


def test_only_used_namespaces_are_declared(out: Path) -> None:
    write(out, [sk.Url("https://example.com/a", images=["https://example.com/i.png"])])
    root = parse(out / "sitemap.xml")
    assert root.nsmap == {None: NS["s"], "image": NS["image"]}


def test_index_with_shards_validates(out: Path) -> None:
    write(out, [f"https://example.com/{i}" for i in range(5)], max_urls=2, gzip=True)
    assert xsd_errors((out / "sitemap.xml").read_bytes()) == []
    index = parse(out / "sitemap.xml")
    assert index.tag == f"{{{NS['s']}}}sitemapindex"
    children = [e.text for e in index.iterfind("s:sitemap/s:loc", NS)]
    assert children == [f"{BASE}sitemap-{i}.xml.gz" for i in (1, 2, 3)]
    for p in shard_files(out):
        assert xsd_errors(read_bytes(p)) == []


@pytest.mark.parametrize(("n", "files"), [(49_999, 1), (50_000, 1), (50_001, 2)])
def test_url_count_boundaries(out: Path, n: int, files: int) -> None:
    res = write(out, [f"https://example.com/p{i}" for i in range(n)])
    shards = [f for f in res.files if f.kind == "urlset"]
    assert len(shards) == files
    assert [f.entries for f in shards] == ([n] if files == 1 else [50_000, n - 50_000])
    got = locs(out / "sitemap.xml") if files == 1 else all_locs(out)
    assert got == [f"https://example.com/p{i}" for i in range(n)]


def _entry_size(loc: str) -> int:
    return len(f"<url><loc>{loc}</loc></url>\n".encode())


@pytest.mark.parametrize("path", ["a" * 1900, "ü" * 300, "€𝄞" * 90])
def test_byte_limit_is_hit_exactly(out: Path, path: str) -> None:
    urls = [sk.Url(f"https://example.com/{i:04d}/{path}") for i in range(40)]
    head = len(sk.dumps([]).decode().split("</urlset>")[0].encode())
    tail = len(b"</urlset>\n")
    limit = head + tail + sum(_entry_size(u.loc) for u in urls[:7])  # exactly 7 fit
    res = write(out, urls, max_bytes=limit)
    shards = [f for f in res.files if f.kind == "urlset"]
    assert shards[0].entries == 7
    assert shards[0].bytes == limit
    for p in shard_files(out):
        assert len(read_bytes(p)) <= limit
    assert all_locs(out) == [u.loc for u in urls]
    one_less = write(out, urls, max_bytes=limit - 1)
    assert one_less.files[0].entries == 6


def test_byte_limit_counts_multibyte_text_in_bytes(out: Path) -> None:
    title = "€𝄞ü" * 300  # 2,700 bytes of UTF-8 in 900 characters
    urls = [
        sk.Url(f"https://example.com/{i}", news=sk.News("P", "en", "2024-05-01", title))
        for i in range(10)
    ]
    entry = sk.dumps(urls[:1]).decode().splitlines()[2] + "\n"
    assert len(entry.encode()) > len(entry) + 1500
    head = len(sk.dumps(urls[:1]).split(b"<url>")[0])
    limit = head + len(b"</urlset>\n") + 3 * len(entry.encode())
    res = write(out, urls, max_bytes=limit)
    assert [f.entries for f in res.files if f.kind == "urlset"] == [3, 3, 3, 1]
    assert res.files[0].bytes == limit
    assert max(len(read_bytes(p)) for p in shard_files(out)) == limit


def test_news_sitemaps_hold_at_most_1000_news(out: Path) -> None:
    news = sk.News("Paper", "en", "2024-05-01", "t")
    urls = [sk.Url(f"https://example.com/n{i}", news=news if i % 2 else None) for i in range(2_004)]
    res = write(out, urls)
    for p in shard_files(out):
        assert len(parse(p).findall("s:url/news:news", NS)) <= limits.MAX_NEWS
    assert res.urls == 2_004
    # the 1,000th news entry is url 1,999; url 2,000 has none and still fits
    assert [f.entries for f in res.files if f.kind == "urlset"] == [2_001, 3]


def test_more_than_1000_images_is_an_error() -> None:
    with pytest.raises(ValueError, match="1,000"):
        sk.Url("https://example.com/", images=[f"https://example.com/{i}.jpg" for i in range(1001)])


def test_empty_input_gives_an_empty_valid_urlset(out: Path) -> None:
    res = write(out, [])
    assert res.urls == 0
    root = parse(out / "sitemap.xml")
    assert root.tag == f"{{{NS['s']}}}urlset" and len(root) == 0


def test_index_modes(out: Path) -> None:
    res = write(out, ["https://example.com/a"], index="always")
    assert res.indexes == ["sitemap.xml"] and (out / "sitemap-1.xml").exists()
    with pytest.raises(sk.InputError, match="index never"):
        write(out, ["https://example.com/a", "https://example.com/b"], index="never", max_urls=1)


def test_several_indexes_when_the_index_limit_is_passed(out: Path) -> None:
    res = write(
        out, [f"https://example.com/{i}" for i in range(7)], max_urls=1, max_index_entries=3
    )
    assert res.indexes == ["sitemap-index-1.xml", "sitemap-index-2.xml", "sitemap-index-3.xml"]
    assert any("3 index files" in n for n in res.notes)
    assert not (out / "sitemap.xml").exists()


def test_hreflang_cluster_lists_every_member_and_itself(out: Path) -> None:
    with sk.SitemapWriter(out, base_url=BASE) as w:
        w.add_alternates({"en": "/en/p", "de": "/de/p", "fr-CA": "/fr-ca/p"}, x_default="/p")
    root = parse(out / "sitemap.xml")
    urls = root.findall("s:url", NS)
    assert [u.find("s:loc", NS).text for u in urls] == [
        BASE + "en/p",
        BASE + "de/p",
        BASE + "fr-ca/p",
        BASE + "p",
    ]
    expected = {
        ("en", BASE + "en/p"),
        ("de", BASE + "de/p"),
        ("fr-CA", BASE + "fr-ca/p"),
        ("x-default", BASE + "p"),
    }
    for u in urls:
        links = {(x.get("hreflang"), x.get("href")) for x in u.findall("xhtml:link", NS)}
        assert links == expected
        assert all(x.get("rel") == "alternate" for x in u.findall("xhtml:link", NS))


def test_output_contract(out: Path) -> None:
    write(
        out,
        [sk.Url("https://example.com/a", priority=1, changefreq="DAILY")],
        stylesheet="https://example.com/s.xsl?a=1&b=2",
    )
    data = (out / "sitemap.xml").read_bytes()
    assert data.startswith(
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b'<?xml-stylesheet type="text/xsl" href="https://example.com/s.xsl?a=1&amp;b=2"?>\n'
    )
    assert b"<priority>1.0</priority>" in data and b"<changefreq>daily</changefreq>" in data
    assert b"lastmod" not in data  # never invented
    assert b"\r" not in data and not data.startswith(b"\xef\xbb\xbf")


def test_text_format(out: Path) -> None:
    res = write(
        out,
        [
            "https://example.com/a?x=1&y=2",
            sk.Url("https://example.com/b", images=["https://e.com/i.jpg"]),
        ],
        format="txt",
    )
    assert (
        out / "sitemap.txt"
    ).read_text() == "https://example.com/a?x=1&y=2\nhttps://example.com/b\n"
    assert res.notes and "text sitemap" in res.notes[0]


def test_gzip_is_reproducible_and_valid(tmp_path: Path) -> None:
    urls = [f"https://example.com/{i}" for i in range(300)]
    write(tmp_path / "a", urls, gzip=True, max_urls=100)
    write(tmp_path / "b", urls, gzip=True, max_urls=100)
    names = sorted(os.listdir(tmp_path / "a"))
    assert names == sorted(os.listdir(tmp_path / "b"))
    for n in names:
        assert (tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes()
    raw = (tmp_path / "a" / "sitemap-1.xml.gz").read_bytes()
    assert raw[:2] == b"\x1f\x8b" and raw[4:8] == b"\0\0\0\0"  # mtime 0
    assert gzip.decompress(raw).startswith(b"<?xml")


def test_a_gzip_level_given_is_zlibs_scale(tmp_path: Path) -> None:
    # a level given is zlib's 0-9 scale, applied: the same content, level 1 larger than 9
    urls = [f"https://example.com/p/{i}?ref=a&b={i % 97}" for i in range(3000)]
    raw = {}
    for level in (None, 1, 9):
        write(tmp_path / str(level), urls, gzip=True, gzip_level=level)
        raw[level] = (tmp_path / str(level) / "sitemap.xml.gz").read_bytes()
    assert gzip.decompress(raw[1]) == gzip.decompress(raw[9]) == gzip.decompress(raw[None])
    assert len(raw[1]) > len(raw[9])


def test_duplicates_are_kept_once_in_order_and_reported(out: Path) -> None:
    urls = [
        "https://example.com/a",
        "https://example.com/b",
        "https://example.com/a",
        "https://example.com/c",
        "https://example.com/b",
        "https://example.com/a",
    ]
    res = write(out, urls, max_urls=2)
    assert all_locs(out) == [
        "https://example.com/a",
        "https://example.com/b",
        "https://example.com/c",
    ]
    assert res.duplicates == 3 and res.urls == 3
    assert [f.entries for f in res.files if f.kind == "urlset"] == [2, 1]
    assert [e.text for e in parse(out / "sitemap.xml").iterfind("s:sitemap/s:loc", NS)] == [
        BASE + "sitemap-1.xml",
        BASE + "sitemap-2.xml",
    ]


def test_duplicates_are_dropped_from_text_sitemaps_too(out: Path) -> None:
    urls = ["https://example.com/a", "https://example.com/b", "https://example.com/a"]
    res = write(out, urls * 2, format="txt", max_urls=2)
    assert res.duplicates == 4 and res.urls == 2
    texts = [(out / f.name).read_text() for f in res.files if f.kind == "text"]
    assert texts == ["https://example.com/a\nhttps://example.com/b\n"]


def test_duplicate_examples_are_urls_not_xml(out: Path) -> None:
    urls = ["https://example.com/a?x=1&y='2'", "https://example.com/b"] * 2
    res = write(out, urls)
    assert res.duplicates == 2
    assert res.duplicate_examples == ["https://example.com/a?x=1&y='2'", "https://example.com/b"]


def test_a_shard_made_only_of_duplicates_disappears(out: Path) -> None:
    urls = ["https://example.com/a", "https://example.com/b"] * 3
    res = write(out, urls, max_urls=2)
    assert res.urls == 2 and res.duplicates == 4
    assert sorted(os.listdir(out)) == ["sitemap.xml"]  # one shard left: written directly


def test_locations_outside_the_base_are_refused(out: Path) -> None:
    with pytest.raises(sk.InputError, match="outside"):
        write(out, ["https://other.example.com/a"])
    assert not out.exists() or not os.listdir(out)
    write(out, ["https://other.example.com/a"], check_location=False)


def test_relative_locs_resolve_against_the_base(out: Path) -> None:
    with sk.SitemapWriter(out, base_url="https://example.com/shop") as w:
        w.add("item?id=1")
        w.add("/shop/küche")
    assert locs(out / "sitemap.xml") == [
        "https://example.com/shop/item?id=1",
        "https://example.com/shop/k%C3%BCche",
    ]


def test_stale_shards_are_removed_after_the_new_index(out: Path) -> None:
    write(out, [f"https://example.com/{i}" for i in range(5)], max_urls=1)
    (out / "robots.txt").write_text("keep me")
    res = write(out, [f"https://example.com/{i}" for i in range(3)], max_urls=1)
    assert sorted(res.removed) == ["sitemap-4.xml", "sitemap-5.xml"]
    assert sorted(os.listdir(out)) == [
        "robots.txt",
        "sitemap-1.xml",
        "sitemap-2.xml",
        "sitemap-3.xml",
        "sitemap.xml",
    ]
    # beside the folder: only the manifest of what our runs published, no staging folder
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".")] == [
        ".public.sitemapkit.sitemap.manifest.json"
    ]


def test_unchanged_files_keep_their_mtime(out: Path) -> None:
    write(out, [f"https://example.com/{i}" for i in range(4)], max_urls=2)
    os.utime(out / "sitemap-1.xml", (1_000_000, 1_000_000))
    res = write(
        out, ["https://example.com/0", "https://example.com/1", "https://example.com/x"], max_urls=2
    )
    assert (out / "sitemap-1.xml").stat().st_mtime == 1_000_000
    # the changed shard takes a name the old index did not use; the old file goes after it
    (changed,) = [f.name for f in res.files if f.name.startswith("sitemap-2")]
    assert re.fullmatch(r"sitemap-2-[0-9a-f]{10}\.xml", changed)
    assert locs(out / changed) == ["https://example.com/x"]
    assert res.removed == ["sitemap-2.xml"]
    assert sorted(os.listdir(out)) == sorted(["sitemap-1.xml", changed, "sitemap.xml"])


def test_a_failure_mid_write_leaves_the_published_files_intact(out: Path) -> None:
    write(out, [f"https://example.com/{i}" for i in range(10)], max_urls=3, gzip=True)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    class Boom(Exception):
        pass

    with pytest.raises(Boom), sk.SitemapWriter(out, base_url=BASE, max_urls=3, gzip=True) as w:
        for i in range(100):
            w.add(f"https://example.com/new{i}")
        raise Boom
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    # no stray staging folder: only the folder and the manifest of the first run
    assert sorted(p.name for p in out.parent.iterdir()) == [
        ".public.sitemapkit.sitemap.manifest.json",
        "public",
    ]


_LOCS = st.lists(
    st.text(
        st.characters(exclude_categories=("Cs",), exclude_characters="\x00"),
        min_size=1,
        max_size=40,
    ),
    min_size=1,
    max_size=60,
    unique=True,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(paths=_LOCS, max_urls=st.integers(1, 7), slack=st.integers(0, 400))
def test_split_never_exceeds_limits_and_keeps_order(
    tmp_path: Path, paths: list[str], max_urls: int, slack: int
) -> None:
    out = tmp_path / "prop"
    try:
        urls = [sk.Url(BASE + "p/" + p) for p in paths]
    except ValueError:
        return  # e.g. a character XML cannot carry
    uniq = list(dict.fromkeys(u.loc for u in urls))
    max_bytes = (
        200 + max(_entry_size(u.replace("&", "&amp;").replace("'", "&apos;")) for u in uniq) + slack
    )
    res = write(out, urls, max_urls=max_urls, max_bytes=max_bytes)
    files = [out / f.name for f in res.files if f.kind == "urlset"]
    indexes = [out / f.name for f in res.files if f.kind == "sitemapindex"]
    listed = [e.text for i in indexes for e in parse(i).iterfind("s:sitemap/s:loc", NS)]
    assert listed == ([BASE + f.name for f in files] if indexes else [])
    for f in files + indexes:
        data = read_bytes(f)
        assert len(data) <= max_bytes
        assert len(parse(data)) <= (max_urls if f in files else limits.MAX_SITEMAPS)
    assert [loc for f in files for loc in locs(f)] == uniq
    assert res.urls == len(uniq)


def test_a_publish_cut_short_shows_the_old_set_and_the_next_run_clears_it(
    out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys

    from sitemapkit.io import files

    write(out, [f"https://example.com/old{i}" for i in range(6)], max_urls=2)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real_replace = os.replace
    moved: list[str] = []

    def crash_after_one(src: object, dst: object) -> None:
        if str(dst).startswith(str(out)) and moved:
            raise KeyboardInterrupt  # the process dies here, mid-publish
        real_replace(src, dst)  # type: ignore[arg-type]
        if str(dst).startswith(str(out)):
            moved.append(Path(str(dst)).name)

    monkeypatch.setattr(files.os, "replace", crash_after_one)
    with pytest.raises(KeyboardInterrupt), sk.SitemapWriter(out, base_url=BASE, max_urls=2) as w:
        for i in range(4):
            w.add(f"https://example.com/new{i}")
        w._abort = lambda: None  # type: ignore[method-assign]  # a killed process cleans nothing
        w.close()
    monkeypatch.setattr(files.os, "replace", real_replace)
    w._run._publisher._release()  # type: ignore[union-attr]  # as the kill releases its lock
    # one new shard moved in, under a name the live index does not use: the old set shows
    assert len(moved) == 1 and moved[0] not in before
    assert all_locs(out) == [f"https://example.com/old{i}" for i in range(6)]
    # pretend the staging folder belongs to a process that has exited
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (staging,) = [p for p in out.parent.iterdir() if p.name.startswith(".public.sitemapkit-")]
    staging.rename(staging.with_name(f".public.sitemapkit-{dead}-x"))
    sk.SitemapWriter(out, base_url=BASE)  # what the next run, of any kind, does first
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # the new file is gone
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".public.sitemapkit-")]
    write(out, [f"https://example.com/new{i}" for i in range(4)], max_urls=2)
    assert all_locs(out) == [f"https://example.com/new{i}" for i in range(4)]


_ENTRY = st.tuples(
    st.text(st.sampled_from("ab&'ü/?=%20"), max_size=120),  # path: escapes, IRIs
    st.booleans(),  # news
    st.integers(0, 2),  # images (a new namespace mid-shard widens the root tag)
    st.booleans(),  # alternates
)


@settings(max_examples=60, deadline=None)
@given(
    entries=st.lists(_ENTRY, min_size=1, max_size=40),
    max_urls=st.integers(1, 9),
    max_bytes=st.integers(900, 4_000),
    max_news=st.integers(1, 3),
    incremental=st.booleans(),
)
def test_splits_never_exceed_the_limits(
    entries: list[tuple[str, bool, int, bool]],
    max_urls: int,
    max_bytes: int,
    max_news: int,
    incremental: bool,
) -> None:
    import tempfile

    urls = [
        sk.Url(
            f"{BASE}{i}/{path}",
            news=sk.News("P", "en", "2024-05-01", "T") if news else None,
            images=[sk.Image(f"{BASE}i/{i}/{k}.jpg") for k in range(images)],
            alternates=[sk.Alternate("de", f"{BASE}de/{i}")] if alternate else [],
        )
        for i, (path, news, images, alternate) in enumerate(entries)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        state = Path(tmp) / "state.db" if incremental else None
        try:
            res = write(
                out,
                urls,
                max_urls=max_urls,
                max_bytes=max_bytes,
                max_news=max_news,
                state=state,
                index="always",
            )
        except sk.InputError as exc:
            # only an entry bigger than a whole file of max_bytes may refuse the run
            assert "more than fits in a sitemap" in exc.message
            return
        shards = [f for f in res.files if f.kind == "urlset"]
        for f in shards:
            data = (out / f.name).read_bytes()
            root = parse(data)
            assert len(data) == f.bytes <= max_bytes  # the closing tag counted
            assert len(root) == f.entries <= max_urls
            assert len(root.findall("s:url/news:news", NS)) <= max_news
        assert [loc for f in shards for loc in locs(out / f.name)] == [u.loc for u in urls]


def test_a_relative_loc_is_resolved_by_the_writer_and_refused_by_url(out: Path) -> None:
    # One rule: a Url holds only absolute locs; the writer resolves a string against
    # base_url first, and then builds the very Url that the absolute loc gives.
    with pytest.raises(ValueError, match="absolute"):
        sk.Url("/en/a")
    with sk.SitemapWriter(out / "w", base_url=BASE + "shop/") as w:
        assert w.resolve("/en/a") == BASE + "en/a"
        assert w.resolve("en/a") == BASE + "shop/en/a"
        w.add("en/a")
        w.add(sk.Url(w.resolve("en/b")))
    with sk.SitemapWriter(out / "u", base_url=BASE + "shop/") as u:
        u.add(sk.Url(BASE + "shop/en/a"))
        u.add(sk.Url(BASE + "shop/en/b"))
    assert (out / "w" / "sitemap.xml").read_bytes() == (out / "u" / "sitemap.xml").read_bytes()
    with (
        pytest.raises(sk.InputError, match="outside"),
        sk.SitemapWriter(out / "x", base_url=BASE + "shop/") as x,
    ):
        x.add("/en/a")  # resolved, then refused: not under the base folder


def test_only_what_a_user_may_use_is_on_the_writer() -> None:
    public = {n for n in dir(sk.SitemapWriter) if not n.startswith("_")}
    assert public == {
        "add",
        "add_alternates",
        "add_block",
        "add_plain_file",
        "close",
        "incremental",
        "resolve",
    }
    for name in public:  # ...and no docstring sends the reader to a private name
        assert ":meth:`_" not in (getattr(sk.SitemapWriter, name).__doc__ or "")


def test_a_shard_file_is_written_only_by_the_thread_that_opened_it(tmp_path: Path) -> None:
    import threading

    from sitemapkit.io.files import ShardFile

    f = ShardFile(tmp_path / "s.xml", gzip=True)
    opener = threading.Thread(target=f.open)
    opener.start()
    opener.join()
    with pytest.raises(RuntimeError, match="thread that opened it"):
        f.write(b"x")
    with pytest.raises(RuntimeError, match="thread that opened it"):
        f.close()
    g = ShardFile(tmp_path / "t.xml", gzip=False)
    g.open()
    g.write(b"<x/>\n")
    g.close()
    assert g.read_back() == b"<x/>\n" and g.raw_bytes == g.stored_bytes == 5
