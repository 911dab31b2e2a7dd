"""Throughput of the Python API: ``SitemapWriter.add()`` of strings and of ``Url`` objects.

Usage: python bench/api.py [--urls N] [--runs R]

Prints the best of R runs in microseconds per URL (whole ``with`` block: building the
``Url``, adding it, closing and publishing), gzip on, as a web framework would call it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import tempfile
import time
from collections.abc import Callable

import sitemapkit as sk

BASE = "https://www.example.com/"
LASTMOD = dt.datetime(2024, 5, 1, 10, tzinfo=dt.UTC)


def cases(n: int) -> dict[str, Callable[[sk.SitemapWriter], None]]:
    def strings(w: sk.SitemapWriter) -> None:
        for i in range(n):
            w.add(f"{BASE}p/{i}?a=1&b=k\u00fcche")

    def objects(w: sk.SitemapWriter) -> None:
        for i in range(n):
            w.add(sk.Url(f"{BASE}p/{i}?a=1&b=2", lastmod=LASTMOD, changefreq="daily", priority=0.5))

    def text_dates(w: sk.SitemapWriter) -> None:
        for i in range(n):
            w.add(sk.Url(f"{BASE}p/{i}", lastmod="2024-05-01T10:00:00Z", priority="0.8"))

    return {
        "add(str), non-ASCII": strings,
        "add(Url(datetime))": objects,
        "add(Url(str lastmod))": text_dates,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--urls", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    for name, fill in cases(a.urls).items():
        best = float("inf")
        for _ in range(a.runs):
            out = tempfile.mkdtemp(prefix="skbench-")
            t = time.perf_counter()
            with sk.SitemapWriter(out + "/o", base_url=BASE, gzip=True) as w:
                fill(w)
            best = min(best, time.perf_counter() - t)
            shutil.rmtree(out, ignore_errors=True)
        print(f"{name:24s} {best / a.urls * 1e6:6.2f} us/URL ({a.urls:,} URLs, best of {a.runs})")


if __name__ == "__main__":
    main()
