"""cli: ``sitemapkit read``: print the records of sitemaps, files or whole sites."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterable, Iterator
from typing import IO

import click

from ..core.model import SitemapRef
from ..errors import SitemapError
from ..reader import ReadReport, SourcedRecord, read

_COLUMNS = ("kind", "loc", "lastmod", "changefreq", "priority", "images", "alternates", "source")


def _row(sr: SourcedRecord) -> list[str]:
    r = sr.record
    if isinstance(r, SitemapRef):
        return ["sitemap", r.loc, str(r.lastmod or ""), "", "", "", "", sr.source]
    return [
        "url",
        r.loc,
        str(r.lastmod or ""),
        r.changefreq or "",
        "" if r.priority is None else f"{r.priority:.1f}",
        " ".join(i.loc for i in r.images),
        " ".join(f"{a.hreflang}={a.href}" for a in r.alternates),
        sr.source,
    ]


def emit(records: Iterable[SourcedRecord], fmt: str, out: IO[bytes]) -> int:
    """Write records in ``fmt``; return how many were written."""
    n = 0
    buf: list[str] = []
    if fmt in ("csv", "tsv"):
        text = io.StringIO()
        w = csv.writer(text, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
        w.writerow(_COLUMNS)
        for sr in records:
            w.writerow(_row(sr))
            n += 1
            if n % 10_000 == 0:
                out.write(text.getvalue().encode())
                text.seek(0)
                text.truncate()
        out.write(text.getvalue().encode())
        return n
    for sr in records:
        r = sr.record
        if fmt == "urls":
            buf.append(r.loc)
        else:
            rec = r.to_record()
            rec["source"] = sr.source
            buf.append(json.dumps(rec, ensure_ascii=False))
        n += 1
        if len(buf) >= 10_000:
            out.write(("\n".join(buf) + "\n").encode())
            buf.clear()
    if buf:
        out.write(("\n".join(buf) + "\n").encode())
    return n


@click.command("read")
@click.argument("target")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "csv", "tsv", "urls", "tree"]),
    default="jsonl",
    show_default=True,
    help="Output: JSON lines (the shape `write` accepts), CSV, TSV, bare URLs, or the tree.",
)
@click.option("--no-follow", is_flag=True, help="List an index's sitemaps instead of reading them.")
@click.option("--published-at", metavar="URL", help="The URL of a local file (for relative locs).")
@click.option("--strict", is_flag=True, help="Stop at the first problem.")
def read_cmd(
    target: str, fmt: str, no_follow: bool, published_at: str | None, strict: bool
) -> None:
    """Print the entries of TARGET: a sitemap file (- for stdin), a sitemap URL, or a site.

    \b
    Examples:
      sitemapkit read sitemap.xml.gz --format urls
      sitemapkit read https://example.com/ --format jsonl > urls.jsonl
      sitemapkit read public/sitemap.xml --published-at https://example.com/sitemap.xml

    Exit codes: 0 read fully; 1 read with problems (findings on stderr, everything
    recoverable printed); 3 nothing could be read.
    """
    from .main import EXIT_INPUT, EXIT_UNREADABLE, report_error

    report = ReadReport()
    out = sys.stdout.buffer
    seen = 0

    def counted(items: Iterable[SourcedRecord]) -> Iterator[SourcedRecord]:
        nonlocal seen
        for item in items:
            seen += 1
            yield item

    try:
        records = counted(
            read(
                target,
                published_at=published_at,
                follow=not no_follow,
                strict=strict,
                report=report,
            )
        )
        if fmt == "tree":
            for _ in records:
                pass
            _print_tree(report, seen)
        else:
            emit(records, fmt, out)
            out.flush()
    except SitemapError as exc:
        # the error that stopped reading is usually the last finding too: say it once
        report.findings = [f for f in report.findings if not exc.message.startswith(f.message)]
        _print_findings(report)
        report_error(exc)
        sys.exit(EXIT_INPUT if seen else EXIT_UNREADABLE)
    _print_findings(report)
    # SM012 (a sitemap could not be fetched) is a warning in the catalogue, and so are
    # some reasons to skip an entry; for reading, both mean entries are missing.
    if report.errors or report.dropped or any(f.rule == "SM012" for f in report.findings):
        sys.exit(EXIT_INPUT if seen else EXIT_UNREADABLE)


def _print_tree(report: ReadReport, seen: int) -> None:
    """One line per sitemap, indented under its index: status, entries, bytes, time."""
    tree = report.tree
    if tree is None:  # a local file
        for s in report.sitemaps:
            click.echo(f"{s}  {seen:,} entries")
        return
    if tree.robots is not None:
        click.echo(f"{tree.robots.url}  robots.txt  HTTP {tree.robots.status}")
    depth: dict[str, int] = {}
    for st in tree.sitemaps:
        level = depth.get(st.parent, -1) + 1 if st.parent else 0
        depth[st.url] = level
        status = st.error or f"HTTP {st.status}"
        click.echo(
            f"{'  ' * level}{st.url}  {st.kind or '-'}  {status}  {st.entries:,} entries  "
            f"{st.bytes:,} bytes  {st.elapsed:.2f} s"
        )
    click.echo(
        f"{len(tree.sitemaps):,} sitemaps, {seen:,} entries"
        + (f", {len(tree.errors)} failed" if tree.errors else "")
    )


def _print_findings(report: ReadReport) -> None:
    for f in report.findings:
        click.echo(f"sitemapkit: {f}", err=True)


__all__ = ["emit", "read_cmd"]
