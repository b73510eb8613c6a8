"""GET/POST /posts, GET/PATCH/DELETE /posts/{postId}."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter
from fastapi import Body
from fastapi import Depends
from fastapi import Path
from fastapi import Query
from fastapi import Response
from starlette.convertors import Convertor
from starlette.convertors import register_url_convertor

from pressroom.auth.scopes import MANAGER_ROLES
from pressroom.http.access import PostsRead
from pressroom.http.access import PostsWrite
from pressroom.http.access import insufficient_role
from pressroom.http.access import manager_only_when
from pressroom.http.documents import document_response
from pressroom.http.documents import kept_answer
from pressroom.http.documents import page_body
from pressroom.http.openapi import answer_examples
from pressroom.http.routing import Audit
from pressroom.http.routing import PressroomRoute
from pressroom.http.routing import RuntimeDep
from pressroom.http.routing import Session
from pressroom.http.routing import UnitOfWork
from pressroom.kit.pagination import Collection
from pressroom.kit.pagination import Pagination
from pressroom.posts import service
from pressroom.posts.approval import decides_approval
from pressroom.posts.creating import create_post as create
from pressroom.posts.preflight import preflight_post as preflight
from pressroom.posts.preflight_examples import PREFLIGHT_EXAMPLES
from pressroom.posts.preflight_examples import PREFLIGHT_REQUEST_EXAMPLES
from pressroom.posts.repository import PostFilters
from pressroom.posts.schemas import DeletedPost
from pressroom.posts.schemas import Post
from pressroom.posts.schemas import PostCreate
from pressroom.posts.schemas import PostPreflight
from pressroom.posts.schemas import PostStatus
from pressroom.posts.schemas import PostUpdate
from pressroom.posts.schemas import QueryTime
from pressroom.posts.updating import update_post as update


class _PostIdSegment(Convertor[str]):
    """Any path segment but `preflight`: `/posts/preflight` is an operation of its own, and a
    literal path wins over a template whatever the method (as OpenAPI matches paths), so
    `GET /posts/preflight` is a 405, not a 400 on `postId`."""

    regex = "(?!preflight(?:/|$))[^/]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("post_id", _PostIdSegment())
_POST_PATH = "/posts/{postId:post_id}"

PostId = Annotated[uuid.UUID, Path(alias="postId", description="The post's id.")]

router = APIRouter(prefix="/api/v1", route_class=PressroomRoute, tags=["Posts"])


def _decides_approval(body: object) -> bool:
    """The raw PATCH body carries an approval decision (`approval.status`)."""
    approval = body.get("approval") if isinstance(body, dict) else None
    return isinstance(approval, dict) and approval.get("status") is not None


# Deciding is for owners and admins; checked on the raw body before anything else is.
ApprovalDecider = Annotated[None, Depends(manager_only_when(_decides_approval))]

_LIFECYCLE = """
Lifecycle: a post without `scheduledAt` and without `publishNow` is a `draft`. A future
`scheduledAt` makes it `scheduled` (emitting `post.scheduled.v1`); `publishNow` sends it straight
to `publishing`. With `approval.required`, a scheduled or publish-now post waits in
`pending_approval` until an owner or admin approves it (then `scheduled`, or `publishing` if
due) or rejects it (back to `draft`). Once every target is settled the post is `published`,
`partially_published` or `failed`. Each target is validated against its provider's declaration
(`GET /providers/{providerId}`); every violation is a field error such as `targets[1].text`.
"""


@router.get(
    "/posts",
    operation_id="listPosts",
    # The handler answers a page the database wrote (posts/wire_sql.py): the model is its
    # schema in the OpenAPI document.
    response_model=Collection[Post],
    description="Scope `posts:read`. "
    "Posts of the organization, newest first (keyset pagination on createdAt, "
    "id). `start` and `end` bound the post date inclusively: the earliest `publishedAt` of "
    "its targets, else its `scheduledAt`, else its `createdAt`, compared at millisecond "
    "precision (the precision of every time the API returns). A `channelId` must name a "
    "connected channel of the organization (else 400).",
)
async def list_posts(
    principal: PostsRead,
    unit: UnitOfWork,
    runtime: RuntimeDep,
    page: Pagination,
    status: Annotated[PostStatus | None, Query(description="Only posts in this status.")] = None,
    channel_id: Annotated[
        uuid.UUID | None,
        Query(alias="channelId", description="Only posts with a target on this channel."),
    ] = None,
    tag: Annotated[
        str | None, Query(max_length=100, description="Only posts with this campaign tag.")
    ] = None,
    start: Annotated[
        QueryTime | None,
        Query(description="Inclusive lower bound of the post date (RFC 3339 with offset)."),
    ] = None,
    end: Annotated[
        QueryTime | None,
        Query(description="Inclusive upper bound of the post date (RFC 3339 with offset)."),
    ] = None,
) -> Response:
    """List posts."""
    filters = PostFilters(status, channel_id, tag, start, end)
    organization_id = principal.organization_id

    async def read() -> bytes:
        found = await service.list_posts(unit.session, runtime, organization_id, page, filters)
        return page_body(*found)

    return await kept_answer(runtime, ("listPosts", organization_id, page, filters), read)


@router.post(
    "/posts",
    operation_id="createPost",
    response_model=Post,
    status_code=201,
    description="Scope `posts:write`. "
    "Create a post with 1-20 targets, at most one per (channelId, contentKind). "
    "A target's effective text and media are its own overrides, else the post's. "
    "`contentKind` defaults to the provider's first content kind. A past `scheduledAt` is "
    "400 (use `publishNow`); naive times are 400. Answers 201 with `Location`; emits "
    "`post.created.v1` (and `post.scheduled.v1` when the post is scheduled)." + _LIFECYCLE,
)
async def create_post(
    body: PostCreate,
    principal: PostsWrite,
    session: Session,
    runtime: RuntimeDep,
    audit: Audit,
) -> Response:
    """Create a post."""
    post = await create(session, runtime, principal, body)
    audit.set("post", post["id"], body.model_dump(mode="json", by_alias=True, exclude_unset=True))
    return document_response(post, 201, {"Location": f"/api/v1/posts/{post['id']}"})


@router.post(
    "/posts/preflight",
    operation_id="preflightPost",
    responses={200: {"description": "What createPost would make of it."}},
    description="Scope `posts:read`. "
    "Takes a `createPost` body and creates nothing (no post, event, audit entry or stored "
    "idempotent response): it answers what createPost would do with it now, for a composer "
    "to show as the person types. `ok` is true exactly when createPost would accept the body; "
    "`errors` holds every problem createPost would refuse it with (same `field`, `code`, "
    "`message` and order), such as a text over the network's limit, media the network "
    "refuses, an unknown channel or media id, or a `scheduledAt` in the past. Each target "
    "shows its effective text and media (the override, else the post's), the text counted "
    "the network's way (`length`: `count`, `limit`, `unit`, `remaining`) and its media "
    "against the network's rule. A body the schema refuses (malformed JSON, a wrong type, "
    "an unknown field, a value outside the schema's bounds such as no target or more than "
    "20) is the same 400 as createPost gives. An `Idempotency-Key` header is ignored: "
    "there is no effect to repeat.",
)
@answer_examples(200, PREFLIGHT_EXAMPLES)
async def preflight_post(
    body: Annotated[PostCreate, Body(openapi_examples=PREFLIGHT_REQUEST_EXAMPLES)],
    principal: PostsRead,
    session: Session,
    runtime: RuntimeDep,
) -> PostPreflight:
    """Check a post without creating it."""
    return await preflight(session, runtime, principal, body)


@router.get(
    _POST_PATH,
    operation_id="getPost",
    description="Scope `posts:read`. Another organization's post is 404, like a missing one.",
)
async def get_post(post_id: PostId, principal: PostsRead, session: Session) -> Post:
    """Read a post with its targets."""
    return await service.get_post(session, principal.organization_id, post_id)


@router.patch(
    _POST_PATH,
    operation_id="updatePost",
    description="Scope `posts:write`. "
    "Merge the given top-level fields into the post. `scheduledAt: null` makes a "
    "draft again; `publishNow: true` publishes now (and retries failed targets). A new "
    "schedule (`scheduledAt`, `scheduledAt: null` or `publishNow: true`) also moves targets "
    "that are `publishing` but not in flight (waiting for a retry, or left by a stopped "
    "worker): they start afresh on the new schedule (attempts and error cleared), and the "
    "outcome of the earlier schedule is never recorded. A target whose publish is in flight "
    "at that moment keeps going and records what the network answered. `targets`, "
    "when given, is the new list: an entry with an `id` is merged into that target, one "
    "without adds a target, and targets left out are removed. Changing the effective text, "
    "media, channel, content kind or options of a `publishing` or `published` target, or "
    "removing one, is 409 `post_not_editable`. Deciding `approval.status` (or turning "
    "`approval.required` off) needs an owner or admin: 403 `insufficient_role` otherwise "
    "(for a decision, before the idempotency key, the body and the post are checked); "
    "the decision records `decidedBy` and `decidedAt`. Approving a post that does not "
    "require approval is 400; rejecting one that is already publishing or published is 409 "
    "`conflict`. A target added to a post that is publishing or already published goes out "
    "at once (or at its future `scheduledAt`). Every successful PATCH emits "
    "`post.updated.v1` (and `post.scheduled.v1` when the post enters `scheduled`)." + _LIFECYCLE,
)
async def update_post(
    post_id: PostId,
    body: PostUpdate,
    principal: PostsWrite,
    decider: ApprovalDecider,
    session: Session,
    runtime: RuntimeDep,
    audit: Audit,
) -> Post:
    """Update a post."""
    if decides_approval(body) and principal.member_role not in MANAGER_ROLES:
        raise insufficient_role()
    post = await update(session, runtime, principal, post_id, body)
    audit.set("post", post.id, body.model_dump(mode="json", by_alias=True, exclude_unset=True))
    return post


@router.delete(
    _POST_PATH,
    operation_id="deletePost",
    description="Scope `posts:write`. "
    "Delete the post: it answers 404 and leaves the collection; its unpublished "
    "targets are canceled (copies already published on the networks stay). Emits "
    "`post.deleted.v1` carrying the post as it was before deletion. A target whose publish "
    "is in flight at that moment cannot be called back: if the network publishes it, the "
    "target is recorded as `published` and `post.published.v1` reports the copy with its "
    "`url` (so that it can be removed there); otherwise it is canceled. A deleted post is "
    "never sent to a network again.",
)
async def delete_post(
    post_id: PostId, principal: PostsWrite, session: Session, runtime: RuntimeDep, audit: Audit
) -> DeletedPost:
    """Delete a post."""
    await service.delete_post(session, runtime, principal.organization_id, post_id)
    audit.set("post", post_id, {"deleted": True})
    return DeletedPost(id=post_id)
