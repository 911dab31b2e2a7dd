"""core: the XML namespaces sitemaps use, in one place. Pure.

sitemaps.org: the urlset must "specify the namespace (protocol standard)"
``http://www.sitemaps.org/schemas/sitemap/0.9`` exactly; the extension URIs are
Google's (RULES.md SM101, SM102).
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ATOM03_NS",
    "ATOM_NS",
    "IMAGE_NS",
    "LEGACY_NS",
    "NEWS_NS",
    "RDF_NS",
    "RSS1_NS",
    "SITEMAP_NS",
    "VIDEO_NS",
    "XHTML_NS",
]

SITEMAP_NS: Final = "http://www.sitemaps.org/schemas/sitemap/0.9"
#: The namespace of Google's sitemaps before sitemaps.org 0.9 (read, never written).
LEGACY_NS: Final = "http://www.google.com/schemas/sitemap/0.84"
IMAGE_NS: Final = "http://www.google.com/schemas/sitemap-image/1.1"
VIDEO_NS: Final = "http://www.google.com/schemas/sitemap-video/1.1"
NEWS_NS: Final = "http://www.google.com/schemas/sitemap-news/0.9"
XHTML_NS: Final = "http://www.w3.org/1999/xhtml"
ATOM_NS: Final = "http://www.w3.org/2005/Atom"
ATOM03_NS: Final = "http://purl.org/atom/ns#"
#: RSS 1.0: an ``<rdf:RDF>`` root, items in the RSS 1.0 namespace.
RDF_NS: Final = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RSS1_NS: Final = "http://purl.org/rss/1.0/"
