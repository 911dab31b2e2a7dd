"""Validation speed and memory: one 50k-URL file against reading it, a set that is not
plain, and a whole tree.

    .venv/bin/python bench/validate.py [--urls 1000000] [--runs 3] [--only nonplain]
        [--other OTHER/.venv/bin/sitemapkit]

1. Writes 50,000 URLs (sitemapkit write) and times ``sitemapkit read FILE --format urls``
   against ``sitemapkit validate FILE`` (every offline rule and the XSD); prints the ratio.
2. The non-plain set of issue #15: 200,000 URLs in 4 files, every URL with an image,
   hreflang alternates on a tenth; ``read`` of the 4 files against ``validate`` of them,
   alternated run by run; wall and CPU time (the process and its children: the tree
   process; and the main process's alone, the reader's) and peak RSS. ``--other BIN``
   validates with a second build beside it (e.g. a worktree of the commit before), in the
   same alternation.
3. Writes ``--urls`` URLs as gzipped shards and an index, serves them on 127.0.0.1 and runs
   ``sitemapkit validate http://127.0.0.1:PORT/sitemap.xml`` on the tree; prints wall time
   and peak RSS (the largest of the processes, as ``time -v`` reports it).

Whole processes, medians of ``--runs``; run it on a quiet machine (else say the load:
the CPU times tell more than the wall times then).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BIN = Path(sys.executable).parent / "sitemapkit"
BASE = "https://www.example.com/"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def _urls(path: Path, n: int) -> None:
    with path.open("w") as fh:
        fh.write("loc,lastmod,changefreq,priority\n")
        for i in range(n):
            fh.write(
                f"{BASE}products/k\u00fcche/item-{i}?ref=a&b={i % 997},"
                f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T10:{i % 60:02d}:00+02:00,"
                f"weekly,0.{i % 10}\n"
            )


def _nonplain(path: Path, n: int) -> None:
    """Every URL with an image; a tenth in hreflang pairs (en, de) that name each other."""
    with path.open("w") as fh:
        fh.write("loc,lastmod,changefreq,priority,images,alternates\n")
        for i in range(n):
            loc = f"{BASE}products/k\u00fcche/item-{i}?ref=a&b={i % 997}"
            alt = ""
            if i % 20 < 2:
                j = i - i % 20
                alt = (
                    f"en={BASE}products/k\u00fcche/item-{j}?ref=a&b={j % 997} "
                    f"de={BASE}products/k\u00fcche/item-{j + 1}?ref=a&b={(j + 1) % 997}"
                )
            fh.write(
                f"{loc},2024-{1 + i % 12:02d}-{1 + i % 28:02d}T10:{i % 60:02d}:00+02:00,"
                f"weekly,0.{i % 10},{BASE}img/{i}.jpg,{alt}\n"
            )


#: Runs ``sitemapkit ARGS`` as its console script does, and writes the CPU seconds of this
#: process alone (not the children it waited for: the tree process) to the file $CPU_TO.
_OWN_CPU = """import atexit, os, resource, sys
def own():
    u = resource.getrusage(resource.RUSAGE_SELF)
    with open(os.environ["CPU_TO"], "w") as fh:
        fh.write(str(u.ru_utime + u.ru_stime))
atexit.register(own)
from sitemapkit.cli.main import main
sys.argv[0] = "sitemapkit"
main()
"""


def _timed(args: list[str]) -> tuple[float, float, int, float]:
    """Wall seconds, CPU seconds and peak RSS (KiB, the largest process) of one run: the
    process and the children it waited for (the tree process), as ``wait4`` tells; and the
    CPU seconds of the main process alone (the reader's)."""
    python = Path(args[0]).parent / "python"  # the console script's own interpreter
    with tempfile.NamedTemporaryFile("r") as own:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [str(python), "-c", _OWN_CPU, *args[1:]],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "CPU_TO": own.name},
        )
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0  # reaped here
        wall = time.perf_counter() - started
        main = float(own.read() or "nan")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, main


def nonplain_set(root: Path, runs: int, other: str | None) -> None:
    """Section 2 of the module's docstring."""
    src = root / "nonplain.csv"
    _nonplain(src, 200_000)
    out = root / "nonplain"
    subprocess.run(
        [BIN, "write", src, "-o", out, "--base-url", BASE, "--max-urls", "50000"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    files = [str(out / f"sitemap-{k}.xml") for k in range(1, 5)]
    cases = {"read": [str(BIN), "read", *files, "--format", "urls"]}
    cases["validate"] = [str(BIN), "validate", *files, "--format", "json"]
    if other is not None:
        cases["other"] = [other, "validate", *files, "--format", "json"]
    got: dict[str, list[tuple[float, float, int, float]]] = {k: [] for k in cases}
    loads = [os.getloadavg()[0]]
    for _ in range(runs):
        for name, args in cases.items():
            got[name].append(_timed(args))
        loads.append(os.getloadavg()[0])
    read = statistics.median(w for w, _, _, _ in got["read"])
    read_cpu = statistics.median(c for _, c, _, _ in got["read"])
    for name, results in got.items():
        wall = statistics.median(w for w, _, _, _ in results)
        cpu = statistics.median(c for _, c, _, _ in results)
        main = statistics.median(m for _, _, _, m in results)
        # the children's CPU (the tree process): each run's whole less its main process's
        tree = statistics.median(c - m for _, c, _, m in results)
        ratios = [v[0] / r[0] for v, r in zip(results, got["read"], strict=True)]
        print(
            f"non-plain 200k set (4 files), {name}: wall {wall:.2f} s ({wall / read:.2f}x read; "
            f"per run {statistics.median(ratios):.2f}x), CPU {cpu:.2f} s (main process "
            f"{main:.2f} s = {main / read_cpu:.2f}x read's CPU, children {tree:.2f} s), "
            f"peak RSS {max(r for _, _, r, _ in results) // 1024} MiB "
            f"(load {min(loads):.1f}-{max(loads):.1f})"
        )


def _run(args: list[str]) -> tuple[float, int]:
    """Wall seconds, and the peak RSS (KiB) of the largest process run so far: the runs
    go from the smallest to the largest, so it is this run's."""
    started = time.perf_counter()
    subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - started
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def _median(runs: int, args: list[str]) -> tuple[float, int]:
    results = [_run(args) for _ in range(runs)]
    return statistics.median(w for w, _ in results), max(r for _, r in results)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--urls", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", choices=["nonplain"], help="run only this section")
    ap.add_argument("--other", help="a second sitemapkit to validate with (section 2)")
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if opts.only == "nonplain":
            nonplain_set(root, opts.runs, opts.other)
            return
        one = root / "one.csv"
        _urls(one, 50_000)
        subprocess.run(
            [BIN, "write", one, "-o", root / "one", "--base-url", BASE],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        doc = str(root / "one" / "sitemap.xml")
        read, _ = _median(opts.runs, [str(BIN), "read", doc, "--format", "urls"])
        check, rss = _median(opts.runs, [str(BIN), "validate", doc, "--format", "json"])
        print(
            f"50k file: read {read:.2f} s, validate {check:.2f} s ({check / read:.2f}x), "
            f"validate peak RSS {rss // 1024} MiB"
        )

        nonplain_set(root, opts.runs, opts.other)

        many = root / "many.csv"
        _urls(many, opts.urls)
        site = root / "site"
        subprocess.run(
            [BIN, "write", many, "-o", site, "--base-url", BASE, "--gzip"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        handler = functools.partial(_Quiet, directory=str(site))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        port = server.server_address[1]
        index = site / "sitemap.xml"  # it names the shards under the served origin
        served = f"http://127.0.0.1:{port}/sitemap-"
        index.write_text(index.read_text().replace(BASE + "sitemap-", served))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            args = [
                str(BIN),
                "validate",
                f"http://127.0.0.1:{port}/sitemap.xml",
                "--allow-host",
                "www.example.com",
                "--format",
                "json",
            ]
            wall, rss = _median(1, args)
            print(
                f"{opts.urls:,}-URL tree over 127.0.0.1: validate {wall:.1f} s, "
                f"peak RSS {rss // 1024} MiB"
            )
        finally:
            server.shutdown()


if __name__ == "__main__":
    main()
