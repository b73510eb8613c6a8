"""Posts: the calendar (week or month, in the person's time zone, both remembered), the list
with filters, and each post with its targets; approval requests and decisions."""

from __future__ import annotations

from datetime import date
from datetime import datetime
from typing import Annotated
from typing import Any
from typing import get_args

from fastapi import APIRouter
from fastapi import Depends
from fastapi import Form
from fastapi import Query
from fastapi import Request
from starlette.responses import RedirectResponse
from starlette.responses import Response

from pressroom.console import calendar
from pressroom.console.overview import ADVICE
from pressroom.console.overview import channel_names
from pressroom.console.rendering import TZ_COOKIE
from pressroom.console.rendering import render
from pressroom.console.rendering import time_zone
from pressroom.console.rendering import zone_names
from pressroom.console.sessions import Visitor
from pressroom.console.sessions import check_csrf
from pressroom.console.sessions import visitor
from pressroom.posts.schemas import PostStatus

router = APIRouter(prefix="/console/posts", include_in_schema=False)
Person = Annotated[Visitor, Depends(visitor)]
VIEW_COOKIE = "pressroom_view"
_YEAR = 365 * 86400
STATUSES = get_args(PostStatus)


def _remember(request: Request, response: Response, name: str, value: str) -> None:
    """A preference kept in the browser for a year (not a secret: readable by the page)."""
    if request.cookies.get(name) != value:
        response.set_cookie(name, value, max_age=_YEAR, samesite="lax", path="/console")


def _anchor(value: str | None, today: date) -> date:
    try:
        return date.fromisoformat(value) if value else today
    except ValueError:
        return today


@router.get("")
async def posts_calendar(
    request: Request,
    person: Person,
    view: Annotated[str | None, Query()] = None,
    day: Annotated[str | None, Query(alias="date")] = None,
    tz: Annotated[str | None, Query()] = None,
) -> Response:
    """The calendar: every post on its local day (its publication, schedule or creation)."""
    chosen_view = view if view in calendar.VIEWS else request.cookies.get(VIEW_COOKIE, "week")
    chosen_view = chosen_view if chosen_view in calendar.VIEWS else "week"
    if tz is not None and tz in zone_names():
        request.state.chosen_zone = tz  # this page is in the zone just chosen
    zone = time_zone(request)
    anchor = _anchor(day, datetime.now(zone).date())
    days = calendar.days_of(chosen_view, anchor)
    start, end = calendar.utc_bounds(days, zone)
    posts = await person.api.items(
        "/posts", limit=500, start=start.isoformat(), end=end.isoformat()
    )
    context = {
        "section": "posts",
        "view": chosen_view,
        "anchor": anchor,
        "days": days,
        "entries": calendar.by_local_day(posts, zone),
        "previous": calendar.step(chosen_view, anchor, -1),
        "next": calendar.step(chosen_view, anchor, 1),
        "zones": zone_names(),
        "channels": await channel_names(person.api),
    }
    response = render(request, "posts_calendar.html", context, person=person)
    _remember(request, response, VIEW_COOKIE, chosen_view)
    _remember(request, response, TZ_COOKIE, zone.key)
    return response


async def _list_filters(
    status: Annotated[str | None, Query()] = None,
    channel: Annotated[str | None, Query(alias="channelId")] = None,
    tag: Annotated[str | None, Query()] = None,
) -> dict[str, str | None]:
    """The list's filters, by listPosts' names for them."""
    return {"status": status, "channelId": channel, "tag": tag}


@router.get("/list")
async def posts_list(
    request: Request,
    person: Person,
    filters: Annotated[dict[str, str | None], Depends(_list_filters)],
    cursor: Annotated[str | None, Query()] = None,
) -> Response:
    """Posts newest first, filtered as listPosts filters them."""
    answer = await person.api.get("/posts", pageSize=25, cursor=cursor, **filters)
    context = {
        "section": "posts",
        "posts": answer.body["items"] if answer.ok else [],
        "next_cursor": answer.body.get("nextCursor") if answer.ok else None,
        "error": None if answer.ok else answer.detail,
        "filters": filters,
        "statuses": STATUSES,
        "channels": await channel_names(person.api),
    }
    return render(request, "posts_list.html", context, person=person)


async def _post_page(request: Request, person: Visitor, post_id: str, **extra: Any) -> Response:
    status = extra.pop("status", 200)
    answer = await person.api.get(f"/posts/{post_id}")
    if not answer.ok:
        status = answer.status if answer.status in (403, 404) else 400
        refusal = {"error": answer.detail, "heading": "No such post"}
        return render(request, "error.html", refusal, person=person, status=status)
    context: dict[str, Any] = {
        "section": "posts",
        "post": answer.body,
        "channels": await channel_names(person.api),
        "advice": ADVICE,
        **extra,
    }
    return render(request, "post_detail.html", context, person=person, status=status)


@router.get("/{post_id}")
async def post_detail(request: Request, person: Person, post_id: str) -> Response:
    """One post: its targets' statuses, errors (the network's own words) and published links."""
    return await _post_page(request, person, post_id)


DECISIONS = {
    "request": {"required": True},
    "approve": {"status": "approved"},
    "reject": {"status": "rejected"},
}


@router.post("/{post_id}/approval")
async def decide_approval(
    request: Request, person: Person, post_id: str, decision: Annotated[str, Form()] = ""
) -> Response:
    """Request approval (posts:write), or approve or reject (owners and admins: the API
    refuses anyone else with 403, shown as it is)."""
    await check_csrf(request, person)
    approval = DECISIONS.get(decision)
    if approval is None:
        return await _post_page(request, person, post_id, error="Unknown decision.", status=400)
    answer = await person.api.call("PATCH", f"/posts/{post_id}", json={"approval": approval})
    if not answer.ok:
        return await _post_page(request, person, post_id, error=answer.detail, status=answer.status)
    return RedirectResponse(f"/console/posts/{post_id}", status_code=303)
