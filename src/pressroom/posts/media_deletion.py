"""deleteMedia: removing an asset from the library. It lives with the posts, not in `media`,
because whether an asset may go depends on the posts still to be published with it (the
media domain sits below the posts and knows nothing of them)."""

from __future__ import annotations

import uuid
from typing import Annotated
from typing import Literal

from fastapi import APIRouter
from fastapi import Path
from sqlalchemy import delete
from sqlalchemy import select

from pressroom.http.access import MediaWrite
from pressroom.http.routing import Audit
from pressroom.http.routing import PressroomRoute
from pressroom.http.routing import RuntimeDep
from pressroom.http.routing import Session
from pressroom.kit.errors import PressroomError
from pressroom.kit.schema import APIModel
from pressroom.media import service as media
from pressroom.media.models import MediaAsset
from pressroom.media.preview import forget_preview
from pressroom.posts.models import Post
from pressroom.posts.models import PostTarget

router = APIRouter(prefix="/api/v1", route_class=PressroomRoute, tags=["Media"])
MediaId = Annotated[uuid.UUID, Path(alias="mediaId", description="The asset's id.")]
# Targets in these statuses will still be published (or are being published) with their media.
WAITING = ("draft", "pending_approval", "scheduled", "publishing")


class DeletedMedia(APIModel):
    id: uuid.UUID
    object: Literal["media"] = "media"
    deleted: Literal[True] = True


async def posts_using(session: Session, organization_id: uuid.UUID, asset: str) -> list[str]:
    """Ids of the organization's posts with a target still to publish that uses `asset`,
    through the post's media or the target's own."""
    rows = await session.execute(
        select(Post.id, Post.media_ids, PostTarget.media_ids_override)
        .join(PostTarget, PostTarget.post_id == Post.id)
        .where(
            Post.organization_id == organization_id,
            Post.deleted_at.is_(None),
            PostTarget.status.in_(WAITING),
        )
    )
    using: dict[str, None] = {}
    for post_id, post_media, override in rows:
        effective = override if override is not None else post_media
        if asset in (effective or {}).get("ids", []):
            using[str(post_id)] = None
    return list(using)


@router.delete(
    "/media/{mediaId}",
    operation_id="deleteMedia",
    description="Scope `media:write`. Removes the asset from the library: it is no longer "
    "listed, read or served (its content and preview are 404 at once), and its stored bytes "
    "are removed by the orphan sweeper (within about seven hours). An asset that a post "
    "still to be published uses (a target in `draft`, `pending_approval`, `scheduled` or "
    "`publishing`, through the post's `mediaIds` or its own) is 409 `conflict` naming those "
    "posts: take it out of them, or delete them, first. Published and failed posts keep "
    "their `mediaIds` as history.",
)
async def delete_media(
    media_id: MediaId,
    principal: MediaWrite,
    session: Session,
    audit: Audit,
    runtime: RuntimeDep,
) -> DeletedMedia:
    """Delete a media asset."""
    asset = await media.get_media(session, principal.organization_id, media_id)
    using = await posts_using(session, principal.organization_id, str(asset.id))
    if using:
        shown = ", ".join(using[:5]) + (f" and {len(using) - 5} more" if len(using) > 5 else "")
        raise PressroomError(
            "conflict",
            detail=f"The asset is used by posts still to be published ({shown}): take it out "
            "of them, or delete them, first.",
        )
    await session.execute(delete(MediaAsset).where(MediaAsset.id == asset.id))
    await forget_preview(runtime, asset.id)
    audit.set(
        "media",
        asset.id,
        {"deleted": True, "filename": asset.filename, "sha256": asset.sha256},
    )
    return DeletedMedia(id=asset.id)
