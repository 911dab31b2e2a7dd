"""writer: what a run published, as data (the public result types)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

__all__ = ["FileInfo", "WriteResult"]


@dataclass(frozen=True, slots=True)
class FileInfo:
    """One published file: its name, entries, uncompressed and stored bytes."""

    name: str
    kind: Literal["urlset", "sitemapindex", "text"]
    entries: int
    bytes: int
    stored_bytes: int


@dataclass(slots=True)
class WriteResult:
    """What a writer published.

    ``files`` lists every file (shards first, then indexes); ``indexes`` the names
    of the index files (empty when a single sitemap was written directly);
    ``duplicates`` how many repeated locs were dropped (the first occurrence is
    kept), with up to ten of them in ``duplicate_examples``; ``removed`` the stale
    files of an earlier run that were deleted; ``notes`` anything else worth saying.
    """

    directory: Path
    files: list[FileInfo] = field(default_factory=list)
    indexes: list[str] = field(default_factory=list)
    urls: int = 0
    duplicates: int = 0
    duplicate_examples: list[str] = field(default_factory=list)  # as URLs, not escaped
    removed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: With a state file: URLs added, changed, unchanged and removed since the last run.
    #: ``rewritten``: the shards whose files the publish wrote (new, or other bytes than
    #: the live file of their slot), in order; a shard whose file was kept is not named.
    changes: dict[str, int] = field(default_factory=dict)
    rewritten: list[str] = field(default_factory=list)
