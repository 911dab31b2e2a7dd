"""``python -m sitemapkit``: the command-line tool."""

from sitemapkit.cli.main import console

console()
