"""render: what the page shows, built from a validation report and the set's counts. Pure.

The template only lays out what this module computed: the summary tiles, the tree of
sitemaps, the charts (:mod:`.chart`), and the findings table with at most
:data:`PER_RULE` findings of a rule (the others counted, beside those the validator
itself did not list, ``report.omitted``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Final
from urllib.parse import unquote, urlsplit

from ..core.finding import Finding
from ..core.rules import RULES
from ..lint.audit import AuditReport, Coverage
from ..lint.report import ValidationReport, help_uri
from .chart import Chart, columns, rows
from .stats import EXTENSIONS, TENTHS, SetStats, SitemapStats

__all__ = ["PER_RULE", "Page", "Row", "Tile", "TreeRow", "build_page", "tree_rows"]

#: Findings of one rule shown on the page; the others are counted.
PER_RULE: Final = 1_000
#: Sitemaps shown in the tree (a set may have 10,000 and more not checked).
MAX_TREE: Final = 2_000
#: Up to this many sitemaps, "URLs per sitemap" has a column per sitemap; beyond, a
#: column per 5,000 URLs.
_ONE_EACH: Final = 40
_FREQ_ORDER: Final = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")


@dataclass(frozen=True, slots=True)
class Tile:
    """A number of the summary, its name, and a line of detail."""

    label: str
    value: str
    detail: str = ""
    css: str = ""


@dataclass(frozen=True, slots=True)
class TreeRow:
    """One sitemap of the tree (``depth`` 0 for a target)."""

    name: str
    depth: int
    status: str
    kind: str = ""
    entries: str = ""
    size: str = ""
    gzip: str = ""
    lastmod: str = ""
    errors: int = 0
    warnings: int = 0
    note: str = ""


@dataclass(frozen=True, slots=True)
class Row:
    """One finding of the table."""

    rule: str
    severity: str
    message: str
    position: str
    loc: str
    href: str


@dataclass(slots=True)
class Page:
    """Everything the template shows."""

    title: str
    tiles: list[Tile]
    tree: list[TreeRow]
    tree_more: int
    charts: list[Chart]
    findings: list[Row]
    #: Rule → findings of the report not shown on the page (beyond :data:`PER_RULE`).
    hidden: dict[str, int]
    #: Rule → findings the validator counted but did not list (``--max-findings``).
    omitted: dict[str, int]
    rules: list[tuple[str, str, str, str]]  # id, slug, summary, link
    notes: list[str] = field(default_factory=list)
    #: The page of an audit (its first chart is the coverage).
    audit: bool = False


def build_page(
    report: ValidationReport,
    stats: SetStats,
    *,
    title: str,
    repository: str | None = None,
    per_rule: int = PER_RULE,
) -> Page:
    """The page of ``report`` (its counts from ``stats``); rules link to their entry on
    the rules page, as SARIF's ``helpUri`` do (:func:`~sitemapkit.lint.report.help_uri`)."""
    shown, hidden = _capped(report.findings, per_rule)
    ids = sorted({f.rule for f in report.findings} | set(report.omitted))
    links = {rid: help_uri(rid, repository) for rid in ids}
    table = [
        Row(f.rule, f.severity, f.message, _position(f), f.loc or "", links[f.rule]) for f in shown
    ]
    tree = tree_rows(report, stats)
    notes = [f"not checked: {s} ({r})" for s, r in report.not_checked]
    notes += [f"could not read {t}: {e}" for t, e in report.unreadable]
    notes += report.notes
    audit = report.coverage if isinstance(report, AuditReport) else None
    tiles = _tiles(report, stats)
    charts = _charts(report, stats)
    if audit is not None:
        tiles.append(Tile("pages crawled", f"{audit.pages:,}", f"{audit.indexable:,} indexable"))
        charts.insert(0, coverage_chart(audit))
    return Page(
        title=title,
        tiles=tiles,
        tree=tree[:MAX_TREE],
        tree_more=max(len(tree) - MAX_TREE, 0),
        charts=charts,
        findings=table,
        hidden=hidden,
        omitted=dict(sorted(report.omitted.items())),
        rules=[(rid, _slug(rid), _summary(rid), links[rid]) for rid in ids],
        notes=notes,
        audit=audit is not None,
    )


def coverage_chart(c: Coverage) -> Chart:
    """The coverage of an audit: how many URLs the sitemaps and the pages share.

    >>> chart = coverage_chart(Coverage(pages=5, listed=4, both=3, found_only=2))
    >>> [b.title for b in chart.bars]
    ['listed∩crawled: 3 both', 'listed only: 1 listed', 'crawled only: 2 crawled']
    """
    items = [  # labels of at most 14 characters: the row chart's room
        ("listed∩crawled", [("both", c.both)]),
        ("listed only", [("listed", c.listed_only)]),
        ("crawled only", [("crawled", c.found_only)]),
    ]
    legend = [
        ("both", "listed in a sitemap and crawled"),
        ("listed", "listed, not crawled (orphans, pages not found)"),
        ("crawled", "crawled, listed nowhere"),
    ]
    return rows("Coverage: sitemaps and pages", items, legend=legend)


def _capped(findings: Iterable[Finding], most: int) -> tuple[list[Finding], dict[str, int]]:
    """The first ``most`` findings of each rule, and how many of each were left out."""
    seen: Counter[str] = Counter()
    shown = []
    for f in findings:
        seen[f.rule] += 1
        if seen[f.rule] <= most:
            shown.append(f)
    return shown, {r: n - most for r, n in sorted(seen.items()) if n > most}


def _position(f: Finding) -> str:
    where = f.where or "<input>"
    if f.line and f.column:
        return f"{where}:{f.line}:{f.column}"
    return f"{where}:{f.line}" if f.line else where


def _slug(rid: str) -> str:
    rule = RULES.get(rid)
    return rule.slug if rule is not None else ""


def _summary(rid: str) -> str:
    rule = RULES.get(rid)
    return rule.summary if rule is not None else ""


# -- the tiles ---------------------------------------------------------------------------


def _tiles(report: ValidationReport, stats: SetStats) -> list[Tile]:
    used = [(name, stats.extensions[name]) for name in EXTENSIONS if stats.extensions[name]]
    hosts = f"{len(stats.hosts):,}" + ("+" if stats.more_hosts else "")
    shown_hosts = ", ".join(sorted(stats.hosts)[:3]) + (" …" if len(stats.hosts) > 3 else "")
    problems = len(report.unreadable) + len(report.not_checked)
    omitted = sum(report.omitted.values())
    return [
        Tile(
            "sitemaps",
            f"{len(report.files):,}",
            f"{problems:,} not read or not checked" if problems else "",
        ),
        Tile("URLs", f"{stats.urls:,}", f"{report.entries:,} entries"),
        Tile(
            "errors",
            f"{report.errors:,}",
            f"+{omitted:,} not listed" if omitted else "",
            "error" if report.errors else "",
        ),
        Tile("warnings", f"{report.warnings:,}", "", "warning" if report.warnings else ""),
        Tile(
            "extensions used",
            f"{len(used)}",
            ", ".join(f"{name} ({n:,} URLs)" for name, n in used) or "none",
        ),
        Tile("hosts", hosts, shown_hosts),
    ]


# -- the tree of sitemaps ----------------------------------------------------------------


@dataclass(slots=True)
class _Node:
    row: TreeRow
    kids: list[_Node] = field(default_factory=list)
    locs: frozenset[str] = frozenset()
    leaves: frozenset[str] = frozenset()


def tree_rows(report: ValidationReport, stats: SetStats) -> list[TreeRow]:
    """The sitemaps in the order validated, each index's children under it.

    The validator walks an index's children right after it, depth first, so a document
    is placed under the nearest open index (or robots.txt) that lists it (by its URL, or
    a local file by its name); a child that was not checked, or could not be read, under
    the index that lists it.
    """
    counts = Counter((f.where, f.severity) for f in report.findings)
    roots: list[_Node] = []
    stack: list[_Node] = []
    indexes: list[_Node] = []
    for name in report.files:
        while stack and not _lists(stack[-1], name):
            stack.pop()
        doc = stats.sitemaps.get(name) or SitemapStats(name, stopped="not read again")
        node = _Node(_doc_row(doc, len(stack), counts[name, "error"], counts[name, "warning"]))
        (stack[-1].kids if stack else roots).append(node)
        if doc.kind in ("sitemapindex", "robots.txt"):
            node.locs = frozenset(doc.children)
            node.leaves = frozenset(_leaf(c) for c in doc.children)
            stack.append(node)
            indexes.append(node)
    lost = [(s, "not checked", r) for s, r in report.not_checked]
    lost += [(t, "unreadable", e) for t, e in report.unreadable]
    for name, status, why in lost:
        parent = next((n for n in indexes if name in n.locs), None)
        depth = parent.row.depth + 1 if parent is not None else 0
        node = _Node(TreeRow(name, depth, status, note=why))
        (parent.kids if parent is not None else roots).append(node)
    out: list[TreeRow] = []
    _flatten(roots, out)
    return out


def _lists(index: _Node, name: str) -> bool:
    return name in index.locs or _leaf(name) in index.leaves


def _leaf(name: str) -> str:
    """The last part of a URL's path (decoded) or of a file's path: how a local child
    beside its index is known."""
    if "://" in name[:12]:
        return unquote(urlsplit(name).path.rpartition("/")[2])
    return PurePath(name).name


def _flatten(nodes: list[_Node], out: list[TreeRow]) -> None:
    """Depth first, without recursion: a chain of nested indexes is as long as the set."""
    todo = list(reversed(nodes))
    while todo:
        node = todo.pop()
        out.append(node.row)
        todo.extend(reversed(node.kids))


def _doc_row(doc: SitemapStats, depth: int, errors: int, warnings: int) -> TreeRow:
    status = "errors" if errors else "warnings" if warnings else "ok"
    gz = ""
    if doc.size:
        gz = f"gzip ({doc.plain:,} bytes plain)" if doc.gzip else "no"
    return TreeRow(
        doc.name,
        depth,
        status,
        kind=doc.kind or "",
        entries=f"{doc.entries:,}" if doc.kind else "",
        size=f"{doc.size:,}" if doc.size else "",
        gzip=gz,
        lastmod=doc.lastmod or "",
        errors=errors,
        warnings=warnings,
        note=doc.stopped or "",
    )


# -- the charts --------------------------------------------------------------------------


def _charts(report: ValidationReport, stats: SetStats) -> list[Chart]:
    freq = [(f, stats.changefreq[f]) for f in _FREQ_ORDER]
    freq += [(k, stats.changefreq[k]) for k in ("other", "none") if stats.changefreq[k]]
    prio = [(t, stats.priority[t]) for t in TENTHS]
    prio += [(k, stats.priority[k]) for k in ("other", "none") if stats.priority[k]]
    return [
        columns("Lastmod by month", _months(stats)),
        columns("URLs per sitemap", _per_sitemap(report, stats)),
        _findings_chart(report),
        columns("Changefreq", freq),
        columns("Priority", prio),
    ]


def _months(stats: SetStats) -> list[tuple[str, int]]:
    """Every month from the first lastmod to the last (gaps as zero); by year when the
    span is over ten years."""
    months = sorted(k for k in stats.months if k[:4].isdigit() and k[5:7].isdigit())
    if not months:
        return []
    first, last = _month_number(months[0]), _month_number(months[-1])
    if last - first < 120:
        return [
            (f"{n // 12:04d}-{n % 12 + 1:02d}", stats.months[f"{n // 12:04d}-{n % 12 + 1:02d}"])
            for n in range(first, last + 1)
        ]
    years: Counter[str] = Counter()
    for k in months:
        years[k[:4]] += stats.months[k]
    return sorted(years.items())


def _month_number(key: str) -> int:
    return int(key[:4]) * 12 + int(key[5:7]) - 1


def _per_sitemap(report: ValidationReport, stats: SetStats) -> list[tuple[str, int]]:
    docs = [
        stats.sitemaps[name]
        for name in report.files
        if name in stats.sitemaps
        and stats.sitemaps[name].kind not in (None, "sitemapindex", "robots.txt")
    ]
    if len(docs) <= _ONE_EACH:
        return [(_leaf(d.name) or d.name, d.urls) for d in docs]
    buckets: Counter[int] = Counter(min(d.urls // 5_000, 10) for d in docs)
    return [(f"{b * 5}k–{b * 5 + 5}k" if b < 10 else "50k+", buckets[b]) for b in range(11)]


def _findings_chart(report: ValidationReport) -> Chart:
    by: Counter[tuple[str, str]] = Counter((f.rule, f.severity) for f in report.findings)
    ids = sorted({r for r, _ in by} | set(report.omitted))
    items = [
        (
            rid,
            [("error", by[rid, "error"]), ("warning", by[rid, "warning"]), *_omitted(report, rid)],
        )
        for rid in ids
    ]
    legend = [("error", "errors"), ("warning", "warnings")]
    if report.omitted:
        legend.append(("omitted", "not listed (--max-findings)"))
    return rows("Findings by rule and severity", items, legend=legend)


def _omitted(report: ValidationReport, rid: str) -> list[tuple[str, int]]:
    n = report.omitted.get(rid, 0)
    return [("omitted", n)] if n else []
