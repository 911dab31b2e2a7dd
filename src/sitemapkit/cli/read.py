"""cli: ``sitemapkit read``: print the records of sitemaps, files or whole sites."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any, cast

import click

from .. import ReadReport, SitemapError, SitemapRef, Url
from ..core.discovery import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_DOCUMENT_TIME,
    DEFAULT_MAX_SITEMAPS,
    DEFAULT_MAX_TIME,
    DEFAULT_MAX_TOTAL_BYTES,
)
from ..core.finding import clip
from ..io.sources.record import CSV_COLUMNS, alternate_token
from ..io.target import is_url
from ..reader import read_targets
from . import option
from .status import EXIT_INPUT, EXIT_UNREADABLE, Exit

if TYPE_CHECKING:  # the fetch options import httpx: not needed to read files
    from ..io.fetch.options import FetchKeywords, Progress
    from .validate import StatusLine

#: The columns of --format csv/tsv: the kind, the columns `write` reads (news and the
#: first video included), and the sitemap each record came from.
_WRITE_COLUMNS = tuple(c for c in CSV_COLUMNS if c != "content_hash")
_COLUMNS = ("kind", *_WRITE_COLUMNS, "source")
_VIDEO_COUNT = sum(1 for c in _WRITE_COLUMNS if c.startswith("video_"))


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _video_cells(video: dict[str, Any]) -> list[str]:
    cells = []
    for column in _WRITE_COLUMNS:
        if not column.startswith("video_"):
            continue
        key = column[6:]
        if key == "tags":
            cells.append(",".join(video.get("tags") or ()))
        elif key.startswith(("restriction_", "platform_")):
            what, rel = key.split("_")
            rule = video.get(what)
            listed = "countries" if what == "restriction" else "platforms"
            ok = isinstance(rule, dict) and rule.get("relationship") == rel
            cells.append(" ".join(rule[listed]) if ok and isinstance(rule, dict) else "")
        else:
            cells.append(_cell(video.get(key)))
    return cells


def _row(r: Url | SitemapRef, source: str) -> list[str]:
    if isinstance(r, SitemapRef):
        blank = [""] * (len(_WRITE_COLUMNS) - 2)
        return ["sitemap", r.loc, str(r.lastmod or ""), *blank, source]
    rec = r.to_record()
    news = rec["news"] or {}
    publication = news.get("publication") or {}
    videos = rec["videos"]
    cells = [
        "url",
        r.loc,
        _cell(rec["lastmod"]),
        _cell(rec["changefreq"]),
        _cell(rec["priority"]),
        " ".join(i.loc for i in r.images),
        " ".join(map(alternate_token, r.alternates)),
        _cell(publication.get("name")),
        _cell(publication.get("language")),
        _cell(news.get("publication_date")),
        _cell(news.get("title")),
        *(_video_cells(videos[0]) if videos else [""] * _VIDEO_COUNT),
        source,
    ]
    return cells


def emit(
    batches: Iterable[tuple[str, Sequence[Url | SitemapRef]]], fmt: str, out: IO[bytes]
) -> int:
    """Write batches of records in ``fmt``; return how many records were written.

    Each batch is written and flushed as it comes (a batch is what one parser call read),
    so a run that is killed, or read through a pipe, has every record read so far.
    """
    n = 0
    if fmt in ("csv", "tsv"):
        text = io.StringIO()
        w = csv.writer(text, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
        w.writerow(_COLUMNS)
        for source, records in batches:
            w.writerows(_row(r, source) for r in records)
            n += len(records)
            out.write(text.getvalue().encode())
            out.flush()
            text.seek(0)
            text.truncate()
        out.write(text.getvalue().encode())
        return n
    for source, records in batches:
        if not records:
            continue
        if fmt == "urls":
            # a batch from a parser process carries its locs as one string
            loc_text: str | None = getattr(records, "loc_text", None)
            chunk = loc_text if loc_text is not None else "\n".join(r.loc for r in records)
        else:
            tail = ", " + json.dumps("source", ensure_ascii=False) + ": "
            tail += json.dumps(source, ensure_ascii=False) + "}"
            chunk = "\n".join(_jsonl(r, tail) for r in records)
        out.write((chunk + "\n").encode())
        out.flush()
        n += len(records)
    return n


def _jsonl(r: Url | SitemapRef, tail: str) -> str:
    """One JSON line: the record's fields in the shape `write` accepts, then its source."""
    return json.dumps(r.to_record(), ensure_ascii=False)[:-1] + tail


@click.command("read")
@click.argument("targets", nargs=-1, required=True, metavar="TARGET...")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "csv", "tsv", "urls", "tree"]),
    default="jsonl",
    show_default=True,
    help="Output: JSON lines (the shape `write` accepts), CSV, TSV, bare URLs, or the tree.",
)
@click.option("--no-follow", is_flag=True, help="List an index's sitemaps instead of reading them.")
@click.option(
    "--published-at",
    metavar="URL",
    multiple=True,
    help="The URL of a local file or folder (for relative locs and the files beside an "
    "index); once per local target, in order.",
)
@click.option("--strict", is_flag=True, help="Stop at the first problem.")
@click.option(
    "--offline", is_flag=True, help="Read local files only: children not beside an index are noted."
)
@option.count(
    "--max-sitemaps",
    default=DEFAULT_MAX_SITEMAPS,
    low=1,
    metavar="N",
    help="Sitemaps fetched at most (robots.txt lines and index children alike).",
)
@option.count(
    "--max-depth",
    default=DEFAULT_MAX_DEPTH,
    metavar="N",
    help="Index nesting followed below a sitemap found directly.",
)
@option.count(
    "--max-bytes",
    default=DEFAULT_MAX_TOTAL_BYTES,
    low=1,
    metavar="BYTES",
    help="Bytes fetched at most, after decompression, over the whole run.",
)
@option.seconds(
    "--max-time",
    default=DEFAULT_MAX_TIME,
    above=True,
    metavar="SECONDS",
    help="Seconds the fetches of the whole run may take.",
)
@option.seconds(
    "--max-document-time",
    default=DEFAULT_MAX_DOCUMENT_TIME,
    above=True,
    metavar="SECONDS",
    help="Seconds one fetched document may take, retries included (a server that trickles "
    "its answer is cut there).",
)
def read_cmd(
    targets: tuple[str, ...],
    fmt: str,
    no_follow: bool,
    published_at: tuple[str, ...],
    strict: bool,
    offline: bool,
    **budgets: float,
) -> None:
    """Print the entries of each TARGET, in the order given: a sitemap file (- for stdin),
    a robots.txt, a folder (its robots.txt, else every sitemap file in it, indexes first),
    a sitemap URL, or a site.

    An index's or robots.txt's sitemaps are read (a local one's from the files beside it,
    else fetched) unless --no-follow lists them. Records are printed as they are read; a
    budget (--max-*) that cuts the read is said on stderr (SM012: how many sitemaps were
    not read, which first). On a terminal, a progress line says what the run waits for.

    \b
    Examples:
      sitemapkit read sitemap.xml.gz --format urls
      sitemapkit read https://example.com/ --format jsonl > urls.jsonl
      sitemapkit read public/sitemap_index.xml --published-at https://example.com/sitemap_index.xml
      sitemapkit read robots.txt --published-at https://example.com/robots.txt --no-follow

    Exit codes: 0 read fully; 1 read with problems (findings on stderr, everything
    recoverable printed; a cycle of indexes, a budget reached); 3 nothing could be read
    (nothing found: the finding says what was tried).
    """
    pairs = _pairs(targets, published_at)
    report, out, seen, line = ReadReport(), sys.stdout.buffer, 0, _Progress.on_terminal()

    def counted(
        batches: Iterable[tuple[str, Sequence[Url | SitemapRef]]],
    ) -> Iterator[tuple[str, Sequence[Url | SitemapRef]]]:
        nonlocal seen
        for batch in batches:
            seen += len(batch[1])
            if line is not None:
                line.records = seen
            yield batch

    # the --max-* options are named as the fields of FetchOptions they set
    fetch = cast("FetchKeywords", budgets)
    if line is not None:
        fetch["progress"] = line.update
    try:
        records = counted(
            read_targets(
                pairs,
                follow=not no_follow,
                strict=strict,
                offline=offline,
                report=report,
                fetch=fetch,
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
        if line is not None:
            line.clear()
        # the error that stopped reading is usually the last finding too: say it once
        report.findings = [f for f in report.findings if not exc.message.startswith(f.message)]
        _print_findings(report)
        raise Exit(EXIT_INPUT if seen else EXIT_UNREADABLE, exc) from None
    finally:
        if line is not None:
            line.clear()
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


def _pairs(targets: tuple[str, ...], published_at: tuple[str, ...]) -> list[tuple[str, str | None]]:
    """Each target with its --published-at URL (local targets only, in order)."""
    local = [t for t in targets if not is_url(t)]
    if published_at and len(published_at) != len(local):
        raise click.UsageError(
            f"{len(published_at)} --published-at URLs for {len(local)} local targets; give "
            "one per local target, in order"
        )
    urls = iter(published_at)
    return [(t, None if is_url(t) else next(urls, None)) for t in targets]


def _print_tree(report: ReadReport, seen: int) -> None:
    """One line per sitemap, indented under its index: status, entries, bytes, time."""
    from ..lint.report import plural  # the report's wording; its import only for a tree

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
        f"{plural(len(tree.sitemaps), 'sitemap')}, {plural(seen, 'entry', 'entries')}"
        + (f", {len(tree.errors)} failed" if tree.errors else "")
    )


class _Progress:
    """The progress line of a read on a terminal: records so far, sitemaps answered and
    the fetch it waits for (the one in flight the longest), and for how long."""

    def __init__(self, status: StatusLine) -> None:
        self.status = status
        self.records = 0

    @classmethod
    def on_terminal(cls) -> _Progress | None:
        if not sys.stderr.isatty():
            return None
        from .validate import StatusLine  # imported only for a terminal

        return cls(StatusLine())

    def update(self, p: Progress) -> None:
        text = f"read {self.records:,} records from {p.done:,} sitemaps"
        if p.waiting is not None:
            text += f"; waiting {p.waited:.0f} s for {p.waiting}"
        if p.pending > 1:
            text += f" ({p.pending:,} queued or in flight)"
        # one terminal line: a wrapped line could not be rewritten in place
        self.status.show(clip(text, shutil.get_terminal_size().columns - 1))

    def clear(self) -> None:
        self.status.clear()


def _print_findings(report: ReadReport) -> None:
    for f in report.findings:
        click.echo(f"sitemapkit: {f}", err=True)


__all__ = ["emit", "exit_status", "read_cmd"]
