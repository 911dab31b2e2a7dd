"""The hostile-server drills of issue #16 §4, full size: does every read end, and say why?

    .venv/bin/python bench/hostile.py [--only NAME ...] [--timeout 120] [--base SRC]

Each drill starts the one loopback test server (``tests/site.py``) in this process, runs
``sitemapkit read http://127.0.0.1:PORT/... --format urls`` against it under a wall-clock
limit (``--timeout``, the issue's ``timeout 120``; ``cut`` in the exit column when it was
reached), and prints per drill: wall time, peak RSS of the command, its exit code, the
records it printed and the findings it said (rule ids with counts, and the last message
said). ``--base SRC`` runs another source tree's sitemapkit (``PYTHONPATH=SRC``, e.g. an
unpacked ``git archive b1a1d62 src``), for the figures before a change. The suite runs short
versions of the same servers (``tests/io/test_hostile.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.site import (  # noqa: E402 - the test server lives beside the tests
    Handle,
    Reply,
    Request,
    Site,
    endless_gzip,
    robots,
    sitemap_index,
)

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
Drill = Callable[[Site], str]  # sets the routes up; returns the target's path


def urlset(*locs: str) -> bytes:
    rows = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{NS}">{rows}</urlset>'.encode()


def _leaf(r: Request) -> Reply:
    return Reply(body=urlset(f"https://example.com{r.path}"))


#: One route for every child: a sitemap of one URL, named after its path.
LEAF = Handle(_leaf)


def bomb() -> Iterator[bytes]:
    """An endless gzip stream of spaces inside a urlset: ~1,000:1."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    yield z.compress(f'<?xml version="1.0"?><urlset xmlns="{NS}">'.encode())
    block = b" " * (1 << 20)
    while True:
        yield z.compress(block) + z.flush(zlib.Z_SYNC_FLUSH)


# -- the drills -------------------------------------------------------------------------------


def gzip_bomb_file(site: Site) -> str:
    site["/bomb.xml.gz"] = Reply(headers={"Content-Type": "application/gzip"}, stream=bomb)
    return "/bomb.xml.gz"


def gzip_bomb_encoding(site: Site) -> str:
    site["/bomb.xml"] = Reply(
        headers={"Content-Type": "application/xml", "Content-Encoding": "gzip"}, stream=bomb
    )
    return "/bomb.xml"


def redirect_loop(site: Site) -> str:
    site["/a.xml"] = Reply(302, headers={"Location": "/b.xml"})
    site["/b.xml"] = Reply(302, headers={"Location": "/a.xml"})
    return "/a.xml"


def redirect_chain_of_6(site: Site) -> str:
    for i in range(6):
        site[f"/r{i}.xml"] = Reply(302, headers={"Location": f"/r{i + 1}.xml"})
    site["/r6.xml"] = urlset("https://example.com/end")
    return "/r0.xml"


def connection_reset(site: Site) -> str:
    site["/reset.xml"] = Reply(reset=True)
    return "/reset.xml"


def headers_trickled(site: Site) -> str:
    site["/t.xml"] = Reply(body=urlset("https://example.com/a"), head_trickle=1.0)
    return "/t.xml"


def body_trickled(site: Site) -> str:
    site["/t.xml"] = Reply(body=urlset("https://example.com/a"), trickle=1.0)
    return "/t.xml"


def robots_10000(site: Site) -> str:
    for i in range(10_000):
        site[f"/s{i}.xml"] = LEAF
    site["/robots.txt"] = robots(*(site.url(f"/s{i}.xml") for i in range(10_000)))
    return "/"


def index_self_and_100000(site: Site) -> str:
    for i in range(100_000):
        site[f"/c{i}.xml"] = LEAF
    children = [site.url("/index.xml"), *(site.url(f"/c{i}.xml") for i in range(100_000))]
    site["/index.xml"] = sitemap_index(children)
    return "/index.xml"


def index_of_10500(site: Site) -> str:
    for i in range(10_500):
        site[f"/c{i}.xml"] = LEAF
    site["/index.xml"] = sitemap_index(site.url(f"/c{i}.xml") for i in range(10_500))
    return "/index.xml"


def endless_nesting(site: Site) -> str:
    def nest(r: Request) -> Reply:
        level = int(r.path.rsplit("/", 1)[-1].split(".")[0])
        children = [site.url(f"/u/{level}.xml"), site.url(f"/n/{level + 1}.xml")]
        return Reply(body=sitemap_index(children))

    for level in range(10_000):
        site[f"/n/{level}.xml"] = Handle(nest)
        site[f"/u/{level}.xml"] = LEAF
    return "/n/0.xml"


def endless_gzip_urls(site: Site) -> str:
    site["/g.xml.gz"] = Reply(
        headers={"Content-Type": "application/gzip"}, stream=endless_gzip("https://example.com/p/")
    )
    return "/g.xml.gz"


DRILLS: dict[str, Drill] = {
    "gzip-bomb-file": gzip_bomb_file,
    "gzip-bomb-encoding": gzip_bomb_encoding,
    "redirect-loop": redirect_loop,
    "redirect-chain-6": redirect_chain_of_6,
    "connection-reset": connection_reset,
    "headers-trickled": headers_trickled,
    "body-trickled": body_trickled,
    "robots-10000": robots_10000,
    "index-self-100000": index_self_and_100000,
    "index-10500": index_of_10500,
    "endless-nesting": endless_nesting,
    "endless-gzip": endless_gzip_urls,
}


# -- running one ------------------------------------------------------------------------------


def run(
    command: list[str], env: dict[str, str], limit: float
) -> tuple[float, int | None, int | None, int, str]:
    """Wall seconds, peak RSS (KiB), exit code (``None``: stopped at ``limit``), lines
    printed and stderr of one command; stdout is counted as it streams, never kept.

    The peak RSS is measured by ``/usr/bin/time``: a process forked from this one (whose
    routes hold tens of MiB) would count this process's size as its own. At ``limit`` the
    command gets SIGINT (``time`` ignores it and still reports), then SIGKILL.
    """
    started = time.perf_counter()
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss_file:
        timed = ["/usr/bin/time", "-f", "%M", "-o", rss_file.name, *command]
        proc = subprocess.Popen(
            timed, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True
        )
        assert proc.stdout is not None and proc.stderr is not None
        stderr = proc.stderr
        err: list[bytes] = []
        reader = threading.Thread(target=lambda: err.append(stderr.read()), daemon=True)
        reader.start()
        stopped = threading.Event()

        def stop() -> None:
            stopped.set()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGINT)
                time.sleep(5)
                os.killpg(proc.pid, signal.SIGKILL)

        killer = threading.Timer(limit, stop)
        killer.start()
        lines = 0
        while chunk := proc.stdout.read(1 << 16):
            lines += chunk.count(b"\n")
        proc.wait()
        killer.cancel()
        reader.join()
        wall = time.perf_counter() - started
        text = rss_file.read().split()
    rss = int(text[-1]) if text and text[-1].isdigit() else None
    code = None if stopped.is_set() else proc.returncode
    message = b"".join(err).decode(errors="replace")
    return wall, rss, code, lines, message


_RULE = re.compile(r": ((?:SM|RB)\d{3}) (?:error|warning): (.*)")


def summary(stderr: str) -> tuple[str, str]:
    """Rule ids with counts, and the last message said (the budget's, usually)."""
    found = [m.groups() for m in map(_RULE.search, stderr.splitlines()) if m]
    counts = Counter(rule for rule, _ in found)
    rules = ", ".join(f"{rule}×{n}" if n > 1 else rule for rule, n in counts.items())
    first = found[-1][1] if found else ""
    if not found and stderr.strip():
        first = stderr.strip().splitlines()[-1]
    return rules or "-", first


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", choices=list(DRILLS), default=list(DRILLS))
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--base", help="run the sitemapkit of this source folder (PYTHONPATH)")
    ap.add_argument("--width", type=int, default=150, help="characters of the finding shown")
    ap.add_argument("args", nargs="*", help="more arguments to sitemapkit read")
    a = ap.parse_args()
    env = dict(os.environ)
    if a.base:
        env["PYTHONPATH"] = str(Path(a.base).resolve())
    print(f"{'drill':20s} {'wall':>7s} {'RSS':>8s} {'exit':>5s} {'records':>9s}  findings")
    for name in a.only:
        with Site() as site:
            target = site.url(DRILLS[name](site))
            command = [sys.executable, "-m", "sitemapkit", "read", target, "--format", "urls"]
            wall, rss, code, lines, err = run([*command, *a.args], env, a.timeout)
        rules, first = summary(err)
        shown = "cut" if code is None else str(code)
        memory = "?" if rss is None else f"{rss / 1024:.0f}Mi"
        print(f"{name:20s} {wall:6.1f}s {memory:>8s} {shown:>5s} {lines:9,d}  {rules}")
        if first:
            print(f"{'':20s}   {first[: a.width]}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
