"""sitemapkit: write, read, validate and publish XML sitemaps.

The public surface is exactly ``__all__``; everything else is internal.
"""

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
from .diff import Change, Diff, DiffSummary, diff
from .errors import (
    FetchError,
    InputError,
    LimitError,
    ParseError,
    SitemapError,
    UnsafeXMLError,
)
from .reader import ReadReport, SourcedRecord, loads, read, read_file
from .validate import ValidationReport, validate
from .writer import FileInfo, SitemapWriter, WriteResult

__version__ = "0.1.0"

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
