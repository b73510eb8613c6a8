"""The pages served to people rather than API clients: the documentation, and where `GET /`
sends a browser."""

from __future__ import annotations

from pathlib import Path

# Our own front-end files and the vendored packages (`vendor/`, refreshed by
# scripts/vendor_assets.py), shipped inside the package.
STATIC = Path(__file__).resolve().parent.parent / "static"
SWAGGER_UI = "/static/vendor/swagger-ui"

DOCS_PAGE = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pressroom API</title>
<link rel="icon" type="image/png" href="{SWAGGER_UI}/favicon-32x32.png">
<link rel="stylesheet" href="{SWAGGER_UI}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui" data-openapi-url="/openapi.json"></div>
<script src="{SWAGGER_UI}/swagger-ui-bundle.js"></script>
<script src="/static/docs/docs.js"></script>
</body>
</html>
"""

# The documentation page loads nothing but this service's own files: no inline script, no
# other origin. Swagger UI draws its icons as data: images.
DOCS_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)

_HTML = frozenset({"text/html", "application/xhtml+xml"})
_JSON = frozenset({"application/json", "application/problem+json"})


def prefers_html(accept: str) -> bool:
    """The Accept header asks for HTML by name at least as much as for JSON: a browser's
    navigation (`text/html,...,*/*;q=0.8`), not curl's `*/*` or an API client's JSON."""
    html = json = 0.0
    for entry in accept.split(","):
        media, *parameters = (part.strip() for part in entry.split(";"))
        quality = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        media = media.lower()
        if media in _HTML:
            html = max(html, quality)
        elif media in _JSON:
            json = max(json, quality)
    return html > 0 and html >= json
