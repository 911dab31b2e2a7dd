"""validation: the documents of a validation — targets with the URLs they are known as.

What a target is (a URL, a folder, a file) is decided by :mod:`sitemapkit.io.target`, the
one place ``read`` and ``validate`` share. A URL target goes to the discovery flow
(:mod:`.site`); a folder is opened when its turn comes; a file is a sitemap or a
robots.txt (its name, URL or content says which once it is read). Reads the file system
(``Path.exists``), never the network.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..io.target import is_folder, is_url
from .fetcher import Fetched

__all__ = ["Doc", "Role", "documents"]

#: ``target``: a URL given (a site, a robots.txt or a sitemap: the discovery flow decides);
#: ``folder``: a local folder; ``document``: a sitemap or robots.txt, local or at a URL.
Role = Literal["target", "folder", "document"]


@dataclass(slots=True)
class Doc:
    """One document to validate: a local file or a URL, and what it is known as
    (``fetched``: its answer, when discovery fetched it already)."""

    where: str
    url: str | None
    path: Path | None = None
    role: Role = "document"
    fetched: Fetched | None = None


def documents(
    targets: Sequence[str | Path], published_at: Sequence[str]
) -> tuple[list[Doc], list[str]]:
    """The documents of the targets, with their URLs; and usage problems, if any.

    One ``published_at`` URL is the first local target's (a folder's URL is that of the
    folder); the other local targets are placed relative to it. Several are one per local
    target, in order.
    """
    local = [t for t in targets if not is_url(t)]
    if len(published_at) > 1 and len(published_at) != len(local):
        return [], [
            f"{len(published_at)} --published-at URLs for {len(local)} local files; give one "
            "(for the first file, the others are placed relative to it) or one per file"
        ]
    docs: list[Doc] = []
    anchor: tuple[Path, str] | None = None
    k = 0
    for target in targets:
        if is_url(target):
            text = str(target)
            docs.append(Doc(text, text, role="target"))
            continue
        path = Path(target)
        folder = is_folder(path)
        url: str | None = None
        if len(published_at) > 1:
            url = published_at[k]
        elif published_at and k == 0:
            url = published_at[0]
            if folder and not url.endswith("/"):
                url += "/"
            anchor = (path, url) if folder else (path.parent, url)
        elif anchor is not None:
            url = _relative_url(anchor, path)
        k += 1
        docs.append(Doc(str(target), url, path, "folder" if folder else "document"))
    return docs, []


def _relative_url(anchor: tuple[Path, str], path: Path) -> str | None:
    folder, url = anchor
    try:
        relative = path.resolve().relative_to(folder.resolve())
    except ValueError:
        return None
    base = url[: url.rfind("/") + 1]
    return base + "/".join(relative.parts)
