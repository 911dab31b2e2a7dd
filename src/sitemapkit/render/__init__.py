"""render: the human view of a validation — one self-contained HTML page.

- :mod:`.stats`: the counts of a set, gathered while the records stream (bounded).
- :mod:`.gather`: the documents read again for those counts (URLs as the validator fetches them).
- :mod:`.chart`: the charts' geometry, for inline SVG.
- :mod:`.view`: what the page shows: tiles, the tree of sitemaps, charts, the findings table.
- :mod:`.html`: the page itself (Jinja2 templates, autoescaped, in ``render/templates``).
"""

from __future__ import annotations

from .gather import Recorder, gather, needs_fetcher
from .html import embedded_json, render_html
from .stats import SetStats, SitemapStats

__all__ = [
    "Recorder",
    "SetStats",
    "SitemapStats",
    "embedded_json",
    "gather",
    "needs_fetcher",
    "render_html",
]
