"""auditing: :func:`audit`, the front door — a build folder or a site URL.

It chooses the target's sources (:mod:`.folder` offline, :mod:`.site` online), lets the
comparison decide, then keeps what the caller selected, at most ``max_findings`` of a
rule and sitemap (the others counted in ``omitted``, as :func:`~sitemapkit.validate`
does), in the validator's order: by sitemap, line and column.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from ..core.finding import Finding
from ..io.sources.folder import FolderOptions
from ..lint.audit import DECIDED, Audit, AuditReport
from ..lint.report import plural, sort_findings
from ..lint.rules import expand_ids

__all__ = ["audit"]

_URL: Final = re.compile(r"https?://", re.IGNORECASE)


def audit(
    target: str | os.PathLike[str],
    *,
    base_url: str | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] = (),
    max_findings: int | None = 1_000,
    folder: FolderOptions | None = None,
    crawl: Mapping[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> AuditReport:
    """Hold a site's pages against its sitemaps: AUD001-AUD004 and SM217 (see
    :mod:`sitemapkit.lint.audit`).

    ``target`` is a build folder, served at ``base_url`` (its sitemaps and its pages,
    offline), or a site URL (its sitemaps through discovery, its pages crawled with
    ``crawl``'s keywords). ``select`` and ``ignore`` take rule ids or prefixes; at most
    ``max_findings`` findings of a rule and sitemap are listed (``None`` or 0: all).
    ``folder`` reads the folder as ``write`` would (clean URLs, excludes).

    >>> import tempfile, pathlib
    >>> site = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (site / "index.html").write_text('<a href="/a.html">A</a> <a href="/b.html">B</a>')
    >>> _ = (site / "a.html").write_text('<meta name="robots" content="noindex">')
    >>> _ = (site / "b.html").write_text('<title>B</title>')
    >>> _ = (site / "sitemap.txt").write_text("https://example.com/\\nhttps://example.com/a.html\\n")
    >>> _ = (site / "robots.txt").write_text("Sitemap: https://example.com/sitemap.txt\\n")
    >>> report = audit(site, base_url="https://example.com/")
    >>> [(f.rule, f.loc, f.line) for f in report.findings]
    [('SM217', 'https://example.com/a.html', 2), ('AUD001', 'https://example.com/b.html', None)]
    >>> report.summary()["pages"]["crawled"], report.summary()["pages"]["listed"]
    (3, 2)
    """
    wanted = expand_ids(select) if select else set(DECIDED)
    wanted = (wanted & DECIDED) - (expand_ids(ignore) if ignore else set())
    report = AuditReport()
    text = os.fspath(target)
    if _URL.match(text):
        from .site import audit_site

        done: Audit = audit_site(text, report, crawl=dict(crawl or {}))
    else:
        if not base_url:
            raise ValueError("a folder is audited at the URL it is served at: give --base-url")
        from .folder import audit_folder

        done = audit_folder(text, base_url, report, options=folder)
    report.coverage = done.coverage
    report.entries = done.coverage.entries
    _keep(report, wanted, max_findings)
    c = done.coverage
    report.notes.append(
        f"audit: {plural(c.pages, 'page')} found, {plural(c.listed, 'URL')} listed, "
        f"{plural(c.indexable, 'indexable page')}; {c.both:,} listed and found, "
        f"{c.listed_only:,} listed only, {c.found_only:,} found only"
    )
    return report


def _keep(report: AuditReport, wanted: set[str], most: int | None) -> None:
    """The selected findings, at most ``most`` of a rule and sitemap, in order."""
    seen: Counter[tuple[str, str | None]] = Counter()
    kept: list[Finding] = []
    omitted: Counter[str] = Counter()
    for f in sort_findings(report.findings, report.files):
        if f.rule not in wanted:
            continue
        # a page's finding (AUD001) is about no sitemap: those are capped together
        key = (f.rule, f.where if f.where in report.files else None)
        seen[key] += 1
        if most and seen[key] > most:
            omitted[f.rule] += 1
        else:
            kept.append(f)
    report.findings = kept
    report.omitted = dict(sorted(omitted.items()))
    if omitted:
        report.notes += [
            f"{n:,} more {rule} findings not listed (--max-findings)" for rule, n in omitted.items()
        ]
