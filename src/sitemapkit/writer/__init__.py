"""writer: the streaming writer and the incremental one, as collaborators of one façade.

:class:`SitemapWriter` (:mod:`.writer`) checks its settings once (:mod:`.settings`)
and picks a mode: :mod:`.stream` (shards cut as URLs come in, :mod:`.shard`; exact
duplicate removal, :mod:`.dedupe`; big plain files written by forked processes,
:mod:`.parallel`) or :mod:`.incremental` (a state file). Both end in :mod:`.index`
(the index files and the publish); :mod:`.result` holds what a run reports.
"""

from __future__ import annotations

from .result import FileInfo, WriteResult
from .writer import SitemapWriter

__all__ = ["FileInfo", "SitemapWriter", "WriteResult"]
