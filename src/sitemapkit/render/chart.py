"""render: the charts' geometry — counts in, rectangles and labels out, for inline SVG. Pure.

No chart library: a chart is a :class:`Chart` (a view box, bars, labels) that the
template draws as ``<rect>`` and ``<text>`` elements, so the page needs no script to
show it and every value is also in a ``<title>`` (a tooltip, and text for screen
readers). Two shapes: :func:`columns` (one vertical bar per label: months, tenths,
sitemaps) and :func:`rows` (one horizontal bar per label, stacked by part: rules by
severity).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

__all__ = ["Bar", "Chart", "Label", "columns", "rows"]

_WIDTH: Final = 640
_HEIGHT: Final = 220
_LEFT: Final = 56  # room for the value axis
_BOTTOM: Final = 44  # room for the labels under the columns
_TOP: Final = 16
_ROW: Final = 22  # height of one row of a row chart
_LABELS: Final = 12  # at most this many labels under the columns


@dataclass(frozen=True, slots=True)
class Bar:
    """One rectangle: its place, its CSS class and its tooltip."""

    x: float
    y: float
    width: float
    height: float
    css: str
    title: str


@dataclass(frozen=True, slots=True)
class Label:
    """One text: its place, its anchor (``start``, ``middle``, ``end``) and its words."""

    x: float
    y: float
    text: str
    anchor: str = "middle"


@dataclass(frozen=True, slots=True)
class Chart:
    """A chart to draw: ``width`` × ``height`` user units, its bars, its labels, and a
    legend of (CSS class, words); ``empty`` says why there is nothing to draw."""

    title: str
    width: int
    height: int
    bars: list[Bar] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    legend: list[tuple[str, str]] = field(default_factory=list)
    empty: str | None = None


def columns(title: str, items: Sequence[tuple[str, int]], *, css: str = "bar") -> Chart:
    """A vertical bar per ``(label, value)``, in the order given.

    >>> chart = columns("Lastmod by month", [("2024-04", 2), ("2024-05", 4)])
    >>> [(b.height, b.title) for b in chart.bars]
    [(80.0, '2024-04: 2'), (160.0, '2024-05: 4')]
    """
    if not items or not any(v for _, v in items):
        return Chart(title, _WIDTH, 60, empty="nothing to show")
    plot_w, plot_h = _WIDTH - _LEFT - 8, _HEIGHT - _TOP - _BOTTOM
    top = max(v for _, v in items)
    step = plot_w / len(items)
    gap = min(step * 0.2, 6.0)
    bars, labels = [], _value_axis(top, plot_h)
    every = -(-len(items) // _LABELS)  # ceiling: a label every `every` columns
    for i, (label, value) in enumerate(items):
        height = round(plot_h * value / top, 1)
        x = _LEFT + i * step
        bars.append(
            Bar(
                round(x + gap / 2, 1),
                round(_TOP + plot_h - height, 1),
                round(step - gap, 1),
                height,
                css,
                f"{label}: {value:,}",
            )
        )
        if i % every == 0:
            labels.append(Label(round(x + step / 2, 1), _HEIGHT - _BOTTOM + 16, _short(label)))
    return Chart(title, _WIDTH, _HEIGHT, bars, labels)


def rows(
    title: str,
    items: Sequence[tuple[str, Sequence[tuple[str, int]]]],
    *,
    legend: Sequence[tuple[str, str]] = (),
) -> Chart:
    """A horizontal bar per ``(label, parts)``; ``parts`` are ``(CSS class, value)``,
    stacked left to right; the total is written after the bar.

    >>> chart = rows("Findings", [("SM301", [("error", 3), ("warning", 1)])])
    >>> [(b.css, b.width) for b in chart.bars], chart.labels[-1].text
    ([('error', 337.5), ('warning', 112.5)], '4')
    """
    totals = [sum(v for _, v in parts) for _, parts in items]
    if not items or not any(totals):
        return Chart(title, _WIDTH, 60, empty="nothing to show")
    left, room = 96, _WIDTH - 96 - 94
    top = max(totals)
    bars, labels = [], []
    for i, ((label, parts), total) in enumerate(zip(items, totals, strict=True)):
        y = 8 + i * _ROW
        labels.append(Label(left - 8, y + 15, _short(label), "end"))
        x = float(left)
        for css, value in parts:
            if not value:
                continue
            width = round(room * value / top, 1)
            bars.append(Bar(round(x, 1), y + 3, width, _ROW - 6, css, f"{label}: {value:,} {css}"))
            x += width
        labels.append(Label(round(x + 6, 1), y + 15, f"{total:,}", "start"))
    return Chart(title, _WIDTH, 16 + len(items) * _ROW, bars, labels, list(legend))


def _value_axis(top: int, plot_h: int) -> list[Label]:
    """The value axis: 0, half and the top value, at the left of the plot."""
    marks = sorted({0, top // 2, top})
    return [
        Label(_LEFT - 6, round(_TOP + plot_h - plot_h * m / top + 4, 1), f"{m:,}", "end")
        for m in marks
    ]


def _short(text: str, most: int = 14) -> str:
    """A label that fits under a column or beside a row: the end of a long name kept."""
    return text if len(text) <= most else "…" + text[-(most - 1) :]
