"""sitemapkit: write, read, validate and publish XML sitemaps.

The public surface is exactly ``__all__``; everything else is internal. Names are
imported on first use, so ``import sitemapkit`` (and the command line) start fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from .reader import ReadReport, SourcedRecord, loads, read, read_file
    from .validation import ValidationReport, validate
    from .writer import FileInfo, SitemapWriter, WriteResult

__version__ = "0.1.0"

_WHERE = {
    **dict.fromkeys(["Change", "Diff", "DiffSummary", "diff"], ".changes"),
    "Finding": ".core.finding",
    **dict.fromkeys(
        [
            "Alternate",
            "Image",
            "InvalidValue",
            "News",
            "SitemapRef",
            "Url",
            "Video",
            "VideoPlatform",
            "VideoRestriction",
        ],
        ".core.model",
    ),
    **dict.fromkeys(["dump", "dumps"], ".core.serialize"),
    **dict.fromkeys(
        ["FetchError", "InputError", "LimitError", "ParseError", "SitemapError", "UnsafeXMLError"],
        ".errors",
    ),
    **dict.fromkeys(["ReadReport", "SourcedRecord", "loads", "read", "read_file"], ".reader"),
    **dict.fromkeys(["ValidationReport", "validate"], ".validation"),
    **dict.fromkeys(["FileInfo", "SitemapWriter", "WriteResult"], ".writer"),
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'sitemapkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "Alternate",
    "Change",
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
    "diff",
    "dump",
    "dumps",
    "loads",
    "read",
    "read_file",
    "validate",
]
