"""cli: the ``sitemapkit`` command, thin over the public API."""
