"""render: the HTML report, one self-contained page from a validation report. Pure.

Jinja2 with autoescaping on (messages and locs hold the documents' own text), templates
as package data (``render/templates``), the style and the filter script inline, charts
as inline SVG (:mod:`.chart`): the page requests nothing and opens from disk or from an
e-mail attachment. The data behind it is embedded as
``<script type="application/json" id="sitemapkit-report">``: the very document that
``sitemapkit validate --format json`` prints (:func:`~sitemapkit.lint.report.render_json`),
with ``<``, ``>`` and ``&`` written as JSON escapes so that no text in it can end the
element. The page has no timestamp: the same report gives the same bytes.

Room is left for the coverage of an audit (issue #14 §1): another section and chart
built by :mod:`.view` from the audit's own counts.
"""

from __future__ import annotations

from functools import cache
from typing import Final

import jinja2
from markupsafe import Markup

from .. import __version__
from ..lint.report import ValidationReport, render_json
from .stats import SetStats
from .view import PER_RULE, build_page

__all__ = ["embedded_json", "render_html"]

_SCRIPT_SAFE: Final = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("sitemapkit.render", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["num"] = lambda n: f"{n:,}"
    return env


def embedded_json(report: ValidationReport) -> Markup:
    """``validate --format json``'s document, safe inside a ``<script>`` element: the same
    JSON value (``<`` is ``\\u003c`` there, which JSON reads back as ``<``).

    >>> text = str(embedded_json(ValidationReport(notes=["</script> ends here"])))
    >>> "</script>" in text, r'"\\u003c/script\\u003e ends here"' in text
    (False, True)
    """
    return Markup(render_json(report).translate(_SCRIPT_SAFE))


def render_html(
    report: ValidationReport,
    stats: SetStats,
    *,
    title: str,
    repository: str | None = None,
    per_rule: int = PER_RULE,
) -> str:
    """The report page of ``report``, with the counts of ``stats`` (see :mod:`.stats`).

    ``title`` heads the page (the targets, say); rules link to their entry on the rules
    page, resolved against ``repository`` when given (as SARIF's ``helpUri``); at most
    ``per_rule`` findings of a rule are in the table, the others counted.

    >>> page = render_html(ValidationReport(files=["s.xml"]), SetStats(), title="<s.xml>")
    >>> "<title>&lt;s.xml&gt;</title>" in page, 'id="sitemapkit-report"' in page
    (True, True)
    """
    view = build_page(report, stats, title=title, repository=repository, per_rule=per_rule)
    template = _environment().get_template("report.html.j2")
    return template.render(
        page=view, data=embedded_json(report), version=__version__, per_rule=per_rule
    )
