"""``sitemapkit crawl`` beside Scrapy on a generated site served on 127.0.0.1.

Usage: python bench/crawl.py [--pages N] [--rounds R] [--scrapy PYTHON] [--only ours|scrapy]

Serves N pages (default 20,000) of about 10 KB from a separate process (an asyncio
server answering from memory, keep-alive, so that the server costs little): a nav of 20
links, 12 links into the rest of the site, a paragraph text; one page in 50 noindex, one
in 50 with a canonical elsewhere, one in 100 a redirect and one in 100 a 404. Then crawls
it in alternating rounds with ``sitemapkit crawl URL -o DIR`` and with a Scrapy
CrawlSpider (a LinkExtractor, every response's URL collected; the same concurrency: 8,
4 a host; robots.txt obeyed) and reports, per tool, the medians of pages/s, wall time,
CPU time (the process and its children: above 100 % is more than one core), peak RSS
of the process tree (sampled every 20 ms from /proc) and the pages each reached, with
the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from folder import PeakRss

_FILL = (
    "<p>"
    + " ".join(["lorem ipsum dolor sit amet consectetur adipiscing elit sed do"] * 12)
    + "</p>"
)
_NAV = "".join(f'<li><a href="/p{j}.html">Section {j}</a></li>' for j in range(20))


def page(i: int, n: int) -> bytes:
    """The HTML of page ``i`` of ``n`` (about 10 KB)."""
    head = f'<meta charset="utf-8"><title>Page {i}</title>'
    if i % 50 == 3:
        head += '<meta name="robots" content="noindex">'
    if i % 50 == 7:
        head += f'<link rel="canonical" href="/p{i - 1}.html">'
    # two children each (every page is reached), and ten pages across the site
    links = [2 * i + 1, 2 * i + 2, *((i * 31 + k * 977) % n for k in range(10))]
    body = "".join(f'<a href="/p{j}.html">page {j}</a> ' for j in links if j < n)
    text = _FILL * 10
    return (
        f"<!doctype html><html><head>{head}</head><body><nav><ul>{_NAV}</ul></nav>"
        f"<main><h1>Page {i}</h1>{body}{text}</main></body></html>"
    ).encode()


def answer(path: bytes, n: int) -> bytes:
    status, headers, body = "200 OK", "Content-Type: text/html; charset=utf-8\r\n", b""
    name = path.split(b"?", 1)[0].decode("ascii", "replace")
    if name == "/robots.txt":
        headers, body = "Content-Type: text/plain\r\n", b"User-agent: *\nAllow: /\n"
    elif name == "/":
        body = page(0, n)
    elif name.startswith(("/p", "/r")) and name.endswith(".html") and name[2:-5].isdigit():
        i = int(name[2:-5])
        if i >= n:
            status, body = "404 Not Found", b"not found"
        elif name[1] == "p" and i % 100 == 11:
            status, headers = "301 Moved Permanently", f"Location: /r{i}.html\r\n"
        elif i % 100 == 13:
            status, body = "404 Not Found", b"not found"
        else:
            body = page(i, n)
    else:
        status, body = "404 Not Found", b"not found"
    head = f"HTTP/1.1 {status}\r\n{headers}Content-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


class _Http(asyncio.Protocol):
    def __init__(self, n: int) -> None:
        self.n = n
        self.buf = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while b"\r\n\r\n" in self.buf:
            head, _, self.buf = self.buf.partition(b"\r\n\r\n")
            parts = head.split(b"\r\n", 1)[0].split(b" ")
            self.transport.write(answer(parts[1] if len(parts) > 1 else b"/", self.n))  # type: ignore[attr-defined]


def serve(n: int, port_file: str) -> None:
    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(
            lambda: _Http(n), "127.0.0.1", 0, backlog=512
        )
        Path(port_file).write_text(str(server.sockets[0].getsockname()[1]))
        await server.serve_forever()

    asyncio.run(main())


SPIDER = textwrap.dedent(
    """
    import sys
    from scrapy.linkextractors import LinkExtractor
    from scrapy.spiders import CrawlSpider, Rule

    class Site(CrawlSpider):
        name = "site"
        rules = (Rule(LinkExtractor(), callback="parse_item", follow=True),)
        custom_settings = {
            "CONCURRENT_REQUESTS": 8,
            "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
            "ROBOTSTXT_OBEY": True,
            "LOG_LEVEL": "ERROR",
            "TELNETCONSOLE_ENABLED": False,
            "HTTPERROR_ALLOW_ALL": True,
        }
        pages = 0

        def __init__(self, start, **kw):
            self.start_urls = [start]
            self.allowed_domains = ["127.0.0.1"]
            super().__init__(**kw)

        def parse_start_url(self, response):
            return self.parse_item(response)

        def parse_item(self, response):
            Site.pages += 1
            yield {"url": response.url}

        def closed(self, reason):
            sys.stderr.write(f"SCRAPY_PAGES {Site.pages}\\n")
    """
)


def measure(cmd: list[str]) -> tuple[float, float, int, str]:
    """Wall and CPU seconds (with children), peak tree RSS and stderr of ``cmd``."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    with PeakRss(proc.pid) as rss:
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, code, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    peak = rss.peak
    if code:
        raise SystemExit(f"{cmd[0]} failed ({code}): {err.decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, peak, err.decode()


def ours(url: str, out: Path) -> tuple[float, float, int, int]:
    exe = os.path.join(os.path.dirname(sys.executable), "sitemapkit")
    wall, cpu, peak, err = measure([exe, "crawl", url, "-o", str(out), "--max-pages", "1000000"])
    requests = int(err.split(" requests, ", 1)[0].rsplit(" ", 1)[1].replace(",", ""))
    return wall, cpu, peak, requests


def scrapy(python: str, url: str, spider: Path) -> tuple[float, float, int, int]:
    wall, cpu, peak, err = measure(
        [python, "-m", "scrapy", "runspider", str(spider), "-a", f"start={url}"]
    )
    pages = int(err.split("SCRAPY_PAGES ", 1)[1].split()[0])
    return wall, cpu, peak, pages


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scrapy", default="/tmp/bench/.venv/bin/python")
    ap.add_argument("--only", choices=["ours", "scrapy"])
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="skbench-crawl-"))
    port_file = work / "port"
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve-now", str(args.pages), str(port_file)]
    )
    try:
        while not port_file.exists() or not port_file.read_text():
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port_file.read_text()}/"
        spider = work / "spider.py"
        spider.write_text(SPIDER)
        tools = [t for t in ("ours", "scrapy") if args.only in (None, t)]
        runs: dict[str, list[tuple[float, float, int, int]]] = {t: [] for t in tools}
        for r in range(args.rounds):
            for tool in tools:
                shutil.rmtree(work / "out", ignore_errors=True)
                if tool == "ours":
                    got = ours(url, work / "out")
                else:
                    got = scrapy(args.scrapy, url, spider)
                runs[tool].append(got)
                wall, cpu, peak, pages = got
                print(
                    f"round {r + 1} {tool:6}: {pages:,} pages in {wall:.1f} s, "
                    f"{pages / wall:,.0f} pages/s, CPU {100 * cpu / wall:.0f} %, "
                    f"peak RSS {peak / 2**20:.0f} MiB, load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        rates = {}
        for tool, got in runs.items():
            rates[tool] = statistics.median(p / w for w, _, _, p in got)
            print(
                f"median {tool:6}: {rates[tool]:,.0f} pages/s, "
                f"wall {statistics.median(w for w, _, _, _ in got):.1f} s, "
                f"CPU {statistics.median(100 * c / w for w, c, _, _ in got):.0f} %, "
                f"peak RSS {statistics.median(m for _, _, m, _ in got) / 2**20:.0f} MiB"
            )
        if len(rates) == 2:
            print(f"ratio ours/scrapy: {rates['ours'] / rates['scrapy']:.2f}x")
        print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--serve-now":
        serve(int(sys.argv[2]), sys.argv[3])
    else:
        main()
