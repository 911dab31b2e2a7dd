"""validation: the documents of a validation — targets with the URLs they are known as.

A local build folder mirrors the site: a local index validated with its URL
(``published_at``) finds each child whose URL lies under the index's directory URL at the
matching path beside it (:func:`mirror`); a child that is not there is noted as not
checked. Reads the file system (``Path.exists``, ``resolve``), never the network.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from ..core.urls import Origin, iri_to_uri

__all__ = ["Doc", "documents", "mirror"]


@dataclass(slots=True)
class Doc:
    """One document to validate: a local file or a URL, and what it is known as."""

    where: str
    url: str | None
    path: Path | None = None


def documents(
    targets: Sequence[str | Path], published_at: Sequence[str]
) -> tuple[list[Doc], list[str]]:
    """The documents of the targets, with their URLs; and usage problems, if any."""
    local = [t for t in targets if not _is_url(t)]
    if len(published_at) > 1 and len(published_at) != len(local):
        return [], [
            f"{len(published_at)} --published-at URLs for {len(local)} local files; give one "
            "(for the first file, the others are placed relative to it) or one per file"
        ]
    docs: list[Doc] = []
    anchor: tuple[Path, str] | None = None
    k = 0
    for target in targets:
        if _is_url(target):
            text = str(target)
            docs.append(Doc(text, text))
            continue
        path = Path(target)
        url: str | None = None
        if len(published_at) > 1:
            url = published_at[k]
        elif published_at and k == 0:
            url = published_at[0]
            anchor = (path.parent, url)
        elif anchor is not None:
            url = _relative_url(anchor, path)
        k += 1
        docs.append(Doc(str(target), url, path))
    return docs, []


def _relative_url(anchor: tuple[Path, str], path: Path) -> str | None:
    folder, url = anchor
    try:
        relative = path.resolve().relative_to(folder.resolve())
    except ValueError:
        return None
    base = url[: url.rfind("/") + 1]
    return base + "/".join(relative.parts)


def _is_url(target: str | Path) -> bool:
    text = str(target)
    return "://" in text[:12] and not Path(text).exists()


def mirror(doc: Doc, child: str) -> Path | str:
    """The local file of ``child`` beside a local index, or why there is none."""
    if doc.url is None or doc.path is None:
        return "the index's URL is unknown; give --published-at to find children locally"
    try:
        base = Origin.of(iri_to_uri(doc.url))
        target = Origin.of(iri_to_uri(child))
    except ValueError:
        return "not an absolute URL"
    directory = base.path[: base.path.rfind("/") + 1]
    if (target.scheme, target.host, target.port) != (base.scheme, base.host, base.port):
        return "outside the local build folder (another site)"
    if not target.path.startswith(directory):
        return "outside the local build folder (above the index's directory)"
    if "?" in child or child.endswith("/"):
        return "not a file URL"
    relative = unquote(target.path[len(directory) :])
    folder = doc.path.parent
    local = folder.joinpath(*relative.split("/"))
    try:
        local.resolve().relative_to(folder.resolve())
    except ValueError:
        return "outside the local build folder"
    if not local.is_file():
        return f"no local file {local}"
    return local
