"""cli: ``sitemapkit diff OLD NEW``: URLs added, removed and changed between two sets."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterable
from typing import IO, Any

import click

from .. import Change, Diff, ReadReport, SitemapError, diff
from ..io.extsort import DEFAULT_MAX_BYTES
from . import option
from .status import EXIT_UNREADABLE, Exit

__all__ = ["diff_cmd", "write_changes"]

#: "different" is this command's status 1, so every failure to read is 3
EXIT_DIFFERENT = 1
_CSV_COLUMNS = ("change", "loc", "fields", "old_lastmod", "new_lastmod", "old", "new")
_MARK = {"added": "+", "removed": "-", "changed": "~"}
_FLUSH = 10_000


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _text_value(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, str):
        return value
    return _json(value)


def _text(c: Change) -> str:
    line = f"{_MARK[c.kind]} {c.loc}"
    if c.old is not None and c.new is not None:
        line += "  " + "; ".join(
            f"{f}: {_text_value(c.old[f])} -> {_text_value(c.new[f])}" for f in c.fields
        )
    return line


def _compact(rec: dict[str, Any] | None) -> str:
    if rec is None:
        return ""
    return _json({k: v for k, v in rec.items() if v is not None and v != []})


def write_changes(changes: Iterable[Change], fmt: str, out: IO[bytes]) -> int:
    """Write ``changes`` in ``fmt`` (text, jsonl or csv); return how many were written."""
    n = 0
    text = io.StringIO()
    writer = None
    if fmt == "csv":
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(_CSV_COLUMNS)
    for c in changes:
        if writer is not None:
            writer.writerow(
                [
                    c.kind,
                    c.loc,
                    " ".join(c.fields),
                    (c.old or {}).get("lastmod") or "",
                    (c.new or {}).get("lastmod") or "",
                    _compact(c.old),
                    _compact(c.new),
                ]
            )
        elif fmt == "jsonl":
            text.write(_json(c.to_record()) + "\n")
        else:
            text.write(_text(c) + "\n")
        n += 1
        if n % _FLUSH == 0:
            out.write(text.getvalue().encode())
            text.seek(0)
            text.truncate()
    out.write(text.getvalue().encode())
    return n


def _print_findings(*reports: ReadReport, skip: str = "") -> None:
    for rep in reports:
        for f in rep.findings:
            if not skip or f.message not in skip:  # said once, in the error
                click.echo(f"sitemapkit: {f}", err=True)


@click.command("diff")
@click.argument("old")
@click.argument("new")
@option.choice(
    "--format",
    "fmt",
    choices=["text", "jsonl", "csv"],
    default="text",
    help="Output: one line per change (+ added, - removed, ~ changed), JSON lines, or CSV.",
)
@option.folder(
    "--tmpdir",
    writable=True,
    help="Where the sort keeps its temporary files (default: the system's temp folder).",
)
@option.count(
    "--max-memory",
    low=1,
    default=DEFAULT_MAX_BYTES >> 20,
    metavar="MIB",
    help="Sort buffer per side in MiB; the rest goes to temporary files (about 100 bytes a URL).",
)
@click.option("--strict", is_flag=True, help="Stop at the first problem in either input.")
@click.option(
    "--partial",
    is_flag=True,
    help="Diff what could be read even when a sitemap could not be fetched or read to its "
    "end (its URLs then show as removed or added).",
)
@click.option(
    "--parallel/--no-parallel",
    default=True,
    show_default=True,
    help="Read OLD in a second process while NEW is read here (large local inputs only).",
)
def diff_cmd(
    old: str,
    new: str,
    fmt: str,
    tmpdir: str | None,
    max_memory: int,
    strict: bool,
    partial: bool,
    parallel: bool,
) -> None:
    """Compare the URLs of OLD and NEW: which were added, removed or changed.

    OLD and NEW are each a sitemap file (an index reads its sitemaps from the files of
    the same names beside it), a folder of written sitemaps (its sitemap.xml, or every
    *.xml, *.xml.gz, *.txt and *.txt.gz file in it), a sitemap URL or a site URL.
    A URL counts as changed when any field differs (lastmod, changefreq, priority,
    images, videos, news, alternates). Changes come out sorted by URL; memory stays
    bounded for any number of URLs (external sort in temporary files).

    \b
    Formats:
      text   "+ URL", "- URL", "~ URL  field: old -> new; …", then a summary line
      jsonl  {"change": "added|removed|changed", "loc": …, "fields": […],
              "old": record|null, "new": record|null}  (records as `read` prints them);
              the summary goes to stderr
      csv    change,loc,fields,old_lastmod,new_lastmod,old,new (old/new: compact JSON);
              the summary goes to stderr

    \b
    Examples:
      sitemapkit diff old/ public/
      sitemapkit diff https://example.com/sitemap.xml public/sitemap.xml --format jsonl
      sitemapkit diff a.xml.gz b.xml.gz --format csv > changes.csv

    Exit codes: 0 the sets are equal; 1 they differ; 3 an input could not be read
    (completely: a sitemap that could not be fetched or is cut short stops the diff
    unless --partial).
    """
    out = sys.stdout.buffer
    changes: Diff = diff(
        old,
        new,
        tmpdir=tmpdir,
        max_memory=max_memory << 20,
        strict=strict,
        partial=partial,
        parallel=parallel,
    )
    try:
        with changes:
            write_changes(changes, fmt, out)
    except SitemapError as exc:
        out.flush()
        _print_findings(changes.old_report, changes.new_report, skip=exc.message)
        raise Exit(EXIT_UNREADABLE, exc) from None
    summary = changes.summary
    if fmt == "text":
        out.write(f"{summary}\n".encode())
    out.flush()
    _print_findings(changes.old_report, changes.new_report)
    if fmt != "text":
        click.echo(f"sitemapkit: {summary}", err=True)
    if not summary.equal:
        raise Exit(EXIT_DIFFERENT)
