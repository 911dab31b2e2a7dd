"""Wall time and peak RSS of ``sitemapkit diff`` on two generated N-URL sitemap sets.

Both sets are written by ``sitemapkit write`` (the streaming ``SitemapWriter``; 20 shards of
50,000 URLs and an index per million) from generated CSV. The new set differs from the old
one in ``--changes`` rows of each kind: URLs removed, URLs added, and URLs whose lastmod
changed. The diff runs as a child process under ``/usr/bin/time -v`` (peak RSS of the largest
process), while the summed RSS of its process tree is sampled every 200 ms; it runs twice,
with and without ``--parallel``; the script checks the change counts it reports.

Usage: python bench/diff.py [--urls N] [--changes K] [--gzip] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator

BASE = "https://www.example.com/"
PAGE = os.sysconf("SC_PAGE_SIZE")


def rows(n: int, changes: int, *, new: bool) -> Iterator[str]:
    """CSV rows of one set; in the new one, every (n // changes)-th row of three kinds differs."""
    step = max(1, n // changes)
    yield "loc,lastmod,changefreq,priority\n"
    for i in range(n):
        lastmod = f"2024-05-{1 + i % 28:02d}"
        if new and i % step == 0 and i // step < changes:
            yield f"{BASE}added/{i},{lastmod},daily,0.5\n"  # replaces a removed one
            continue
        if new and i % step == 1 and i // step < changes:
            lastmod = "2024-06-30"
        yield f"{BASE}p/{i}?a=1&b=k%C3%BCche,{lastmod},daily,0.5\n"


def write_set(out: str, n: int, changes: int, *, new: bool, gzip: bool) -> float:
    """Write one set with ``sitemapkit write`` (the streaming SitemapWriter) from a pipe."""
    exe = os.path.join(os.path.dirname(sys.executable), "sitemapkit")
    cmd = [exe, "write", "-", "-o", out, "--base-url", BASE, *(["--gzip"] if gzip else [])]
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert proc.stdin is not None
    batch: list[str] = []
    for row in rows(n, changes, new=new):
        batch.append(row)
        if len(batch) >= 10_000:
            proc.stdin.write("".join(batch).encode())
            batch.clear()
    proc.stdin.write("".join(batch).encode())
    proc.stdin.close()
    if proc.wait() != 0:
        sys.exit(f"sitemapkit write failed with exit {proc.returncode}")
    return time.perf_counter() - t


def tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and its descendants now (Linux /proc)."""
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/statm") as fh:
                total += int(fh.read().split()[1]) * PAGE
            with open(f"/proc/{pid}/task/{pid}/children") as fh:
                todo.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError, IndexError):
            continue
    return total


def measure(
    old: str, new: str, out: str, extra: list[str]
) -> tuple[int, float, float, float, float, str]:
    """Run ``sitemapkit diff``; return exit code, wall s, CPU s (user + system, all
    processes), peak RSS of the largest process (``/usr/bin/time -v``) and peak summed RSS
    of the process tree (sampled), in MiB, and the summary line."""
    exe = os.path.join(os.path.dirname(sys.executable), "sitemapkit")
    cmd = ["/usr/bin/time", "-v", exe, "diff", old, new, "--format", "jsonl", *extra]
    peak = 0
    t = time.perf_counter()
    with open(out, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.PIPE)
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.wait(0.2):
                peak = max(peak, tree_rss(proc.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, err_bytes = proc.communicate()
        done.set()
        sampler.join()
    wall = time.perf_counter() - t
    err = err_bytes.decode()
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    rss = int(m.group(1)) / 1024 if m else float("nan")
    cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([0-9.]+)", err))
    summary = next((ln for ln in err.splitlines() if " added, " in ln), "(no summary)")
    return proc.returncode, wall, cpu, rss, peak / 2**20, summary  # the tree includes /usr/bin/time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--urls", type=int, default=1_000_000)
    ap.add_argument("--changes", type=int, default=1_000, help="rows of each kind that differ")
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--keep", help="write the sets here and keep them (default: a temp folder)")
    a = ap.parse_args()
    root = a.keep or tempfile.mkdtemp(prefix="skdiff-")
    old, new = os.path.join(root, "old"), os.path.join(root, "new")
    try:
        if not (a.keep and os.path.isdir(new)):
            t_old = write_set(old, a.urls, a.changes, new=False, gzip=a.gzip)
            t_new = write_set(new, a.urls, a.changes, new=True, gzip=a.gzip)
            print(f"wrote 2 x {a.urls:,} URLs (gzip={a.gzip}) in {t_old:.1f} s + {t_new:.1f} s")
        expect = f"{a.changes:,} added, {a.changes:,} removed, {a.changes:,} changed"
        for label, extra in (("parallel", []), ("one process", ["--no-parallel"])):
            code, wall, cpu, rss, tree, summary = measure(
                old, new, os.path.join(root, "c.jsonl"), extra
            )
            print(
                f"sitemapkit diff ({label}): exit {code}, wall {wall:.1f} s, CPU {cpu:.1f} s, "
                f"peak RSS {rss:.1f} MiB (largest process), {tree:.1f} MiB (process tree, "
                "sampled)"
            )
            print("  " + summary)
            if expect not in summary:
                sys.exit(f"unexpected result; wanted {expect!r}")
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
