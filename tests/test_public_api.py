"""The public surface: __all__ is sorted, complete and importable; layers stay layered."""

from __future__ import annotations

import ast
import importlib
import io
from pathlib import Path

import sitemapkit as sk

SRC = Path(sk.__file__).parent


def test_all_is_sorted_and_every_name_exists() -> None:
    assert list(sk.__all__) == sorted(sk.__all__)
    for name in sk.__all__:
        assert hasattr(sk, name), name


def test_every_public_class_and_function_is_exported() -> None:
    """The lazy table, the typing imports and __all__ name the same things."""
    tree = ast.parse((SRC / "__init__.py").read_text())
    (checking,) = (
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    )
    typed = {
        a.asname or a.name
        for n in ast.walk(checking)
        if isinstance(n, ast.ImportFrom) and n.level
        for a in n.names
    }
    assert typed == set(sk._WHERE) == set(sk.__all__) - {"__version__"}
    for name, module in sk._WHERE.items():
        assert getattr(sk, name) is getattr(importlib.import_module("sitemapkit" + module), name)


def test_dump_writes_what_dumps_returns() -> None:
    buf = io.BytesIO()
    urls = [sk.Url("https://example.com/a")]
    sk.dump(urls, buf)
    assert buf.getvalue() == sk.dumps(urls)


def _imports(path: Path) -> set[str]:
    mods: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = path.parent.relative_to(SRC).parts[
                : len(path.parent.relative_to(SRC).parts) - (node.level - 1)
            ]
            mods.add(".".join([*base, *(node.module or "").split(".")]).strip("."))
    return mods


def test_dependency_direction() -> None:
    """core imports neither io nor lint; io and lint never import each other (DESIGN §2)."""
    for path in SRC.rglob("*.py"):
        layer = path.relative_to(SRC).parts[0]
        for mod in _imports(path):
            top = mod.split(".")[0]
            if layer == "core":
                assert top in ("core", "errors", ""), f"{path}: imports {mod}"
            if layer in ("io", "lint"):
                assert top in (layer, "core", "errors", ""), f"{path}: imports {mod}"
