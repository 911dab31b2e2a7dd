"""docs/ARCHITECTURE.md lists every module of the package once, and only modules that exist."""

from __future__ import annotations

import re
from pathlib import Path

import sitemapkit as sk

SRC = Path(sk.__file__).parent
DOC = Path(__file__).resolve().parents[1] / "docs" / "ARCHITECTURE.md"
ENTRY = re.compile(r"^- `([\w/]+\.py)` — \S", re.MULTILINE)


def test_every_module_is_listed_once_and_every_listed_module_exists() -> None:
    listed = ENTRY.findall(DOC.read_text(encoding="utf-8"))
    modules = sorted(p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py"))
    assert sorted(listed) == sorted(set(listed)), "a module is listed twice"
    assert sorted(listed) == modules
