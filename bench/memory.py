"""Peak RSS of ``sitemapkit write`` for N generated URLs, from a pipe or from a file.

Usage: python bench/memory.py [--urls N ...] [--gzip] [--file]

From a pipe the rows go through the in-process path; with ``--file`` the input is first
written to a temporary CSV file, which takes the forked path (two shard writers).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def feed(n: int, sink) -> None:  # type: ignore[no-untyped-def]
    batch = 10_000
    for start in range(0, n, batch):
        rows = "".join(
            f"https://www.example.com/p/{i}?a=1&b=k\u00fcche,2024-05-{1 + i % 28:02d}T10:00:00Z,"
            f"daily,0.5\n"
            for i in range(start, min(n, start + batch))
        )
        sink.write(rows.encode())


def run(n: int, gzip: bool, from_file: bool) -> None:
    out = tempfile.mkdtemp(prefix="skbench-")
    src = os.path.join(out, "urls.csv") if from_file else "-"
    if from_file:
        with open(src, "wb") as fh:
            fh.write(b"loc,lastmod,changefreq,priority\n")
            feed(n, fh)
    cmd = [
        "/usr/bin/time",
        "-v",
        os.path.join(os.path.dirname(sys.executable), "sitemapkit"),
        "write",
        src,
        "-o",
        os.path.join(out, "o"),
        "--base-url",
        "https://www.example.com/",
    ]
    if gzip:
        cmd.append("--gzip")
    t = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL if from_file else subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    if not from_file:
        assert proc.stdin is not None
        proc.stdin.write(b"loc,lastmod,changefreq,priority\n")
        feed(n, proc.stdin)
        proc.stdin.close()
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.wait()
    wall = time.perf_counter() - t
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    rss = int(m.group(1)) / 1024 if m else float("nan")
    how = "from a file" if from_file else "from a pipe, incl. generating the input"
    print(
        f"{n:>11,} URLs gzip={gzip}: exit {proc.returncode}, wall {wall:6.1f} s "
        f"({how}), peak RSS {rss:6.1f} MiB"
    )
    shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--urls", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--file", action="store_true", help="write the input to a file first")
    a = ap.parse_args()
    for n in a.urls:
        run(n, a.gzip, a.file)


if __name__ == "__main__":
    main()
