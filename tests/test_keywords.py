"""Each ``**options: Unpack[...Keywords]`` front door names exactly the keywords of what it
passes them to, so the TypedDict and the signature with the defaults cannot drift apart."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from sitemapkit.changes import DiffKeywords, DiffOptions
from sitemapkit.core.parse.parser import ParseKeywords, SitemapParser
from sitemapkit.reader import ReadKeywords, read_batches


@pytest.mark.parametrize(
    ("keywords", "target", "not_passed"),
    [
        (ParseKeywords, SitemapParser, {"max_findings", "summarize", "fast"}),
        (DiffKeywords, DiffOptions, set()),
        (ReadKeywords, read_batches, set()),
    ],
)
def test_keywords_mirror_their_target(
    keywords: type, target: Callable[..., Any], not_passed: set[str]
) -> None:
    parameters = inspect.signature(target).parameters.values()
    names = [p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert list(keywords.__annotations__) == [n for n in names if n not in not_passed]
