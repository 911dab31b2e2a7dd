"""``sitemapkit write`` end to end, in-process and as a real process."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import NS, cli, cli_modules, parse

BASE = "https://example.com/"


def test_write_prints_a_table_and_publishes(tmp_path: Path) -> None:
    src = tmp_path / "u.txt"
    src.write_text("".join(f"{BASE}p{i}\n" for i in range(5)))
    code, out, err = cli(
        [
            "write",
            str(src),
            "-o",
            str(tmp_path / "o"),
            "--base-url",
            BASE,
            "--max-urls",
            "2",
            "--gzip",
        ]
    )
    assert code == 0, err
    assert "sitemap-3.xml.gz" in out and "5 URLs in 4 files" in out
    assert parse(tmp_path / "o" / "sitemap.xml").tag.endswith("sitemapindex")


def test_invalid_input_exits_1_with_position_and_publishes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "u.csv"
    src.write_text(
        "loc,lastmod\nhttps://example.com/a,2024-05-01\nhttps://example.com/b,yesterday\n"
    )
    code, _, err = cli(["write", str(src), "-o", str(tmp_path / "o"), "--base-url", BASE])
    assert code == 1
    assert err.startswith("sitemapkit: error: 'yesterday' is not a W3C Datetime")
    assert f"(at {src}:3, field lastmod)" in err
    assert "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert cli(["write", "x.txt", "-o", str(tmp_path)])[0] == 2  # no --base-url
    assert cli(["write", "x.txt", "-o", str(tmp_path), "--base-url", "ftp://x/"])[0] == 2
    assert (
        cli(["write", "x.txt", "-o", str(tmp_path), "--base-url", BASE, "--max-urls", "0"])[0] == 2
    )


def test_missing_input_file(tmp_path: Path) -> None:
    code, _, err = cli(
        ["write", str(tmp_path / "nope.txt"), "-o", str(tmp_path / "o"), "--base-url", BASE]
    )
    assert code == 1 and "cannot open input" in err


def test_stdin_jsonl(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sitemapkit",
            "write",
            "-",
            "-o",
            str(tmp_path / "o"),
            "--base-url",
            BASE,
        ],
        input=b'{"loc": "/a", "lastmod": "2024-05-01"}\n',
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    root = parse(tmp_path / "o" / "sitemap.xml")
    assert root.find("s:url/s:loc", NS).text == BASE + "a"


def test_a_killed_process_leaves_the_earlier_output_byte_identical(tmp_path: Path) -> None:
    out = tmp_path / "o"
    small = tmp_path / "small.txt"
    small.write_text("".join(f"{BASE}old{i}\n" for i in range(10)))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "sitemapkit",
            "write",
            str(small),
            "-o",
            str(out),
            "--base-url",
            BASE,
            "--max-urls",
            "3",
            "--gzip",
        ],
        check=True,
        capture_output=True,
    )
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    # An endless input on a pipe: the writer is busy writing shards when it is killed.
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sitemapkit",
            "write",
            "-",
            "-o",
            str(out),
            "--base-url",
            BASE,
            "--max-urls",
            "1000",
            "--gzip",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    deadline = time.monotonic() + 20
    i = 0
    staging = None
    while time.monotonic() < deadline:
        proc.stdin.write("".join(f"{BASE}new{i + k}\n" for k in range(5000)).encode())
        i += 5000
        staging = [p for p in tmp_path.iterdir() if p.name.startswith(".o.sitemapkit-")]
        if staging and any(len(os.listdir(s)) > 2 for s in staging):
            break
    assert staging, "the writer never staged anything"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    # the next run clears the dead process's staging folder
    subprocess.run(
        [
            sys.executable,
            "-m",
            "sitemapkit",
            "write",
            str(small),
            "-o",
            str(out),
            "--base-url",
            BASE,
            "--max-urls",
            "3",
            "--gzip",
        ],
        check=True,
        capture_output=True,
    )
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".o.sitemapkit-")]


def test_a_local_index_brings_in_the_child_files_beside_it(tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.mkdir()
    (old / "a.xml").write_text(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{BASE}1</loc></url><url><loc>{BASE}2</loc></url></urlset>"
    )
    (old / "b.xml.gz").write_bytes(
        gzip.compress(
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>{BASE}3</loc></url><url><loc>{BASE}1</loc></url></urlset>".encode()
        )
    )
    children = ["a.xml", "b.xml.gz", "gone.xml", "index.xml", "a.xml"]  # a cycle, a repeat
    (old / "index.xml").write_text(
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + "".join(f"<sitemap><loc>{BASE}maps/{c}</loc></sitemap>" for c in children)
        + "</sitemapindex>"
    )
    code, _, err = cli(
        ["write", str(old / "index.xml"), "-o", str(tmp_path / "new"), "--base-url", BASE]
    )
    assert code == 0, err
    root = parse(tmp_path / "new" / "sitemap.xml")
    assert [e.text for e in root.iterfind("s:url/s:loc", NS)] == [
        BASE + "1",
        BASE + "2",
        BASE + "3",
    ]
    assert "1 of its 5 child sitemaps are not files beside it" in err
    assert f"{BASE}maps/gone.xml" in err


#: Runs ``sitemapkit ARGS...`` in a child process whose write stops, for good, at the first
#: progress report of the run (after a shard came back from a forked writer, the others
#: still at work): it tells the test how many worker processes it has, then reads a pipe
#: the test holds open and never writes to. So Ctrl-C always lands mid-run.
_HELD_WRITE = """
import os, sys
from sitemapkit.cli import main, write
ready, hold = int(sys.argv[1]), int(sys.argv[2])
real = write.write_inputs
def children():  # processes whose parent is this one, however they were started
    me, n = os.getpid(), 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                n += int(f.read().rsplit(")", 1)[1].split()[1]) == me
        except OSError:
            pass
    return n
def held(writer, inputs, *, progress=None, **options):
    def report(done):
        os.write(ready, b"%d\\n" % children())
        os.read(hold, 1)
    return real(writer, inputs, progress=report, **options)
write.write_inputs = held
main.main(sys.argv[3:])
"""


def test_ctrl_c_during_a_forked_write_ends_it_at_once_and_publishes_nothing(
    tmp_path: Path,
) -> None:
    src = tmp_path / "big.csv"  # over 16 MiB: two forked shard writers
    with src.open("w") as fh:
        fh.write("loc,lastmod,priority\n")
        for start in range(0, 400_000, 50_000):
            fh.write(
                "".join(
                    f"{BASE}p/{i}?a=1&b=k\u00fcche,2024-05-01T10:00:00Z,0.5\n"
                    for i in range(start, start + 50_000)
                )
            )
    out = tmp_path / "o"
    args = ["write", str(src), "-o", str(out), "--base-url", BASE, "--gzip", "--max-urls", "5000"]
    ready_r, ready_w = os.pipe()
    hold_r, hold_w = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", _HELD_WRITE, str(ready_w), str(hold_r), *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=(ready_w, hold_r),
            start_new_session=True,  # its own process group, signalled as a terminal would
        )
        os.close(ready_w)
        os.close(hold_r)
        with os.fdopen(ready_r, "rb") as ready:
            workers = ready.readline()  # blocks until the write is held mid-run
        assert workers == b"2\n", proc.communicate(timeout=20)[1]  # the forked path, both alive
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        os.close(hold_w)
    assert proc.returncode == 130, err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["big.csv"]  # no staging left
    with pytest.raises(ProcessLookupError):  # no worker left in its group
        os.killpg(proc.pid, 0)


#: What a plain write never needs: the HTML reader, the validator and its XSDs, the event
#: loop, SQLite and the robots.txt matcher (each tens of milliseconds of start-up).
_NOT_FOR_A_PLAIN_WRITE = {
    "lxml",
    "asyncio",
    "sqlite3",
    "protego",
    "sitemapkit.validation",
    "sitemapkit.io.sources.folder",
    "sitemapkit.writer.incremental",
}


def test_a_plain_write_imports_only_what_it_uses(tmp_path: Path) -> None:
    src = tmp_path / "u.csv"
    src.write_text("loc,lastmod\n" + "".join(f"{BASE}p{i},2024-01-02\n" for i in range(3)))
    code, _, modules = cli_modules(
        ["write", str(src), "-o", str(tmp_path / "o"), "--base-url", BASE, "--gzip"]
    )
    assert code == 0
    loaded = {m.split(".")[0] if not m.startswith("sitemapkit") else m for m in modules}
    assert not _NOT_FOR_A_PLAIN_WRITE & loaded
    assert (tmp_path / "o" / "sitemap.xml.gz").exists()


def test_the_lastmod_from_default_is_every_folder_source() -> None:
    from sitemapkit.cli.write import LASTMOD_DEFAULT
    from sitemapkit.io.sources.folder import LASTMOD_SOURCES

    assert ",".join(LASTMOD_SOURCES) == LASTMOD_DEFAULT
