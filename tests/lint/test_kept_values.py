"""The validator's date and priority checks on the values a reader keeps as written
(issue #11 §3): coarse dates, fractions, a time without a zone; priorities never rounded."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from sitemapkit.core.model import Url, priority_text
from sitemapkit.core.trusted import trusted_url
from sitemapkit.lint.checks import Context, FileChecks
from sitemapkit.lint.checks.date import instant_bounds
from sitemapkit.validation import validate

from ..conftest import urlset

NOW = dt.datetime(2024, 6, 1, 12, tzinfo=dt.UTC)
U = "https://example.com/"


def _pending(lastmod: str) -> list[str]:
    fc = FileChecks("s", Context(now=NOW))
    fc.add([trusted_url(U + "a", lastmod), Url(U + "b")])
    return [p.rule for p in fc.pending]


@pytest.mark.parametrize(
    ("lastmod", "rules"),
    [
        ("1990", ["SM307"]),
        ("1993-12", ["SM307"]),
        ("1994", []),  # the whole of 1994 is not before 1994-01-01
        ("1994-01", []),
        ("1970-01-01T00:00:00.000Z", ["SM307"]),
        ("2030", ["SM305"]),
        ("2030-01", ["SM305"]),
        ("2030-01-01T10:00:00.5+00:00", ["SM305"]),
        ("2030-01-01 10:00:00", ["SM305"]),  # no zone, yet years ahead
        ("2024-06-01T13:00:00", []),  # no zone: an hour ahead in UTC is within any zone's reach
        ("2024-06-02T08:00:00.999+00:00", []),  # within the day of tolerance
        ("2024", []),
        ("2024-05-17t10:30:00z", []),
    ],
)
def test_date_heuristics_read_every_kept_form(lastmod: str, rules: list[str]) -> None:
    assert _pending(lastmod) == rules


def test_instant_bounds_of_the_kept_forms() -> None:
    day = dt.timedelta(days=1)
    at = dt.datetime(2024, 5, 17, 10, 30, tzinfo=dt.UTC)
    assert instant_bounds("2024-05-17T10:30:00.25Z") == (at + dt.timedelta(seconds=0.25),) * 2
    # a local time in a zone not given: from +14:00 to -12:00 around it
    assert instant_bounds("2024-05-17 10:30") == (
        at - dt.timedelta(hours=14),
        at + dt.timedelta(hours=12),
    )
    start = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    assert instant_bounds("2024-05") == (
        start - dt.timedelta(hours=14),
        start + 31 * day + dt.timedelta(hours=12),
    )
    assert instant_bounds("May 2024") is None


def test_the_sm403_hint_says_what_the_writer_writes(tmp_path: Path) -> None:
    values = ["0.85", ".5", "1", "0.555", "0.850", "+0.5"]
    path = tmp_path / "s.xml"
    path.write_text(
        urlset(
            *(f"<url><loc>{U}{i}</loc><priority>{v}</priority></url>" for i, v in enumerate(values))
        )
    )
    report = validate(path, published_at=U + "s.xml", now=NOW)
    hints = [f.message for f in report.findings if f.rule == "SM403"]
    assert len(hints) == len(values)
    for value, hint in zip(values, hints, strict=True):
        assert f" {priority_text(value)}" in hint, hint  # one rule: the writer's
        assert "half up" not in hint and "rounded" not in hint
    assert "more than one decimal" in hints[0] and "keeps the value" in hints[0]
    assert "write 0.5 " in hints[1] and "write 1.0 " in hints[2]
