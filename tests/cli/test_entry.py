"""The console entry point (``console()``: the ``sitemapkit`` script and ``python -m
sitemapkit``) ends the process without the interpreter's teardown: what the command wrote
must still all arrive, the exit handlers still run, a thread still running is waited for,
and an output that cannot be written is an error, not status 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TextIO

from ..conftest import urlset

BASE = "https://example.com/"

N = 50_000  # lines: far more than a pipe's and a buffered stream's buffers hold


def _sitemap(tmp_path: Path) -> Path:
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset(*(f"<url><loc>{BASE}p/{i}</loc></url>" for i in range(N))))
    return path


def _console(
    prelude: str, *args: str, stdout: int | TextIO = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    code = (
        f"import sys\n{prelude}\nsys.argv = ['sitemapkit', *{list(args)!r}]\n"
        "from sitemapkit.cli.main import console\nconsole()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        # buffered standard streams, as by default (this suite may run with them unbuffered)
        env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},
    )


def test_every_line_arrives_and_the_status_is_the_commands(tmp_path: Path) -> None:
    src = _sitemap(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "sitemapkit", "read", str(src), "--format", "urls"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"{BASE}p/{i}" for i in range(N)]
    bad = tmp_path / "bad.txt"
    bad.write_text(f"{BASE}a\nhttps://other.example/x\n")
    out = tmp_path / "o"
    failed = subprocess.run(
        [sys.executable, "-m", "sitemapkit", "write", str(bad), "-o", str(out), "--base-url", BASE],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert failed.returncode == 1
    assert "sitemapkit: error:" in failed.stderr and f"(at {bad}:2)" in failed.stderr
    assert not out.exists()


def test_exit_handlers_run(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    prelude = (
        "import atexit, pathlib\n"
        f"atexit.register(pathlib.Path({str(mark)!r}).write_text, 'handler ran')"
    )
    done = _console(prelude, "read", str(_sitemap(tmp_path)), "--format", "urls")
    assert done.returncode == 0, done.stderr
    assert mark.read_text() == "handler ran"


def test_a_thread_still_running_is_waited_for(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    prelude = (
        "import pathlib, threading, time\n"
        "def late():\n"
        "    time.sleep(0.5)\n"
        f"    pathlib.Path({str(mark)!r}).write_text('thread ended')\n"
        "threading.Thread(target=late).start()"
    )
    done = _console(prelude, "read", str(_sitemap(tmp_path)), "--format", "urls")
    assert done.returncode == 0, done.stderr
    assert mark.read_text() == "thread ended"


def test_an_output_that_cannot_be_written_is_an_error(tmp_path: Path) -> None:
    """What still sits in the stream's buffer at the end is flushed before the process
    ends, and a flush that fails is reported (skipped, it would be lost silently)."""
    empty = tmp_path / "empty.xml"
    empty.write_text(urlset())  # read prints nothing for it
    prelude = "sys.stdout.write('pending')"
    with open(os.devnull, "w") as null:
        done = _console(prelude, "read", str(empty), "--format", "urls", stdout=null)
    assert done.returncode == 0, done.stderr
    with open("/dev/full", "w") as full:
        done = _console(prelude, "read", str(empty), "--format", "urls", stdout=full)
    assert done.returncode == 1
    assert "sitemapkit: error: could not write standard output: No space left" in done.stderr
    assert "Traceback" not in done.stderr
    # a command that failed itself keeps its own status (3: could not read)
    with open("/dev/full", "w") as full:
        missing = str(tmp_path / "missing.xml")
        done = _console(prelude, "read", missing, "--format", "urls", stdout=full)
    assert done.returncode == 3, done.stderr
    assert "could not write standard output" in done.stderr


def test_a_reader_that_goes_away_ends_the_command_with_status_0(tmp_path: Path) -> None:
    """``sitemapkit read ... | head -1``: the command stops, says nothing and exits 0 (under
    ``set -o pipefail`` any other status fails the pipeline)."""
    args = ["read", str(_sitemap(tmp_path)), "--format", "urls"]
    for entry in (["-m", "sitemapkit"], ["-c", "from sitemapkit.cli.main import main; main()"]):
        proc = subprocess.Popen(
            [sys.executable, *entry, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline().decode().startswith(BASE)
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 0, err
        assert err == ""


def test_a_fetch_does_not_import_the_http_clients_own_command_line(tmp_path: Path) -> None:
    """httpx imports its command-line client (click, rich, pygments) when they are
    installed; the console entry keeps that out of a run that fetches (30-40 ms)."""
    from ..site import Site

    dump = tmp_path / "modules"
    prelude = (
        "import atexit, pathlib\n"
        f"atexit.register(lambda: pathlib.Path({str(dump)!r}).write_text("
        "'\\n'.join(sorted(n for n, m in sys.modules.items() if m is not None))))"
    )
    with Site() as site:
        site["/sitemap.xml"] = urlset(f"<url><loc>{BASE}a</loc></url>").encode()
        done = _console(prelude, "read", site.url("/sitemap.xml"), "--format", "urls")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{BASE}a\n"
    modules = dump.read_text().split()
    assert "httpx" in modules and "httpx._client" in modules  # it fetched with httpx
    assert "httpx._main" not in modules and "rich" not in modules


def test_a_full_device_under_the_output_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    """``read ... > /dev/full``: the write fails inside the command (click flushes each
    line); the error says what failed, the status is not 0."""
    with open("/dev/full", "w") as full:
        for entry in (["-m", "sitemapkit"], ["-c", "from sitemapkit.cli.main import main; main()"]):
            done = subprocess.run(
                [sys.executable, *entry, "read", str(_sitemap(tmp_path)), "--format", "urls"],
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                timeout=60,
            )
            assert done.returncode == 1, done.stderr
            assert done.stderr.startswith(
                "sitemapkit: error: could not write standard output: No space left on device\n"
            )
            assert "Traceback" not in done.stderr
