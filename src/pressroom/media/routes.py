"""POST /media (streaming multipart upload), GET /media, GET /media/{mediaId} and its bytes."""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Annotated
from typing import Any
from urllib.parse import quote

import anyio.to_thread
from fastapi import APIRouter
from fastapi import Header
from fastapi import Path
from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.responses import StreamingResponse

from pressroom.http import idempotency
from pressroom.http.access import MediaRead
from pressroom.http.access import MediaWrite
from pressroom.http.problems import error_responses
from pressroom.http.routing import Audit
from pressroom.http.routing import LazyUnitOfWork
from pressroom.http.routing import PressroomRoute
from pressroom.http.routing import RuntimeDep
from pressroom.http.routing import Session
from pressroom.http.routing import claim_idempotency
from pressroom.kit.errors import PressroomError
from pressroom.kit.errors import field_error
from pressroom.kit.errors import not_found
from pressroom.kit.pagination import Collection
from pressroom.kit.pagination import Pagination
from pressroom.media import service
from pressroom.media.delivery import asset_response
from pressroom.media.delivery import etag_matches
from pressroom.media.delivery import etag_of
from pressroom.media.multipart import FIELD_NAME
from pressroom.media.multipart import UploadLimits
from pressroom.media.multipart import canonical_digest
from pressroom.media.multipart import discard_staged
from pressroom.media.multipart import format_size
from pressroom.media.multipart import read_upload
from pressroom.media.preview import NoPreview
from pressroom.media.preview import preview_of
from pressroom.media.schemas import Media
from pressroom.media.schemas import MediaBatch
from pressroom.media.upload import Uploader
from pressroom.media.upload import accept_upload

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/v1", route_class=PressroomRoute, tags=["Media"])

MediaId = Annotated[uuid.UUID, Path(alias="mediaId", description="The asset's id.")]

_ACCEPTED = "JPEG, PNG, WebP, GIF, MP4, QuickTime (.mov), WebM and PDF"
ACCEPTED_TYPES = (
    "image/jpeg",
    "image/png",
    "image/webp",
    "image/gif",
    "video/mp4",
    "video/quicktime",
    "video/webm",
    "application/pdf",
)

# The body is read by our streaming parser, not by FastAPI, so it is declared here by hand:
# exactly what `read_upload` accepts.
_UPLOAD_BODY: dict[str, Any] = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": [FIELD_NAME],
                "properties": {
                    FIELD_NAME: {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": 10,
                        "items": {"type": "string", "format": "binary"},
                        "description": f"One part per file, all named `{FIELD_NAME}`. Accepted: "
                        f"{_ACCEPTED}, recognised from the bytes; the part's Content-Type and "
                        "file name are not trusted (the name is kept as `filename`).",
                    }
                },
                "additionalProperties": False,
            },
            "encoding": {
                FIELD_NAME: {
                    "style": "form",
                    "explode": True,
                    # What each part should be; the server checks the bytes, not this header.
                    "contentType": ", ".join(ACCEPTED_TYPES),
                }
            },
        }
    },
}

_UPLOAD_DESCRIPTION = f"""\
Scope `media:write`. Upload 1 to 10 files as `multipart/form-data`, one `files` part each.
The response lists the assets in the order of the parts.

The request is streamed: each file is written to staging while it arrives, hashed (SHA-256)
on the way, and refused with **413** `payload_too_large` as soon as it crosses its size limit
(defaults: images 20 MiB, GIF 15 MiB, video 1 GiB, PDF documents 100 MB, the whole request
2 GiB; configurable).
A declared `Content-Length` over the request limit is refused before any byte is read.

The type is recognised from the bytes, never from the declared Content-Type or file name:
{_ACCEPTED}. Anything else is **415** `unsupported_media_type`, as is a request that is not
`multipart/form-data`. Every file is then decoded: an empty, truncated or corrupt file, or a
video without a video stream is **422** `unprocessable_media` (field error code `undecodable`).
A PDF (kind `document`) must start with its header (`%PDF-1.x` or `%PDF-2.0`), end with its
trailer (`startxref` and `%%EOF` in the last 1024 bytes), be readable through its
cross-reference data to its page tree, have at least one page and no password; else it is
**422** `undecodable` with the reason, as is a part declared `application/pdf` (or named
`*.pdf`) whose bytes are no PDF. Its pages are counted (`pageCount`). Decoding is bounded and
judged from headers and frame structure before any pixel is decoded: an image (or video frame)
over 100 megapixels, an animation whose canvas is over 25 megapixels or with more than 10,000
frames, frames x canvas pixels over the decoding budget (default 300 million), or decoding that
takes longer than its time limit (default 30 s) is **422** `unprocessable_media` with field
error code `decoding_limit` and a reason naming the limit. Zero files, more than 10, or any
other form field is **400**.

All or nothing: if one file is refused, nothing is stored. Errors about a file name it in
`detail` and in `errors[0].field` as `files[i]` (0-based part index).

Emits `media.created.v1` (`{{"media": <getMedia form>}}`) per asset. With an
`Idempotency-Key`, the request is identified by its files' names and bytes (not by the
multipart boundary or part headers), computed after the body is received.
"""


def _deferred_session(request: Request) -> Callable[[], Awaitable[AsyncSession]]:
    """The request's transaction, opened only when first used: an upload can take minutes to
    arrive, and on SQLite an open transaction holds the database's write lock."""
    unit: LazyUnitOfWork = request.state.unit
    return unit.session


def _check_declared_length(request: Request, limits: UploadLimits) -> None:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limits.request_bytes:
        raise PressroomError(
            "payload_too_large",
            detail=f"The request's Content-Length of {int(declared)} bytes exceeds the "
            f"size limit of {format_size(limits.request_bytes)}.",
        )


@router.post(
    "/media",
    operation_id="uploadMedia",
    status_code=201,
    response_model=MediaBatch,
    responses=error_responses(413, 415, 422),
    description=_UPLOAD_DESCRIPTION,
    openapi_extra={"x-idempotency-fingerprint": "files", "requestBody": _UPLOAD_BODY},
)
async def upload_media(
    request: Request, principal: MediaWrite, audit: Audit, runtime: RuntimeDep
) -> Response | MediaBatch:
    """Upload media files (multipart, streamed, inspected)."""
    key = request.headers.get(idempotency.HEADER)
    if key is not None:
        idempotency.check_key(key)  # a malformed key fails before the body is received
    limits = service.upload_limits(runtime.settings)
    _check_declared_length(request, limits)
    staging = service.staging_dir(runtime.settings)
    await anyio.to_thread.run_sync(functools.partial(staging.mkdir, parents=True, exist_ok=True))
    try:
        files = await read_upload(
            request.stream(),
            request.headers.get("content-type", ""),
            staging,
            limits,
            write_back=service.stores_staged_files_in_place(runtime.settings),
        )
    except ClientDisconnect:
        raise field_error(
            FIELD_NAME, "incomplete", "the client closed the connection during the upload"
        ) from None
    try:
        if key is not None:
            replay = await claim_idempotency(
                request, canonical_digest(files).encode(), "uploadMedia"
            )
            if replay is not None:
                return replay
        assets = await accept_upload(
            runtime,
            Uploader(principal.organization_id, principal.member_id),
            files,
            _deferred_session(request),
        )
    finally:
        # Accepted files were moved into storage; whatever is left here is of a failure.
        discard_staged(files)
    audit.set(
        "media",
        # One ledger entry per request: it names the first asset and lists them all.
        assets[0].id,
        {
            "mediaIds": [str(asset.id) for asset in assets],
            "files": [
                {
                    "filename": asset.filename,
                    "mimeType": asset.mime_type,
                    "sizeBytes": asset.size_bytes,
                    "sha256": asset.sha256,
                }
                for asset in assets
            ],
        },
    )
    return MediaBatch(items=[Media.model_validate(asset) for asset in assets])


@router.get(
    "/media",
    operation_id="listMedia",
    description="Scope `media:read`. Newest first; keyset pagination (`pageSize`, `cursor`).",
)
async def list_media(
    principal: MediaRead,
    session: Session,
    runtime: RuntimeDep,
    page: Pagination,
) -> Collection[Media]:
    """List the organization's media."""
    found = await service.list_media(session, runtime, principal.organization_id, page)
    return Collection[Media].page(found, Media.model_validate)


@router.get(
    "/media/{mediaId}",
    operation_id="getMedia",
    description="Scope `media:read`. Another organization's asset is 404, like a missing one. "
    "Its bytes are served at `/api/v1/media/{mediaId}/content`; a JPEG preview of an image, "
    "GIF or video at `/api/v1/media/{mediaId}/preview`.",
)
async def get_media(media_id: MediaId, principal: MediaRead, session: Session) -> Media:
    """Read one media asset."""
    asset = await service.get_media(session, principal.organization_id, media_id)
    return Media.model_validate(asset)


_BINARY = {"schema": {"type": "string", "format": "binary"}}
_CONTENT_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The stored bytes, exactly as uploaded.",
        "content": {mime: _BINARY for mime in ACCEPTED_TYPES},
        "headers": {
            "ETag": {
                "description": 'The quoted SHA-256 hex of the bytes (`"<sha256>"`).',
                "schema": {"type": "string"},
            },
            "Content-Length": {"schema": {"type": "integer"}},
            "Content-Disposition": {
                "description": "`inline` with the asset's `filename`, its extension replaced by "
                "that of `mimeType` when it names another type (`x.html` holding a PNG is served "
                "as `x.png`); an ASCII `filename` and the exact UTF-8 `filename*` (RFC 6266).",
                "schema": {"type": "string"},
            },
        },
    },
    304: {"description": "`If-None-Match` names the current ETag; no body."},
}


def _fallback_char(char: str) -> str:
    if char == '"':
        return "'"
    if " " <= char <= "~" and char not in "\\%":
        return char
    return "_"


def content_disposition(filename: str) -> str:
    """`inline` with the name, safe whatever it holds (RFC 6266): a fallback of printable ASCII
    only, without quotes, backslashes or percent signs (some clients decode those), and the
    exact name percent-encoded as RFC 8187 `filename*` (which also covers CR and LF)."""
    fallback = "".join(_fallback_char(char) for char in filename)
    return f"inline; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


@router.get(
    "/media/{mediaId}/content",
    operation_id="getMediaContent",
    response_model=None,
    response_class=StreamingResponse,
    responses=_CONTENT_RESPONSES,
    description="Scope `media:read`. Streams the asset's bytes with its `mimeType` (the type the "
    "bytes proved) as Content-Type and `X-Content-Type-Options: nosniff`, its size as "
    "Content-Length, its SHA-256 as ETag (a matching `If-None-Match` is 304) and its "
    "`filename` in Content-Disposition with the extension of `mimeType`. The bytes of an asset "
    "never change, so responses are cacheable privately.",
)
async def get_media_content(
    media_id: MediaId,
    principal: MediaRead,
    session: Session,
    runtime: RuntimeDep,
    if_none_match: Annotated[
        str | None,
        Header(
            alias="If-None-Match",
            description="ETags the client holds; a match (or `*`) answers 304 without a body.",
        ),
    ] = None,
) -> Response:
    """Download a media asset's bytes."""
    asset = await service.get_media(session, principal.organization_id, media_id)
    headers = {
        "ETag": etag_of(asset),
        "Cache-Control": "private, max-age=31536000, immutable",
        "X-Content-Type-Options": "nosniff",
    }
    if if_none_match is not None and etag_matches(if_none_match, headers["ETag"]):
        return Response(status_code=304, headers=headers)
    headers["Content-Disposition"] = content_disposition(
        service.served_filename(asset.filename, asset.mime_type)
    )
    return await asset_response(runtime, asset, headers)


@router.get(
    "/media/{mediaId}/preview",
    operation_id="getMediaPreview",
    response_model=None,
    response_class=Response,
    responses={
        200: {
            "description": "A JPEG of at most 320 pixels a side.",
            "content": {"image/jpeg": _BINARY},
        },
    },
    description="Scope `media:read`. A JPEG of at most 320x320 pixels, aspect kept: an image's "
    "thumbnail, a GIF's first frame, a video's first frame (its poster). Made on first request "
    "and kept, like the asset's bytes never changing (cacheable privately, ETag of the "
    "asset). An asset whose frame cannot be decoded again is 404 `not_found`.",
)
async def get_media_preview(
    media_id: MediaId,
    principal: MediaRead,
    session: Session,
    runtime: RuntimeDep,
) -> Response:
    """A small preview of a media asset."""
    asset = await service.get_media(session, principal.organization_id, media_id)
    try:
        path = await preview_of(runtime, asset)
    except NoPreview as exc:
        log.warning("no preview of media %s: %s", asset.id, exc)
        raise not_found("media preview") from None
    content = await anyio.Path(path).read_bytes()
    headers = {
        "ETag": f'"preview-{asset.sha256}"',
        "Cache-Control": "private, max-age=31536000, immutable",
        "X-Content-Type-Options": "nosniff",
    }
    return Response(content, media_type="image/jpeg", headers=headers)
