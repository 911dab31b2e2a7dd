"""auditing: a build folder held against its own sitemaps, before deploy (offline).

The sitemaps are those the folder's ``robots.txt`` names in ``Sitemap:`` lines (their
URLs under the base URL mapped to files of the folder), else the ``sitemap*.xml*``
files at its top (a ``.gz`` copy beside its ``.xml`` counted once); an index's children
are its files too. The pages are the folder
source's (:class:`~sitemapkit.io.sources.folder.FolderPages`), judged as ``write DIR``
judges them, with their links. A URL a sitemap lists that the walk did not give is
looked up as a static server would answer it: its file judged, else a 404.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from urllib.parse import unquote

from ..core.robots import MAX_ROBOTS_BYTES, parse_robots
from ..core.urls import normalize
from ..errors import InputError
from ..io.sources.folder import FolderOptions, FolderPages
from ..lint.audit import Audit, AuditReport
from .sitemaps import iter_listings

__all__ = ["audit_folder"]


class _FolderSet:
    """The sitemap files of a folder served at ``base`` (a :class:`.sitemaps.Source`)."""

    def __init__(self, root: Path, base: str) -> None:
        self.root, self.base = root, base
        self.site = normalize(base)

    def path(self, url: str) -> str:
        """The file of the folder at ``url``; :class:`InputError` when there is none."""
        norm = normalize(url)
        rel = unquote(norm[len(self.site) :]) if norm.startswith(self.site) else None
        if rel is None or not rel or ".." in rel.split("/"):
            raise InputError(f"not a file of the folder served at {self.base} ({url})")
        path = self.root / rel
        if not path.is_file():
            raise InputError(f"no file {rel!r} in the folder")
        return str(path)

    def url(self, where: str) -> str:
        rel = Path(where).relative_to(self.root).as_posix()
        return self.base + rel

    def load(self, where: str) -> tuple[bytes, str | None]:
        try:
            return Path(where).read_bytes(), self.url(where)
        except OSError as exc:
            raise InputError(f"cannot read the sitemap: {exc.strerror}", where=where) from None

    def child(self, url: str) -> str:
        return self.path(url)

    def first(self, report: AuditReport) -> list[str]:
        """The sitemaps the folder's robots.txt names, else its top ``sitemap*.xml*``."""
        robots = self.root / "robots.txt"
        if robots.is_file():
            data = robots.read_bytes()
            parsed = parse_robots(
                data[:MAX_ROBOTS_BYTES], self.base + "robots.txt", where=str(robots)
            )
            named = []
            for url in parsed.sitemaps:
                try:
                    named.append(self.path(url))
                except InputError as exc:
                    report.not_checked.append((url, f"listed in robots.txt, {exc.message}"))
            if named or parsed.sitemaps:
                return named
        names = {
            e.name
            for e in os.scandir(self.root)
            if e.is_file() and fnmatch.fnmatchcase(e.name, "sitemap*.xml*")
        }
        # a generator's gzip copy beside its sitemap (MkDocs writes sitemap.xml and
        # sitemap.xml.gz) is the same sitemap, not a second one listing every URL again
        twins = {n for n in names if n.endswith(".gz") and n.removesuffix(".gz") in names}
        return [str(self.root / n) for n in sorted(names - twins)]


def audit_folder(
    root: str | os.PathLike[str],
    base_url: str,
    report: AuditReport,
    *,
    options: FolderOptions | None = None,
) -> Audit:
    """Audit the build folder ``root`` served at ``base_url``: its sitemaps, then its
    pages; the findings go to ``report``."""
    folder = Path(root)
    base = base_url if base_url.endswith("/") else base_url + "/"
    docs = _FolderSet(folder, base)
    pages = FolderPages(folder, base, options)
    # a listed URL stands for the page it lands on, as the pages' links do
    audit = Audit(start=base, links_reach=True, lands=pages.lands)
    if not folder.is_dir():
        what = "not a folder" if folder.exists() else "no such folder"
        report.unreadable.append((str(folder), f"{what}: a build folder is audited"))
        return audit
    first = docs.first(report)
    for listing in iter_listings(docs, first, report):
        report.findings += audit.add_sitemap(listing.entries)
    if not report.files:  # nothing to hold the pages against
        why = (
            "no sitemap of the folder could be read"
            if first or report.not_checked
            else "no sitemap: no robots.txt with Sitemap: lines and no sitemap*.xml* at the "
            "top of the folder (write one with `sitemapkit write`)"
        )
        if not report.unreadable:
            report.unreadable.append((str(folder), why))
        return audit
    for page in pages.outcomes():
        report.findings += audit.add(page)
    for url in audit.unseen():
        listed = pages.judge(url)
        if listed is not None:
            report.findings += audit.add(listed, found=False)
    report.findings += audit.finish()
    report.notes.append(pages.summary.note(str(folder)))
    return audit
