"""sitemapkit.diff(): added, removed and changed URLs between two sets, in bounded memory."""

from __future__ import annotations

import gzip
import importlib
import json
import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sitemapkit as sk
from sitemapkit.changes import canonical_json, iter_urls
from sitemapkit.io.extsort import ExternalSorter

from .site import Site

BASE = "https://example.com/"


def write(path: Path, urls: list[sk.Url]) -> Path:
    data = sk.dumps(urls)
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


def changes(old: Path | str, new: Path | str, **kw: object) -> tuple[list[sk.Change], sk.Diff]:
    d = sk.diff(str(old), str(new), **kw)  # type: ignore[arg-type]
    with d:
        return list(d), d


# -- the change records ------------------------------------------------------------------------


def test_added_removed_changed_in_loc_order(tmp_path: Path) -> None:
    old = write(
        tmp_path / "old.xml",
        [
            sk.Url(BASE + "b", lastmod="2024-05-01"),
            sk.Url(BASE + "a", lastmod="2024-05-01", priority=0.5),
            sk.Url(BASE + "gone"),
            sk.Url(BASE + "same", changefreq="daily"),
        ],
    )
    new = write(
        tmp_path / "new.xml.gz",
        [
            sk.Url(BASE + "same", changefreq="daily"),
            sk.Url(BASE + "a", lastmod="2024-05-01", priority=0.8),
            sk.Url(BASE + "b", lastmod="2024-06-01T10:00:00+02:00"),
            sk.Url(BASE + "c"),
        ],
    )
    got, d = changes(old, new)
    assert [(c.kind, c.loc, c.fields) for c in got] == [
        ("changed", BASE + "a", ("priority",)),
        ("changed", BASE + "b", ("lastmod",)),
        ("added", BASE + "c", ()),
        ("removed", BASE + "gone", ()),
    ]
    b = got[1]
    assert b.old is not None and b.new is not None
    assert (b.old["lastmod"], b.new["lastmod"]) == ("2024-05-01", "2024-06-01T10:00:00+02:00")
    assert b.new == sk.Url(BASE + "b", lastmod="2024-06-01T10:00:00+02:00").to_record()
    assert got[2].old is None and got[3].new is None
    s = d.summary
    assert (s.added, s.removed, s.changed, s.unchanged, s.old, s.new) == (1, 1, 2, 1, 4, 4)
    assert s.complete and not s.equal
    assert str(s) == "1 added, 1 removed, 2 changed, 1 unchanged (old 4 URLs, new 4 URLs)"


def test_every_field_counts_as_a_change(tmp_path: Path) -> None:
    base = sk.Url(BASE + "p", lastmod="2024-05-01")
    variants = {
        "images": sk.Url(BASE + "p", lastmod="2024-05-01", images=(sk.Image(BASE + "i.jpg"),)),
        "alternates": sk.Url(
            BASE + "p", lastmod="2024-05-01", alternates=(sk.Alternate("de", BASE + "de/p"),)
        ),
        "changefreq": sk.Url(BASE + "p", lastmod="2024-05-01", changefreq="weekly"),
        "news": sk.Url(
            BASE + "p",
            lastmod="2024-05-01",
            news=sk.News("Example", "en", "2024-05-01", "Title"),
        ),
        "videos": sk.Url(
            BASE + "p",
            lastmod="2024-05-01",
            videos=(sk.Video(BASE + "t.jpg", "T", "D", content_loc=BASE + "v.mp4"),),
        ),
    }
    old = write(tmp_path / "old.xml", [base])
    for name, url in variants.items():
        new = write(tmp_path / f"{name}.xml", [url])
        got, _ = changes(old, new)
        assert [(c.kind, c.fields) for c in got] == [("changed", (name,))], name
        assert got[0].new == url.to_record()
        back, _ = changes(new, old)
        assert [(c.kind, c.fields) for c in back] == [("changed", (name,))], name


def test_equal_sets_yield_nothing(tmp_path: Path) -> None:
    urls = [sk.Url(BASE + f"p{i}", lastmod="2024-05-01") for i in range(50)]
    a = write(tmp_path / "a.xml", urls)
    b = write(tmp_path / "b.xml.gz", list(reversed(urls)))
    got, d = changes(a, b)
    assert got == []
    assert d.summary.equal and d.summary.unchanged == 50 and d.summary.complete


def test_repeated_locs_count_once_with_the_first_listing(tmp_path: Path) -> None:
    old = write(tmp_path / "old.xml", [sk.Url(BASE + "a", lastmod="2024-05-01")])
    new = tmp_path / "new.txt"
    new.write_text(f"{BASE}a\n{BASE}b\n{BASE}a\n")
    got, d = changes(old, new)
    # the text sitemap has no lastmod: "a" changed; its repeat is ignored
    assert [(c.kind, c.loc) for c in got] == [("changed", BASE + "a"), ("added", BASE + "b")]
    assert (d.summary.new, d.summary.new_duplicates) == (2, 1)
    assert "1 repeated in the new set" in str(d.summary)

    first = write(
        tmp_path / "first.xml",
        [sk.Url(BASE + "a", lastmod="2024-05-01"), sk.Url(BASE + "a", lastmod="2024-07-01")],
    )
    got, d = changes(old, first)
    assert got == [] and d.summary.new_duplicates == 1


def test_change_record_shape(tmp_path: Path) -> None:
    old = write(tmp_path / "old.xml", [sk.Url(BASE + "a", lastmod="2024-05-01")])
    new = write(tmp_path / "new.xml", [sk.Url(BASE + "a", lastmod="2024-05-02")])
    (c,) = changes(old, new)[0]
    rec = c.to_record()
    assert rec["change"] == "changed" and rec["fields"] == ["lastmod"]
    assert sk.Url.from_record(rec["new"]) == sk.Url(BASE + "a", lastmod="2024-05-02")
    json.dumps(rec)  # JSON-ready


# -- inputs: folders, indexes, URLs ------------------------------------------------------------


def publish(out: Path, locs: list[str], **kw: object) -> Path:
    with sk.SitemapWriter(out, base_url=BASE, **kw) as w:  # type: ignore[arg-type]
        for loc in locs:
            w.add(sk.Url(loc, lastmod="2024-05-01"))
    return out


def test_folder_with_an_index_reads_the_shards_beside_it(tmp_path: Path) -> None:
    locs = [BASE + f"p/{i}" for i in range(25)]
    old = publish(tmp_path / "old", locs, max_urls=10, gzip=True)
    assert (old / "sitemap.xml").is_file() and (old / "sitemap-3.xml.gz").is_file()
    new = publish(tmp_path / "new", [*locs[1:], BASE + "p/new"], max_urls=7)
    got, d = changes(old, new)
    assert [(c.kind, c.loc) for c in got] == [("removed", BASE + "p/0"), ("added", BASE + "p/new")]
    assert d.summary.old == 25 and d.summary.new == 25
    # the index file given directly works the same way
    got2, _ = changes(old / "sitemap.xml", new / "sitemap.xml")
    assert got2 == got


def test_folder_without_sitemap_xml_reads_every_sitemap_file(tmp_path: Path) -> None:
    locs = [BASE + f"p/{i}" for i in range(12)]
    old = publish(tmp_path / "old", locs, max_urls=5, name="pages")
    assert not (old / "sitemap.xml").exists() and (old / "pages.xml").is_file()
    (old / "notes.md").write_text("not a sitemap")
    assert sorted(u.loc for u in iter_urls(str(old))) == sorted(locs)
    new = tmp_path / "new.xml"
    write(new, [sk.Url(loc, lastmod="2024-05-01") for loc in locs])
    assert changes(old, new)[0] == []


def test_empty_folder_and_missing_child_are_input_errors(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(sk.InputError, match="holds no sitemap files"):
        list(iter_urls(str(tmp_path / "empty")))
    index = tmp_path / "index.xml"
    index.write_bytes(sk.dumps([sk.SitemapRef(BASE + "missing.xml")]))
    with pytest.raises(sk.InputError, match="not a file beside it") as info:
        changes(index, index)
    assert info.value.hint and "URL" in info.value.hint


def test_a_self_listing_index_does_not_loop(tmp_path: Path) -> None:
    index = tmp_path / "sitemap.xml"
    index.write_bytes(
        sk.dumps([sk.SitemapRef(BASE + "sitemap.xml"), sk.SitemapRef(BASE + "s1.xml")])
    )
    write(tmp_path / "s1.xml", [sk.Url(BASE + "x")])
    assert [u.loc for u in iter_urls(str(tmp_path))] == [BASE + "x"]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "www"
    root.mkdir()
    with Site() as site:
        site.static(root)
        yield site.url("/"), root


def test_a_sitemap_url_against_a_local_file(served: tuple[str, Path], tmp_path: Path) -> None:
    url, root = served
    write(root / "sitemap.xml", [sk.Url(BASE + "a", lastmod="2024-05-01"), sk.Url(BASE + "b")])
    local = write(tmp_path / "local.xml", [sk.Url(BASE + "a", lastmod="2024-05-02")])
    got, _ = changes(url + "sitemap.xml", local)
    assert [(c.kind, c.loc) for c in got] == [("changed", BASE + "a"), ("removed", BASE + "b")]


def test_an_unfetchable_sitemap_refuses_to_diff(served: tuple[str, Path], tmp_path: Path) -> None:
    url, _ = served
    local = write(tmp_path / "local.xml", [sk.Url(BASE + "a")])
    with pytest.raises(sk.FetchError, match="not read completely") as info:
        changes(local, url + "missing.xml")
    assert "404" in str(info.value)
    got, d = changes(local, url + "missing.xml", partial=True)
    assert [c.kind for c in got] == ["removed"]
    assert [f.rule for f in d.new_report.findings] == ["SM012"]


def test_a_truncated_file_refuses_to_diff(tmp_path: Path) -> None:
    good = write(tmp_path / "good.xml", [sk.Url(BASE + "a"), sk.Url(BASE + "b")])
    cut = tmp_path / "cut.xml"
    cut.write_bytes(good.read_bytes()[:-40])
    with pytest.raises(sk.ParseError, match="not read completely"):
        changes(good, cut)


# -- bounded memory: the external sort ---------------------------------------------------------


def test_spilled_runs_give_the_same_diff_and_are_removed(tmp_path: Path) -> None:
    rng = random.Random(5)
    old_locs = [BASE + f"p/{i}" for i in range(3000)]
    rng.shuffle(old_locs)
    new_locs = [loc for loc in old_locs if rng.random() > 0.05] + [BASE + "n/1", BASE + "n/2"]
    old = write(tmp_path / "old.xml", [sk.Url(loc, lastmod="2024-05-01") for loc in old_locs])
    new = write(
        tmp_path / "new.xml",
        [
            sk.Url(loc, lastmod="2024-05-0" + str(1 + (i % 100 == 0)))
            for i, loc in enumerate(new_locs)
        ],
    )
    work = tmp_path / "work"
    work.mkdir()
    small, d_small = changes(old, new, max_memory=4096, tmpdir=work)
    big, d_big = changes(old, new)
    assert small == big and len(small) > 100
    assert d_small.summary == d_big.summary
    assert os.listdir(work) == []  # temporary files gone


def test_closing_early_removes_the_temporary_files(tmp_path: Path) -> None:
    old = write(tmp_path / "old.xml", [sk.Url(BASE + f"p/{i}") for i in range(500)])
    new = write(tmp_path / "new.xml", [])
    work = tmp_path / "work"
    work.mkdir()
    with sk.diff(str(old), str(new), max_memory=2048, tmpdir=work) as d:
        next(d)
        assert len(os.listdir(work)) == 1
        assert len(os.listdir(work / os.listdir(work)[0])) > 2  # spilled runs
    assert os.listdir(work) == []
    assert not d.summary.complete


def test_external_sorter_multi_pass_merge(tmp_path: Path) -> None:
    rng = random.Random(7)
    lines = [f"{rng.randrange(10**6):07d}\t{i}\n".encode() for i in range(5000)]
    s = ExternalSorter(tmp_path, max_bytes=2000, fan_in=3)
    s.extend(lines[:10])
    for line in lines[10:]:
        s.add(line)
    assert s.runs > 9 and s.lines == 5000
    assert list(s.sorted()) == sorted(lines)
    assert os.listdir(tmp_path) == []
    with pytest.raises(RuntimeError):
        s.sorted()


def test_external_sorter_takes_a_list_at_once_only_while_it_fits(tmp_path: Path) -> None:
    rng = random.Random(8)
    lines = [f"{rng.randrange(10**6):07d}\n".encode() for i in range(300)]
    s = ExternalSorter(tmp_path, max_bytes=49 * 100)  # 100 lines a run (8 bytes + 41)
    s.extend(lines[:99])  # fits: in memory
    assert s.runs == 0 and s.lines == 99
    s.extend(lines[99:])  # does not: spilled a run at a time, as add() would
    assert s.runs == 3 and s.lines == 300  # at lines 100, 200 and 300
    assert list(s.sorted()) == sorted(lines)


def test_external_sorter_small_input_stays_in_memory(tmp_path: Path) -> None:
    s = ExternalSorter(tmp_path)
    s.extend([b"b\n", b"a\n"])
    assert list(s.sorted()) == [b"a\n", b"b\n"] and s.runs == 0
    with pytest.raises(ValueError):
        ExternalSorter(tmp_path, max_bytes=0)


def test_canonical_json_fast_path_matches_json_dumps() -> None:
    for url in (
        sk.Url(BASE + "a"),
        sk.Url(BASE + "a", lastmod="2024-05-01T10:00:00Z", changefreq="never", priority=1),
        sk.Url(BASE + "a", priority="0.05"),
    ):
        rec = {k: v for k, v in url.to_record().items() if v is not None and v != []}
        del rec["kind"], rec["loc"]
        assert canonical_json(url) == json.dumps(rec, sort_keys=True, separators=(",", ":"))


_LOCS = st.sampled_from([BASE + p for p in ("a", "a/", "a/b", "b", "a%20b", "ab", "%C3%A4")])
_ROWS = st.lists(st.tuples(_LOCS, st.sampled_from([None, "2024-05-01", "2024-05-02"])), max_size=12)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(old=_ROWS, new=_ROWS)
def test_diff_agrees_with_a_dict_model(
    tmp_path: Path, old: list[tuple[str, str | None]], new: list[tuple[str, str | None]]
) -> None:
    def model(rows: list[tuple[str, str | None]]) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for loc, lastmod in rows:
            out.setdefault(loc, lastmod)
        return out

    a, b = model(old), model(new)
    expected = sorted(
        [("removed", loc) for loc in a.keys() - b.keys()]
        + [("added", loc) for loc in b.keys() - a.keys()]
        + [("changed", loc) for loc in a.keys() & b.keys() if a[loc] != b[loc]],
        key=lambda t: t[1],
    )
    pa = write(tmp_path / "a.xml", [sk.Url(loc, lastmod=m) for loc, m in old])
    pb = write(tmp_path / "b.xml", [sk.Url(loc, lastmod=m) for loc, m in new])
    got, d = changes(pa, pb, max_memory=300)
    assert [(c.kind, c.loc) for c in got] == expected
    assert (d.summary.old, d.summary.new) == (len(a), len(b))
    assert d.summary.unchanged == sum(1 for loc in a.keys() & b.keys() if a[loc] == b[loc])


# -- the second process ------------------------------------------------------------------------


@pytest.fixture
def always_parallel(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Read the old side in a child process whatever its size; list the targets it read."""
    module = importlib.import_module("sitemapkit.changes")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    started: list[str] = []

    class Spy(module._SideProcess):  # type: ignore[misc, name-defined]
        def __init__(self, target: str, *args: object) -> None:
            started.append(target)
            super().__init__(target, *args)

    monkeypatch.setattr(module, "_SideProcess", Spy)
    return started


def test_the_old_side_in_a_second_process_gives_the_same_diff(
    tmp_path: Path, always_parallel: list[str]
) -> None:
    old = publish(tmp_path / "old", [BASE + f"p/{i}" for i in range(30)], max_urls=8)
    (old / "sitemap-2.xml").write_bytes(
        (old / "sitemap-2.xml").read_bytes().replace(b"2024-05-01", b"2024-13-01", 1)
    )
    new = write(
        tmp_path / "new.xml", [sk.Url(BASE + f"p/{i}", lastmod="2024-05-01") for i in range(1, 31)]
    )
    work = tmp_path / "work"
    work.mkdir()
    got, d = changes(old, new, tmpdir=work, max_memory=512, parallel=True, parallel_bytes=0)
    assert always_parallel == [str(old)]
    seq, d_seq = changes(old, new)
    assert always_parallel == [str(old)]
    assert got == seq and d.summary == d_seq.summary
    assert [(c.kind, c.loc) for c in got] == [
        ("removed", BASE + "p/0"),
        ("added", BASE + "p/30"),
        ("changed", BASE + "p/8"),  # its lastmod was dropped as invalid
    ]
    # the child's findings (the bad lastmod) reach old_report
    assert [f.rule for f in d.old_report.findings] == [f.rule for f in d_seq.old_report.findings]
    assert d.old_report.findings and d.old_report.sitemaps == d_seq.old_report.sitemaps
    assert os.listdir(work) == []


def test_an_error_in_the_second_process_keeps_its_details(
    tmp_path: Path, always_parallel: list[str]
) -> None:
    index = tmp_path / "index.xml"
    index.write_bytes(sk.dumps([sk.SitemapRef(BASE + "missing.xml")]))
    new = write(tmp_path / "new.xml", [sk.Url(BASE + "a")])
    with pytest.raises(sk.InputError, match="not a file beside it") as info:
        changes(index, new, parallel=True, parallel_bytes=0)
    assert info.value.where == str(index) and info.value.hint
    assert always_parallel == [str(index)]


def test_a_site_with_nothing_found_stops_the_diff(served: tuple[str, Path], tmp_path: Path) -> None:
    url, _ = served  # an empty site: robots.txt and every known path answer 404
    local = write(tmp_path / "local.xml", [sk.Url(BASE + "a")])
    with pytest.raises(sk.FetchError, match="not read completely") as info:
        changes(local, url)
    assert "No sitemap found" in str(info.value)


# -- values (issue #11 §3): a lastmod is kept as written, and compared as an instant ------------


def _doc(path: Path, lastmod: str, priority: str = "0.5") -> Path:
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{BASE}p</loc><lastmod>{lastmod}</lastmod><priority>{priority}</priority>"
        "</url></urlset>\n"
    )
    return path


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        # one instant written two ways: no change
        ("2024-05-01T10:00:00Z", "2024-05-01T12:00:00.000+02:00", False),
        ("2024-05-01T10:00+00:00", "2024-05-01T10:00:00Z", False),
        ("2024-03-22T08:13:58.345Z", "2024-03-22T09:13:58.3450+01:00", False),
        # a finer value, another instant, another precision: a change
        ("2024-03-22T08:13:58Z", "2024-03-22T08:13:58.345Z", True),
        ("2023-11-02T14:05:09.1234567Z", "2023-11-02T14:05:09.1234568Z", True),
        ("2024-05-01", "2024-05-01T00:00:00Z", True),
        ("2024-05", "2024-05-01", True),
        # a time without a zone is no instant: the same only as the same text
        ("2024-05-01T10:00:00", "2024-05-01T10:00:00Z", True),
        ("2024-05-01T10:00:00", "2024-05-01T10:00:00", False),
    ],
)
def test_lastmods_are_compared_as_instants(
    tmp_path: Path, old: str, new: str, changed: bool
) -> None:
    got, d = changes(_doc(tmp_path / "old.xml", old), _doc(tmp_path / "new.xml", new))
    assert [(c.kind, c.fields) for c in got] == ([("changed", ("lastmod",))] if changed else [])
    assert (d.summary.changed, d.summary.unchanged) == ((1, 0) if changed else (0, 1))
    if changed:
        assert (got[0].old["lastmod"], got[0].new["lastmod"]) == (  # type: ignore[index]
            old.replace("Z", "+00:00") if "T" in old and old.endswith("Z") else old,
            new.replace("Z", "+00:00") if new.endswith("Z") else new,
        )


def test_a_priority_change_below_a_tenth_is_a_change(tmp_path: Path) -> None:
    """0.85 and 0.9 are two values now that neither is rounded (0.85 was read as 0.9)."""
    got, _ = changes(
        _doc(tmp_path / "a.xml", "2024-05-01", "0.85"),
        _doc(tmp_path / "b.xml", "2024-05-01", "0.9"),
    )
    assert [(c.kind, c.fields, c.old["priority"]) for c in got] == [  # type: ignore[index]
        ("changed", ("priority",), 0.85)
    ]
    same, _ = changes(
        _doc(tmp_path / "a.xml", "2024-05-01", "0.85"),
        _doc(tmp_path / "c.xml", "2024-05-01", "0.850"),
    )
    assert same == []
