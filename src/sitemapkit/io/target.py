"""io: what a target of ``read`` or ``validate`` is, and the local files it leads to.

The one place both commands decide it (they must take the same targets):

* a **URL** (``scheme://…`` that is not an existing path): fetched; whether it is a site,
  a robots.txt or a sitemap is the discovery flow's decision
  (:class:`~sitemapkit.core.discovery.DiscoveryFlow`);
* a **folder**: its ``robots.txt`` (:func:`folder_robots`) and its sitemap files, indexes
  first, in name order (:func:`folder_sitemaps`);
* a **robots.txt** file, recognised by its name, its URL or its content (:func:`is_robots`);
* any other file: a **sitemap** (XML, gzip, text, feed: the reader tells them apart).

The children of a local index or robots.txt are looked for beside it (:func:`beside`).
Reads the file system (``exists``, ``is_dir``, a file's first bytes), never the network.
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path
from typing import Final
from urllib.parse import quote, unquote, urlsplit

from ..core.robots import is_robots_name, looks_like_robots
from ..core.urls import Origin, iri_to_uri

__all__ = [
    "EMPTY_FOLDER",
    "SITEMAP_SUFFIXES",
    "beside",
    "folder_robots",
    "folder_sitemaps",
    "is_folder",
    "is_robots",
    "is_url",
    "join_url",
    "local_child",
    "mirror",
    "no_sitemap_line",
]

_URL: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
#: The longest path a file can have (Linux's PATH_MAX): a longer one names no file, and
#: resolving it first would stat each of its components (a URL of 50,000 slashes).
_PATH_MAX: Final = 4096

#: The files of a folder taken as sitemaps.
SITEMAP_SUFFIXES: Final = (".xml", ".xml.gz", ".txt", ".txt.gz")
#: Why a folder gives nothing to read.
EMPTY_FOLDER: Final = (
    "the folder holds no robots.txt and no sitemap file (*.xml, *.xml.gz, *.txt, *.txt.gz)"
)


def is_url(target: str | Path) -> bool:
    """True when ``target`` is a URL (``scheme://…``) and not the name of an existing path.

    >>> is_url("https://example.com/"), is_url("public/sitemap.xml")
    (True, False)
    """
    text = str(target)
    return _URL.match(text) is not None and not Path(text).exists()


def is_folder(target: str | Path) -> bool:
    """True when ``target`` names a folder (``-``, standard input, never does)."""
    return str(target) != "-" and Path(target).is_dir()


def is_robots(name: str, url: str | None, head: bytes) -> bool:
    """True when the local file ``name`` (known as ``url``, starting with the bytes
    ``head``) is a robots.txt: by its name or its URL, else by its content (its first
    record is a robots.txt field; XML and gzip never are).

    >>> is_robots("public/robots.txt", None, b""), is_robots("a.txt", None, b"User-agent: *")
    (True, True)
    >>> is_robots("urls.txt", None, b"https://example.com/\\n")
    False
    """
    if is_robots_name(name) or (url is not None and is_robots_name(url)):
        return True
    return head[:1] not in (b"<", b"\x1f") and looks_like_robots(head)


def no_sitemap_line(data: bytes) -> str:
    """Why a robots.txt that lists no sitemap lists none: it may be a page, not a robots.txt.

    >>> no_sitemap_line(b"User-agent: *\\n")
    'the robots.txt has no Sitemap: line'
    """
    if data.lstrip()[:1] == b"<":
        return "it starts with '<': an HTML or XML page, not a robots.txt"
    return "the robots.txt has no Sitemap: line"


def folder_robots(folder: Path) -> Path | None:
    """The folder's ``robots.txt``, if it has one."""
    robots = folder / "robots.txt"
    return robots if robots.is_file() else None


def folder_sitemaps(folder: Path) -> list[Path]:
    """The sitemap files of a folder (not its subfolders): indexes first (so that their
    children are reached through them, with their URLs), then in name order."""
    return sorted(
        (p for p in folder.iterdir() if p.is_file() and p.name.endswith(SITEMAP_SUFFIXES)),
        key=lambda p: (not _is_index(p), p.name),
    )


def _is_index(path: Path) -> bool:
    """A cheap look at a file's start: does it open a ``<sitemapindex>``?"""
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    if head[:2] == b"\x1f\x8b":
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 1 << 16)
        except zlib.error:
            return False
    return b"<sitemapindex" in head[:4096] or b":sitemapindex" in head[:4096]


def join_url(base: str | None, name: str) -> str | None:
    """The URL of the file ``name`` in the folder published at ``base`` (``None``: unknown).

    >>> join_url("https://example.com/", "sitemap index.xml")
    'https://example.com/sitemap%20index.xml'
    """
    if base is None:
        return None
    return (base if base.endswith("/") else base + "/") + quote(name)


def local_child(index: str | Path, loc: str) -> str | None:
    """The file beside a local index that a child sitemap's URL names (the last segment
    of its path, percent-decoded), if it exists.

    >>> local_child("/nowhere/sitemap_index.xml", "https://example.com/sitemap-1.xml") is None
    True
    """
    try:
        name = unquote(urlsplit(loc).path.rsplit("/", 1)[-1])
    except ValueError:  # "http://[x/": no URL, no file
        return None
    if not name or name in (".", "..") or "/" in name or "\\" in name:
        return None
    path = Path(index).parent / name
    try:
        return str(path) if path.is_file() else None
    except OSError:  # a name no file system takes (too long): no such file
        return None


def beside(index: str | Path, url: str | None, child: str) -> Path | str:
    """The local file of ``child`` (a URL a local index or robots.txt lists) beside the
    file ``index``, or why there is none.

    With the index's URL known, :func:`mirror` (the child's URL under the index's directory
    URL, at the same path below the index's folder); without it, the rule of ``write``:
    the file of the same name beside the index.
    """
    if url is None:
        name = local_child(index, child)
        return Path(name) if name is not None else "no file of its name beside the index"
    return mirror(Path(index), url, child)


def mirror(index: Path, url: str, child: str) -> Path | str:
    """The local file of ``child`` beside the local index ``index`` published at ``url``:
    a build folder mirrors the site, so the child's URL below the index's directory URL is
    its path below the index's folder. Or why there is none."""
    try:
        base = Origin.of(iri_to_uri(url))
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
    folder = index.parent
    local = folder.joinpath(*relative.split("/"))
    if len(str(local).encode("utf-8", "surrogateescape")) > _PATH_MAX:
        return "no local file of that name (the path is too long)"
    try:
        local.resolve().relative_to(folder.resolve())
        if not local.is_file():
            return f"no local file {local}"
    except ValueError:
        return "outside the local build folder"
    except OSError as exc:  # a name no file system takes (too long)
        return f"no local file of that name ({exc.strerror})"
    return local
