"""Hostile servers end (issue #16 §4): the short versions of bench/hostile.py's drills.

Each server below never ends by itself, or lists more than the budgets allow. Each read
ends within its budget, keeps what it read, and says what the budget cut (SM012 for what
was not fetched or not read to the end, SM006 for a size budget); from the command line
that is exit code 1 (3 when nothing at all could be read).
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from sitemapkit import ReadReport
from sitemapkit.core.discovery import SitemapTree
from sitemapkit.core.finding import Finding
from sitemapkit.core.model import Url
from sitemapkit.io.fetch import aiter_records, hold
from sitemapkit.io.fetch.hold import Batch, Holder
from sitemapkit.io.fetch.options import FetchOptions, Progress

from ..conftest import cli
from ..site import Handle, Reply, Request, Site, endless_gzip, robots, sitemap_index
from .test_fetch import urlset


@pytest.fixture
def site() -> Iterator[Site]:
    with Site() as s:
        yield s


def crawl(target: str, **kwargs: object) -> tuple[list[str], SitemapTree, list[Finding]]:
    """The locs read, the tree and the report's findings (parsed here, no retries)."""
    report = ReadReport()
    options: dict[str, object] = {"workers": 0, "retries": 0, "report": report, **kwargs}

    async def main() -> tuple[list[str], SitemapTree]:
        async with aiter_records(target, **options) as stream:  # type: ignore[arg-type]
            locs = [r.loc async for r, _ in stream]
        return locs, stream.tree

    locs, tree = asyncio.run(main())
    return locs, tree, report.findings


def said(findings: list[Finding], rule: str, *parts: str) -> Finding:
    """The one finding of ``rule`` whose message holds every part."""
    (hit,) = [f for f in findings if f.rule == rule and all(p in f.message for p in parts)]
    return hit


def trickle_after(head: bytes, pause: float) -> Reply:
    """``head`` at once, then a space every ``pause`` seconds, for ever."""

    def chunks() -> Iterator[bytes]:
        yield head
        while True:
            time.sleep(pause)
            yield b" "

    return Reply(headers={"Content-Type": "application/xml"}, stream=chunks)


# -- trickles: a deadline per document, not only a timeout per read -------------------------


def test_trickled_headers_end_at_the_document_deadline(site: Site) -> None:
    site["/t.xml"] = Reply(body=urlset("https://e.com/a"), head_trickle=0.05)
    locs, tree, findings = crawl(site.url("/t.xml"), max_document_time=0.6, timeout=5)
    assert locs == []
    (status,) = tree.sitemaps
    assert status.status is None and "deadline per document (0.6 s)" in str(status.error)
    said(findings, "SM012", "could not be fetched", "--max-document-time")


def test_a_body_trickled_from_its_first_byte_ends_at_the_deadline(site: Site) -> None:
    site["/t.xml"] = Reply(body=urlset("https://e.com/a"), trickle=0.05)
    locs, tree, findings = crawl(site.url("/t.xml"), max_document_time=0.6, timeout=5)
    assert locs == [] and tree.sitemaps[0].status == 200
    said(findings, "SM012", "was not read to the end", "deadline per document (0.6 s)")


def test_a_trickled_body_keeps_the_entries_read_before_the_deadline(site: Site) -> None:
    head = urlset(*(f"https://e.com/{i}" for i in range(50))).replace(b"</urlset>", b"")
    site["/t.xml"] = trickle_after(head, 0.02)
    locs, _, findings = crawl(site.url("/t.xml"), max_document_time=0.8, timeout=5)
    assert locs == [f"https://e.com/{i}" for i in range(50)]
    said(findings, "SM012", "was not read to the end", "50 entries were read")
    assert site.count("/t.xml") == 1  # entries were handed out: never read twice


def test_the_deadline_leaves_out_the_time_the_consumer_takes(site: Site) -> None:
    site["/a.xml"] = urlset(*(f"https://e.com/{i}" for i in range(3)))

    async def slow_consumer() -> list[str]:
        async with aiter_records(site.url("/a.xml"), workers=0, max_document_time=0.3) as s:
            locs = []
            async for record, _ in s:
                await asyncio.sleep(0.4)  # longer than the document's deadline
                locs.append(record.loc)
        assert s.tree.sitemaps[0].error is None
        return locs

    assert asyncio.run(slow_consumer()) == [f"https://e.com/{i}" for i in range(3)]


# -- the crawl's deadline ---------------------------------------------------------------------


def test_max_time_ends_the_crawl_and_names_what_was_not_read(site: Site) -> None:
    site["/robots.txt"] = robots(*(site.url(f"/s{i}.xml") for i in range(40)))
    for i in range(40):
        site[f"/s{i}.xml"] = Reply(body=urlset(f"https://e.com/{i}"), delay=0.1)
    locs, tree, findings = crawl(site.url("/"), max_time=0.5, per_host=1)
    read = len(tree.sitemaps)
    assert 0 < read < 40 and len(locs) == read - len(tree.errors)
    assert locs == [f"https://e.com/{i}" for i in range(len(locs))]  # in order, none lost
    (group,) = tree.unread
    assert group.parent == site.url("/robots.txt") and group.count == 40 - read
    hit = said(findings, "SM012", "max_time=0.5", "--max-time", f"{40 - read:,} sitemaps")
    assert hit.where == site.url("/robots.txt") and repr(group.first) in hit.message


# -- budgets on counts: robots.txt lines and index children alike -----------------------------


def many(site: Site, n: int) -> list[str]:
    """``n`` one-entry sitemaps, served; their URLs."""
    urls = [site.url(f"/s{i}.xml") for i in range(n)]
    for i in range(n):
        site[f"/s{i}.xml"] = urlset(f"https://e.com/{i}")
    return urls


def test_a_robots_txt_of_10000_sitemaps_beyond_max_sitemaps_is_said(site: Site) -> None:
    urls = many(site, 30) + [site.url(f"/x{i}.xml") for i in range(9_970)]
    site["/robots.txt"] = robots(*urls)
    code, out, err = cli(["read", site.url("/"), "--format", "urls", "--max-sitemaps", "30"])
    assert code == 1
    assert out.split() == [f"https://e.com/{i}" for i in range(30)]
    assert "9,970 sitemaps it lists were not read" in err and "--max-sitemaps" in err
    assert f"(the first: {site.url('/x0.xml')!r})" in err
    assert not any(p.startswith("/x") for p in site.paths())


def test_an_index_of_10500_children_is_not_a_silent_exit_0(site: Site) -> None:
    urls = many(site, 20) + [site.url(f"/x{i}.xml") for i in range(10_480)]
    site["/i.xml"] = sitemap_index(urls)
    code, _, err = cli(["read", site.url("/i.xml"), "--format", "urls", "--max-sitemaps", "21"])
    assert code == 1  # the index itself is one of the 21
    assert "10,480 sitemaps it lists were not read" in err
    assert f"{site.url('/i.xml')}: SM012" in err and repr(site.url("/x0.xml")) in err


def test_an_index_that_lists_itself_and_many_children(site: Site) -> None:
    urls = [site.url("/i.xml"), *many(site, 10), *(site.url(f"/x{i}.xml") for i in range(500))]
    site["/i.xml"] = sitemap_index(urls)
    locs, _, findings = crawl(site.url("/i.xml"), max_sitemaps=11)
    assert locs == [f"https://e.com/{i}" for i in range(10)]
    said(findings, "SM012", "500 sitemaps it lists were not read", repr(site.url("/x0.xml")))
    assert [f.rule for f in findings if f.rule == "SM506"] == ["SM506"]  # the self-reference


def test_endlessly_nested_indexes_stop_at_max_depth(site: Site) -> None:
    """Each level lists a sitemap of one URL and the next level, for ever."""

    def nest(r: Request) -> Reply:
        level = int(r.path.split("/")[-1].split(".")[0])
        children = [site.url(f"/u/{level}.xml"), site.url(f"/n/{level + 1}.xml")]
        return Reply(body=sitemap_index(children))

    def leaf(r: Request) -> Reply:
        return Reply(body=urlset(f"https://e.com/{r.path.split('/')[-1]}"))

    for level in range(100):
        site[f"/n/{level}.xml"] = Handle(nest)
        site[f"/u/{level}.xml"] = Handle(leaf)
    code, out, err = cli(["read", site.url("/n/0.xml"), "--max-depth", "3", "--format", "urls"])
    assert code == 1
    assert out.split() == [f"https://e.com/{level}.xml" for level in range(3)]
    # depth 3 is the index /n/3.xml: its children would be at depth 4
    assert "2 sitemaps it lists were not read: nested deeper than max_depth=3" in err
    assert repr(site.url("/u/3.xml")) in err and site.count("/n/4.xml") == 0


# -- a size budget ----------------------------------------------------------------------------


def test_an_endless_gzip_stream_stops_at_the_byte_budget_and_says_so(site: Site) -> None:
    site["/g.xml.gz"] = Reply(
        headers={"Content-Type": "application/gzip"}, stream=endless_gzip("https://e.com/p/")
    )
    code, out, err = cli(
        ["read", site.url("/g.xml.gz"), "--format", "urls", "--max-bytes", "400000"]
    )
    assert code == 1
    lines = out.split()
    assert lines and lines == [f"https://e.com/p/{i}" for i in range(len(lines))]
    assert "SM006 error: The sitemap was not read to the end" in err
    assert "--max-bytes" in err and "400,000" in err


# -- what the output and the terminal show ----------------------------------------------------


def test_records_are_printed_as_they_are_read(site: Site) -> None:
    """A run still waiting for its second sitemap has printed the first's records, and
    ends cleanly when interrupted there."""
    site["/robots.txt"] = robots(site.url("/a.xml"), site.url("/b.xml"))
    site["/a.xml"] = urlset("https://e.com/a1", "https://e.com/a2")
    site["/b.xml"] = trickle_after(urlset("https://e.com/b1").replace(b"</urlset>", b""), 0.05)
    command = [sys.executable, "-m", "sitemapkit", "read", site.url("/"), "--format", "urls"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as proc:
        try:
            assert proc.stdout is not None and proc.stderr is not None
            ready, _, _ = select.select([proc.stdout], [], [], 20)
            assert ready, "nothing printed while the second sitemap trickles"
            first = os.read(proc.stdout.fileno(), 1 << 16)
            assert proc.poll() is None  # still reading /b.xml
            assert first.split(b"\n")[:2] == [b"https://e.com/a1", b"https://e.com/a2"]
            proc.send_signal(signal.SIGINT)
            err = proc.communicate(timeout=20)[1].decode()
        finally:
            proc.kill()
    assert proc.returncode == 130 and "Traceback" not in err and "Error" not in err, err


def test_progress_says_what_the_crawl_waits_for(site: Site) -> None:
    site["/slow.xml"] = Reply(body=urlset("https://e.com/a"), delay=0.8)
    seen: list[Progress] = []
    locs, _, _ = crawl(site.url("/slow.xml"), progress=seen.append)
    assert locs == ["https://e.com/a"]
    waiting = [p for p in seen if p.waiting == site.url("/slow.xml")]
    assert waiting and max(p.waited for p in waiting) > 0
    assert seen[-1].done == 1 and seen[-1].waiting is None


# -- speed: small sitemaps over reused connections --------------------------------------------


def test_many_small_sitemaps_reuse_the_connections(site: Site) -> None:
    site["/robots.txt"] = robots(*many(site, 300))
    code, out, err = cli(["read", site.url("/"), "--format", "urls"])
    assert (code, err) == (0, "")
    assert out.split() == [f"https://e.com/{i}" for i in range(300)]
    assert site.connections <= 2  # per_host: two connections, each kept alive


# -- records read ahead of their turn: bounded memory, no deadlock ----------------------------


def test_held_records_beyond_the_bound_go_to_a_file_and_come_back_in_order() -> None:
    async def main() -> tuple[list[Batch], Holder]:
        out: asyncio.Queue[Batch | None] = asyncio.Queue()
        first_open = [True]
        holder = Holder(out, lambda order: first_open[0] and order > (0,), limit=10)
        for doc in (1, 2):
            for n in range(5):
                batch = [Url(f"https://e.com/{doc}/{n}/{i}") for i in range(4)]
                await holder.put((doc,), (f"s{doc}", batch))
        assert out.empty() and holder.records == 40 and holder.peak <= 10
        await holder.put((0,), ("s0", [Url("https://e.com/0")]))  # its turn: out at once
        first_open[0] = False
        await holder.release()
        holder.close()
        return [out.get_nowait() for _ in range(out.qsize())], holder

    batches, holder = asyncio.run(main())
    assert holder.records == 0 and holder.in_memory == 0
    got = [(source, [u.loc for u in records]) for source, records in batches]
    want = [("s0", ["https://e.com/0"])] + [
        (f"s{doc}", [f"https://e.com/{doc}/{n}/{i}" for i in range(4)])
        for doc in (1, 2)
        for n in range(5)
    ]
    assert got == want


def test_a_crawl_with_little_room_to_hold_gives_every_record_in_order(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hold, "HELD_RECORDS", 50)
    site["/a.xml"] = Reply(body=urlset("https://e.com/a"), delay=0.5)  # the others wait for it
    for name in "bcd":
        site[f"/{name}.xml"] = urlset(*(f"https://e.com/{name}{i}" for i in range(2000)))
    site["/robots.txt"] = robots(*(site.url(f"/{name}.xml") for name in "abcd"))
    locs, tree, _ = crawl(site.url("/"), workers=2)
    want = ["https://e.com/a"] + [f"https://e.com/{n}{i}" for n in "bcd" for i in range(2000)]
    assert locs == want and tree.ok


def test_the_progress_line_names_what_it_waits_for(capsys: pytest.CaptureFixture[str]) -> None:
    from sitemapkit.cli.read import _Progress
    from sitemapkit.cli.validate import StatusLine

    line = _Progress(StatusLine())
    line.records = 12_345
    line.update(Progress(done=17, pending=3, waiting="http://h/s18.xml", waited=3.2))
    line.clear()
    err = capsys.readouterr().err
    assert "read 12,345 records from 17 sitemaps; waiting 3 s for http://h/s18.xml" in err
    # erased before the findings are printed (click drops the escape code off a terminal)
    assert err.endswith("\r") and err.count("\r") == 2


def test_deadlines_must_be_positive_numbers() -> None:
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="max_time must be a positive number"):
            FetchOptions(max_time=bad)
        with pytest.raises(ValueError, match="max_document_time must be a positive"):
            FetchOptions(max_document_time=bad)
    code, _, err = cli(["read", "http://127.0.0.1:9/", "--max-time", "0"])
    assert code == 2 and "--max-time" in err


def test_read_takes_the_budgets_of_the_command(site: Site) -> None:
    """``sitemapkit.read(url, fetch={...})``: the API bounds a read as ``--max-sitemaps``
    does, and says what the budget left out."""
    from sitemapkit import read

    site["/robots.txt"] = robots(*many(site, 5), *(site.url(f"/x{i}.xml") for i in range(40)))
    report = ReadReport()
    locs = [r.record.loc for r in read(site.url("/"), report=report, fetch={"max_sitemaps": 5})]
    assert locs == [f"https://e.com/{i}" for i in range(5)]
    said(report.findings, "SM012", "40 sitemaps it lists were not read", repr(site.url("/x0.xml")))
    assert not any(p.startswith("/x") for p in site.paths())
