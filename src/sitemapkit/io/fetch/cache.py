"""io.fetch: the conditional-request cache (RFC 9110 §13), on for ``cache_dir``.

The body and its validators (``ETag``, ``Last-Modified``) are stored by URL; a
``304 Not Modified`` replays the stored body. A body is written to a temporary name and
renamed when complete, then its metadata, so a crash never leaves a half body that looks
whole.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import httpx

from ...core.discovery import visit_key

__all__ = ["Cache", "CacheEntry", "CacheWriter"]


@dataclass(frozen=True, slots=True)
class CacheEntry:
    body: Path
    etag: str | None
    last_modified: str | None
    content_encoding: str
    size: int


class Cache:
    """Bodies and validators by URL, for conditional requests (RFC 9110 §13).

    Layout: ``<sha256 of the URL>.body`` (the bytes as received, Content-Encoding and
    all) and ``<…>.json`` (url, etag, last_modified, content_encoding, size). The body is
    written to a temporary name and renamed when complete, then the metadata.
    """

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root

    def _paths(self, url: str) -> tuple[Path, Path]:
        name = hashlib.sha256(visit_key(url).encode("utf-8")).hexdigest()
        return self.root / f"{name}.body", self.root / f"{name}.json"

    def lookup(self, url: str) -> CacheEntry | None:
        body, meta = self._paths(url)
        try:
            info = json.loads(meta.read_text("utf-8"))
            if body.stat().st_size != info["size"] or info["url"] != visit_key(url):
                return None
            return CacheEntry(
                body, info["etag"], info["last_modified"], info["content_encoding"], info["size"]
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def writer(self, url: str, headers: httpx.Headers) -> CacheWriter | None:
        etag, modified = headers.get("etag"), headers.get("last-modified")
        if etag is None and modified is None:
            return None
        body, meta = self._paths(url)
        info = {
            "url": visit_key(url),
            "etag": etag,
            "last_modified": modified,
            "content_encoding": headers.get("content-encoding", ""),
        }
        return CacheWriter(body, meta, info)


class CacheWriter:
    def __init__(self, body: Path, meta: Path, info: dict[str, Any]) -> None:
        self._body, self._meta, self._info = body, meta, info
        self._tmp = body.with_name(f"{body.name}.{os.getpid()}.{id(self):x}.tmp")
        self._file: BinaryIO | None = self._tmp.open("wb")
        self._size = 0

    def write(self, data: bytes) -> None:
        if self._file is not None:
            self._file.write(data)
            self._size += len(data)

    def commit(self) -> None:
        if self._file is None:
            return
        self._file.close()
        self._file = None
        os.replace(self._tmp, self._body)
        self._info["size"] = self._size
        tmp_meta = self._meta.with_name(self._meta.name + ".tmp")
        tmp_meta.write_text(json.dumps(self._info), "utf-8")
        os.replace(tmp_meta, self._meta)

    def abort(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
            with contextlib.suppress(OSError):
                self._tmp.unlink()
