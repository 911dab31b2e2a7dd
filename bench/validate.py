"""Validation speed and memory: one 50k-URL file against reading it, and a whole tree.

    .venv/bin/python bench/validate.py [--urls 1000000] [--runs 3]

1. Writes 50,000 URLs (sitemapkit write) and times ``sitemapkit read FILE --format urls``
   against ``sitemapkit validate FILE`` (every offline rule and the XSD); prints the ratio.
2. Writes ``--urls`` URLs as gzipped shards and an index, serves them on 127.0.0.1 and runs
   ``sitemapkit validate http://127.0.0.1:PORT/sitemap.xml`` on the tree; prints wall time
   and peak RSS (the largest of the processes, as ``time -v`` reports it).

Whole processes, medians of ``--runs``; run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import functools
import http.server
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
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
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
