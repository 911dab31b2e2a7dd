"""sitemapkit.io.http: the one check of the request and retry bounds every client takes."""

from __future__ import annotations

import math

import pytest

from sitemapkit.io.fetch.options import FetchOptions
from sitemapkit.io.http import check_requests, check_retries
from sitemapkit.io.indexnow import submit_indexnow
from sitemapkit.io.urlcheck import CheckOptions


@pytest.mark.parametrize(
    ("bounds", "message"),
    [
        ((0, 1, 1.0), "concurrency and per_host must be at least 1"),
        ((1, 0, 1.0), "concurrency and per_host must be at least 1"),
        ((1, 1, 0.0), "timeout must be positive"),
        ((1, 1, math.nan), "timeout must be positive"),
    ],
)
def test_request_bounds(bounds: tuple[int, int, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_requests(*bounds)


@pytest.mark.parametrize("budget", [(-1, 0.0, 0.0), (0, -0.5, 0.0), (0, 0.0, -1.0)])
def test_retry_budget(budget: tuple[int, float, float]) -> None:
    with pytest.raises(ValueError, match="retries, backoff and max_retry_after must not be"):
        check_retries(*budget)


def test_every_client_checks_the_same_way() -> None:
    check_requests(1, 1, 0.1)
    check_retries(0, 0.0, 0.0)
    for options in (FetchOptions, CheckOptions):
        with pytest.raises(ValueError, match="per_host must be at least 1"):
            options(per_host=0)
        with pytest.raises(ValueError, match="must not be negative"):
            options(backoff=-1.0)


def test_indexnow_checks_its_retry_budget() -> None:
    with pytest.raises(ValueError, match="must not be negative"):
        submit_indexnow(["https://example.com/"], host="example.com", key="a" * 32, retries=-1)
