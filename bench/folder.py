"""``sitemapkit write DIR`` on a generated built site: pages/s, wall time and peak RSS.

Usage: python bench/folder.py [--pages N] [--size BYTES] [--keep]

Builds N pages of about BYTES each (default 100,000 of 10 KB) in a temporary folder: a
head with a canonical, a description and (on most pages) an article:modified_time, a nav
of 40 links, paragraphs with links, three images (one in a <picture> with a srcset), one
page in a hundred noindex and one an error page; 1,000 pages a folder. Then runs the
command once, writing into the folder itself, and reports wall time, pages/s, the CPU
time of the command and its children, and the peak RSS: of the largest process and of
the whole process tree at once (sampled every 20 ms from /proc).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BASE = "https://www.example.com/"
_WORDS = [
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
]


def page(i: int, size: int) -> bytes:
    nav = "".join(f'<li><a href="/section-{j}/">Section {j}</a></li>' for j in range(40))
    head = (
        f'<meta charset="utf-8"><title>Page {i}</title>'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="description" content="Page {i} of the benchmark site">'
        f'<link rel="stylesheet" href="/css/site.css">'
        f'<link rel="canonical" href="{BASE}d{i // 1000}/p{i}.html">'
    )
    if i % 100 == 7:
        head += '<meta name="robots" content="noindex">'
    if i % 10:
        head += f'<meta property="article:modified_time" content="2024-{1 + i % 12:02d}-01">'
    images = (
        f'<img src="/img/{i}-a.jpg" alt="a" width="640" height="480">'
        f'<picture><source srcset="/img/{i}-800.webp 800w, /img/{i}-1600.webp 1600w">'
        f'<img src="/img/{i}-b.jpg" alt="b"></picture>'
        f'<img src="/pixel.gif" width="1" height="1">'
    )
    start = (
        f"<!DOCTYPE html><html lang=en><head>{head}</head><body><header><nav><ul>{nav}"
        f"</ul></nav></header><main><h1>Page {i}</h1>{images}"
    )
    end = "</main><footer>&copy; 2024 Example</footer></body></html>"
    body: list[str] = []
    n = len(start) + len(end)
    k = 0
    while n < size:
        words = " ".join(_WORDS[(i + k + j) % len(_WORDS)] for j in range(40))
        para = f'<p>{words} <a href="/d{k % 100}/p{(i * 7 + k) % 100_000}.html">more</a></p>'
        body.append(para)
        n += len(para)
        k += 1
    return (start + "".join(body) + end).encode()


def build(root: Path, pages: int, size: int) -> int:
    total = 0
    for i in range(pages):
        folder = root / f"d{i // 1000}"
        if i % 1000 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        data = page(i, size)
        (folder / ("404.html" if i == 5 else f"p{i}.html")).write_bytes(data)
        total += len(data)
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /d99/\n")
    return total


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and every process below it."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo.extend(children.get(p, ()))
    return total


class PeakRss:
    """The peak RSS of a process and its children, sampled every 20 ms while in a
    ``with`` block (``peak``, bytes)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak = pid, 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample)

    def _sample(self) -> None:
        while not self._done.wait(0.02):
            self.peak = max(self.peak, _tree_rss(self.pid))

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()


def run(root: Path) -> tuple[float, float, int, str]:
    exe = os.path.join(os.path.dirname(sys.executable), "sitemapkit")
    cmd = [exe, "write", str(root), "-o", str(root), "--base-url", BASE]
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with PeakRss(proc.pid) as rss:
        _, err = proc.communicate()
        wall = time.perf_counter() - t
    peak = rss.peak
    if proc.returncode:
        raise SystemExit(f"sitemapkit failed ({proc.returncode}): {err.decode()}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime
    largest = usage.ru_maxrss * 1024
    note = err.decode().strip().splitlines()
    return (
        wall,
        cpu,
        largest,
        (note[-1] if note else "") + f" | peak tree RSS {peak / 2**20:.1f} MiB",
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=100_000)
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--keep", action="store_true", help="keep the generated folder")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="skbench-site-"))
    try:
        t = time.perf_counter()
        total = build(root, args.pages, args.size)
        took = time.perf_counter() - t
        print(f"built {args.pages:,} pages, {total / 2**20:,.0f} MiB, in {took:.1f} s")
        wall, cpu, largest, note = run(root)
        print(note)
        print(
            f"{args.pages:,} pages in {wall:.2f} s: {args.pages / wall:,.0f} pages/s, "
            f"CPU {cpu:.1f} s, peak RSS {largest / 2**20:.1f} MiB (largest process), "
            f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
        )
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
