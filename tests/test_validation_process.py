"""validation's tree process, on the one child-process helper: the same pass as in-process,
and a dead process is one of the failures the validator goes on from."""

from __future__ import annotations

import os
import signal

import pytest

from sitemapkit.lint.checks import Context, entry_anchors
from sitemapkit.lint.tree import tree_pass
from sitemapkit.validation.process import FAILURES, TreeProcess

DOC = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    b"<url><loc>https://example.com/a</loc><priority>2</priority></url>\n"
    b"<url><loc>https://example.com/b</loc><changefreq>often</changefreq></url>\n"
    b"</urlset>\n"
)


def test_the_child_gives_the_pass_this_process_gives() -> None:
    ctx = Context()
    here = tree_pass(DOC, "s.xml", ctx)
    assert here.root is not None
    anchors = list(entry_anchors(here.root, here.kind))
    proc = TreeProcess()
    try:
        there = proc.run(DOC, "s.xml", ctx)
        again = proc.run(DOC, "t.xml", ctx)  # one process serves document after document
    finally:
        proc.close()
    assert there.root is None  # never a tree across the boundary
    assert there.findings == here.findings and there.findings
    assert there.kind == here.kind == "urlset"
    assert list(there.anchors or ()) == anchors
    assert {f.where for f in again.findings} == {"t.xml"}


def test_a_dead_tree_process_is_a_failure_the_validator_goes_on_from() -> None:
    proc = TreeProcess()
    try:
        os.kill(proc.pid, signal.SIGKILL)  # as the OOM killer would
        with pytest.raises(FAILURES):
            proc.run(DOC * 200, "s.xml", Context())
    finally:
        proc.close()
