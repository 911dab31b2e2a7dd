"""cli: ``sitemapkit read``: print the records of sitemaps, files or whole sites."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import IO

import click

from .. import ReadReport, SitemapError, SitemapRef, Url
from ..reader import read_batches
from .status import EXIT_INPUT, EXIT_UNREADABLE, Exit

_FLUSH = 1 << 20
_COLUMNS = ("kind", "loc", "lastmod", "changefreq", "priority", "images", "alternates", "source")


def _row(r: Url | SitemapRef, source: str) -> list[str]:
    if isinstance(r, SitemapRef):
        return ["sitemap", r.loc, str(r.lastmod or ""), "", "", "", "", source]
    return [
        "url",
        r.loc,
        str(r.lastmod or ""),
        r.changefreq or "",
        "" if r.priority is None else f"{r.priority:.1f}",
        " ".join(i.loc for i in r.images),
        " ".join(f"{a.hreflang}={a.href}" for a in r.alternates),
        source,
    ]


def emit(
    batches: Iterable[tuple[str, Sequence[Url | SitemapRef]]], fmt: str, out: IO[bytes]
) -> int:
    """Write batches of records in ``fmt``; return how many records were written."""
    n = 0
    if fmt in ("csv", "tsv"):
        text = io.StringIO()
        w = csv.writer(text, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
        w.writerow(_COLUMNS)
        for source, records in batches:
            w.writerows(_row(r, source) for r in records)
            n += len(records)
            if text.tell() >= _FLUSH:
                out.write(text.getvalue().encode())
                text.seek(0)
                text.truncate()
        out.write(text.getvalue().encode())
        return n
    buf: list[str] = []
    size = 0
    for source, records in batches:
        if fmt == "urls":
            # a batch from a parser process carries its locs as one string
            loc_text: str | None = getattr(records, "loc_text", None)
            buf.append(loc_text if loc_text is not None else "\n".join(r.loc for r in records))
        else:
            tail = ", " + json.dumps("source", ensure_ascii=False) + ": "
            tail += json.dumps(source, ensure_ascii=False) + "}"
            buf.append("\n".join(_jsonl(r, tail) for r in records))
        n += len(records)
        size += len(records)
        if size >= 10_000:
            out.write(("\n".join(buf) + "\n").encode())
            buf.clear()
            size = 0
    if buf:
        out.write(("\n".join(buf) + "\n").encode())
    return n


def _jsonl(r: Url | SitemapRef, tail: str) -> str:
    """One JSON line: the record's fields in the shape `write` accepts, then its source."""
    return json.dumps(r.to_record(), ensure_ascii=False)[:-1] + tail


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
@click.option(
    "--offline", is_flag=True, help="Read local files only: children not beside an index are noted."
)
def read_cmd(
    target: str,
    fmt: str,
    no_follow: bool,
    published_at: str | None,
    strict: bool,
    offline: bool,
) -> None:
    """Print the entries of TARGET: a sitemap file (- for stdin), a robots.txt, a sitemap
    URL, or a site.

    An index's or robots.txt's sitemaps are read (a local one's from the files beside it,
    else fetched) unless --no-follow lists them.

    \b
    Examples:
      sitemapkit read sitemap.xml.gz --format urls
      sitemapkit read https://example.com/ --format jsonl > urls.jsonl
      sitemapkit read public/sitemap_index.xml --published-at https://example.com/sitemap_index.xml
      sitemapkit read robots.txt --published-at https://example.com/robots.txt --no-follow

    Exit codes: 0 read fully; 1 read with problems (findings on stderr, everything
    recoverable printed; a cycle of indexes is one); 3 nothing could be read (nothing
    found: the finding says what was tried).
    """
    report = ReadReport()
    out = sys.stdout.buffer
    seen = 0

    def counted(
        batches: Iterable[tuple[str, Sequence[Url | SitemapRef]]],
    ) -> Iterator[tuple[str, Sequence[Url | SitemapRef]]]:
        nonlocal seen
        for batch in batches:
            seen += len(batch[1])
            yield batch

    try:
        records = counted(
            read_batches(
                target,
                published_at=published_at,
                follow=not no_follow,
                strict=strict,
                offline=offline,
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
        raise Exit(EXIT_INPUT if seen else EXIT_UNREADABLE, exc) from None
    _print_findings(report)
    status = exit_status(report, seen)
    if status:
        raise Exit(status)


#: Findings about how documents link (a cycle, a child listed twice): every document was
#: read, so they never make a read "unreadable" (exit 3).
_LINKS = frozenset(["SM506", "SM507"])


def exit_status(report: ReadReport, seen: int) -> int:
    """The exit status of a read that yielded ``seen`` records: 0 read fully; 1 something
    dropped, not read whole or not fetched (errors, dropped entries, SM012); 3 nothing
    could be read (no record, and a failure to read or find one that is not a cycle)."""
    # SM012 (a sitemap could not be fetched, or none was found) is a warning in the
    # catalogue; for reading, it means entries are missing.
    lost = [f for f in report.findings if f.severity == "error" or f.rule == "SM012"]
    if not (lost or report.dropped):
        return 0
    if seen or report.dropped or all(f.rule in _LINKS for f in lost):
        return EXIT_INPUT
    return EXIT_UNREADABLE


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


__all__ = ["emit", "exit_status", "read_cmd"]
