"""sitemapkit: write, read, validate and publish XML sitemaps.

The public surface is exactly ``__all__``; everything else is internal. Names are
imported on first use, so ``import sitemapkit`` (and the command line) start fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import names

if TYPE_CHECKING:
    from .auditing import audit
    from .changes import Change, Diff, DiffSummary, diff
    from .core.finding import Finding
    from .core.model import (
        Alternate,
        Image,
        InvalidValue,
        News,
        SitemapRef,
        Url,
        Video,
        VideoPlatform,
        VideoRestriction,
    )
    from .core.serialize import dump, dumps
    from .errors import (
        FetchError,
        InputError,
        LimitError,
        ParseError,
        SitemapError,
        UnsafeXMLError,
    )
    from .io.crawler import Crawl, crawl
    from .lint.audit import AuditReport
    from .reader import ReadReport, SourcedRecord, loads, read, read_file
    from .validation import ValidationReport, validate
    from .writer import FileInfo, SitemapWriter, WriteResult

__version__ = "0.1.0"

# Where each public name is defined: one row per module, as in the imports above.
_ROWS: tuple[tuple[str, str], ...] = (
    (".auditing", "audit"),
    (".changes", "Change Diff DiffSummary diff"),
    (".core.finding", "Finding"),
    (
        ".core.model",
        "Alternate Image InvalidValue News SitemapRef Url Video VideoPlatform VideoRestriction",
    ),
    (".core.serialize", "dump dumps"),
    (".lint.audit", "AuditReport"),
    (".errors", "FetchError InputError LimitError ParseError SitemapError UnsafeXMLError"),
    (".io.crawler", "Crawl crawl"),
    (".reader", "ReadReport SourcedRecord loads read read_file"),
    (".validation", "ValidationReport validate"),
    (".writer", "FileInfo SitemapWriter WriteResult"),
)
_WHERE = {name: module for module, defined in _ROWS for name in defined.split()}


__getattr__ = names(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "Alternate",
    "AuditReport",
    "Change",
    "Crawl",
    "Diff",
    "DiffSummary",
    "FetchError",
    "FileInfo",
    "Finding",
    "Image",
    "InputError",
    "InvalidValue",
    "LimitError",
    "News",
    "ParseError",
    "ReadReport",
    "SitemapError",
    "SitemapRef",
    "SitemapWriter",
    "SourcedRecord",
    "UnsafeXMLError",
    "Url",
    "ValidationReport",
    "Video",
    "VideoPlatform",
    "VideoRestriction",
    "WriteResult",
    "__version__",
    "audit",
    "crawl",
    "diff",
    "dump",
    "dumps",
    "loads",
    "read",
    "read_file",
    "validate",
]
