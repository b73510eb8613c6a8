"""Pages: the templates, the person's time zone, and the headers every console page carries."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo
from zoneinfo import ZoneInfoNotFoundError
from zoneinfo import available_timezones

from fastapi import Request
from fastapi.templating import Jinja2Templates
from starlette.responses import HTMLResponse

from pressroom.console.sessions import Visitor

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
TZ_COOKIE = "pressroom_tz"
# The console's own scripts and styles only: no inline script, no other origin.
_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


def time_zone(request: Request) -> ZoneInfo:
    """The zone the person chose (on this request, else remembered in a cookie), else UTC."""
    name = getattr(request.state, "chosen_zone", None) or request.cookies.get(TZ_COOKIE, "UTC")
    try:
        return ZoneInfo(name) if name in zone_names() else ZoneInfo("UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


_ZONES: list[str] = []


def zone_names() -> list[str]:
    if not _ZONES:
        _ZONES.extend(sorted(available_timezones() - {"localtime", "Factory"}))
    return _ZONES


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)


def render(
    request: Request,
    template: str,
    context: dict[str, Any],
    *,
    person: Visitor | None = None,
    status: int = 200,
) -> HTMLResponse:
    zone = time_zone(request)

    def when(value: str | None, pattern: str = "%a %d %b %Y, %H:%M") -> str:
        moment = parse_time(value)
        return moment.astimezone(zone).strftime(pattern) if moment else ""

    full = {
        "request": request,
        "person": person,
        "principal": person.signed_in.principal if person else None,
        "csrf": person.csrf if person else "",
        "can": person.api.can if person else (lambda *_: False),
        "when": when,
        "zone": zone.key,
        **context,
    }
    response = TEMPLATES.TemplateResponse(request, template, full, status_code=status)
    response.headers.update(_HEADERS)
    return response
