"""Shared fixtures: parsing written output back with a hardened lxml parser."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from lxml import etree

NS = {
    "s": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "image": "http://www.google.com/schemas/sitemap-image/1.1",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
    "news": "http://www.google.com/schemas/sitemap-news/0.9",
    "xhtml": "http://www.w3.org/1999/xhtml",
}


def read_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def parse(path_or_bytes: Path | bytes) -> etree._Element:
    data = path_or_bytes if isinstance(path_or_bytes, bytes) else read_bytes(path_or_bytes)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return etree.fromstring(data, parser)


def locs(path: Path) -> list[str]:
    root = parse(path)
    return [e.text for e in root.iterfind("s:url/s:loc", NS)]


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return tmp_path / "public"
