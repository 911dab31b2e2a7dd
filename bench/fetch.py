"""Small sitemaps over 127.0.0.1 (issue #15): how many a second, and how long one takes.

    .venv/bin/python bench/fetch.py [--base SRC] [--runs 3] [--sitemaps 10000]

The loopback test server (``tests/site.py``, with ``bench/hostile.py``'s drill of a
robots.txt listing N one-URL sitemaps, and ``/small.xml``) runs in a process of its own;
first it is measured alone with a trivial keep-alive client (two connections, as the
reader's per-host limit), so that the figures below are the reader's, not the server's.
Then, alternating between this tree and ``--base SRC`` (another source folder, e.g. a
``git worktree`` of main's commit, run with ``PYTHONPATH=SRC``) ``--runs`` times:

* ``robots``: ``sitemapkit read http://127.0.0.1:PORT/ --format urls`` of the N sitemaps,
  default options: wall seconds, sitemaps a second, CPU seconds of the command;
* ``one``: ``sitemapkit read http://127.0.0.1:PORT/small.xml`` as a whole process;
* ``api``: ``sitemapkit.read(url)`` of ``/small.xml`` repeated in one process (the
  median of 50 reads after one).

Medians per tree, and the load average (``os.getloadavg()``) before each run.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_SERVE = """
import sys
sys.path[:0] = [{root!r}, {bench!r}]
from tests.site import Site
import hostile
site = Site()
for i in range({n}):
    site[f"/s{{i}}.xml"] = hostile.LEAF
site["/robots.txt"] = hostile.robots(*(site.url(f"/s{{i}}.xml") for i in range({n})))
site["/small.xml"] = hostile.urlset("https://example.com/a")
print(site.base, flush=True)
sys.stdin.read()
"""

_API = """
import statistics, sys, time
import sitemapkit
url = sys.argv[1]
def once():
    started = time.perf_counter()
    assert [r.record.loc for r in sitemapkit.read(url)] == ["https://example.com/a"]
    return time.perf_counter() - started
once()
print(statistics.median(once() for _ in range(50)))
"""


def serve(n: int) -> tuple[subprocess.Popen[str], str]:
    code = _SERVE.format(root=str(ROOT), bench=str(ROOT / "bench"), n=n)
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def server_alone(base: str, n: int, connections: int = 2) -> float:
    """Requests a second the server answers to a trivial keep-alive client."""
    host, port = base.rsplit("/", 1)[-1].split(":")

    def client(k: int) -> None:
        with socket.create_connection((host, int(port))) as s:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            f = s.makefile("rb")
            for i in range(k, n, connections):
                s.sendall(f"GET /s{i}.xml HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
                length = 0
                while (line := f.readline()) not in (b"\r\n", b""):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                f.read(length)

    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return n / (time.perf_counter() - started)


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float, int, bytes]:
    """Wall seconds, CPU seconds (user + system, the command and its children), exit code
    and stdout of one command."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", help="also run the sitemapkit of this source folder")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sitemaps", type=int, default=10_000)
    a = ap.parse_args()
    trees = {"this": dict(os.environ)}
    if a.base:
        trees["base"] = {**os.environ, "PYTHONPATH": str(Path(a.base).resolve())}
    server, base = serve(a.sitemaps)
    try:
        print(f"server alone: {server_alone(base, a.sitemaps):,.0f} requests/s (2 connections)")
        read = [sys.executable, "-m", "sitemapkit", "read"]
        rows: dict[tuple[str, str], list[tuple[float, ...]]] = {}
        for run in range(a.runs):
            for name, env in trees.items():
                load = os.getloadavg()[0]
                wall, cpu, code, out = timed([*read, base + "/", "--format", "urls"], env)
                assert code == 0 and out.count(b"\n") == a.sitemaps, (code, out[-200:])
                rows.setdefault((name, "robots"), []).append((wall, cpu, load))
                wall, cpu, code, out = timed([*read, base + "/small.xml"], env)
                assert code == 0 and b"https://example.com/a" in out
                rows.setdefault((name, "one"), []).append((wall, cpu, load))
                _, _, code, out = timed([sys.executable, "-c", _API, base + "/small.xml"], env)
                assert code == 0, out
                rows.setdefault((name, "api"), []).append((float(out), 0.0, load))
                print(f"run {run + 1} {name}: load {load:.1f}", file=sys.stderr)
        print(f"{'tree':6s} {'case':7s} {'median':>10s} {'rate':>10s} {'CPU':>7s}  load, each run")
        for (name, case), values in rows.items():
            wall = statistics.median(v[0] for v in values)
            cpu = statistics.median(v[1] for v in values)
            loads = ", ".join(f"{v[2]:.1f}" for v in values)
            each = ", ".join(f"{v[0]:.3g}" for v in values)
            if case == "robots":
                rate = f"{a.sitemaps / wall:,.0f}/s"
                print(f"{name:6s} {case:7s} {wall:9.2f}s {rate:>10s} {cpu:6.2f}s  {loads} ({each})")
            else:
                ms = f"{wall * 1000:8.1f}ms"
                shown = f"{cpu:6.2f}s" if case == "one" else "      -"
                print(f"{name:6s} {case:7s} {ms:>10s} {'':>10s} {shown}  {loads} ({each})")
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait()


if __name__ == "__main__":
    main()
