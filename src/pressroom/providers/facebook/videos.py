"""Facebook videos: feed videos, Reels and video stories, all fetched by Facebook from the
asset's signed public URL, and the status polling between their steps.

- Feed video (https://developers.facebook.com/docs/graph-api/reference/page/videos/):
  `POST /{page-id}/videos` with `file_url` and `description` -> `{"id": video-id}`.
- Reel (https://developers.facebook.com/docs/video-api/guides/reels-publishing): start
  `POST /{page-id}/video_reels` `upload_phase=start` -> `{"video_id", "upload_url"}`; upload
  `POST https://rupload.facebook.com/video-upload/{version}/{video-id}` with `file_url` in a
  header -> `{"success": true}`; finish `POST /{page-id}/video_reels` `upload_phase=finish`,
  `video_id`, `video_state=PUBLISHED`, `description` -> `{"success": true}`.
- Video story (https://developers.facebook.com/docs/page-stories-api): the same start and
  upload on `/{page-id}/video_stories`, then finish with `upload_phase=finish`, `video_id` ->
  `{"success": true, "post_id"}`.
- Status: `GET /{video-id}?fields=status` -> `{"status": {"video_status", "uploading_phase",
  "processing_phase", "publishing_phase": {"status", "publish_status"}}}`; each phase's status is
  `not_started`, `in_progress`, `complete` or `error` (with an `error.message`).

A publish must answer within the publisher's lease, so all polling of one publish shares one
budget (`PollBudget`). Before a finish, an upload still in progress when the budget runs out
fails as a retryable `timeout`: nothing is published yet, and a retry starts a new session.
After a finish, Facebook has accepted the video: a video still processing when the budget runs
out is returned as published (Facebook completes it on its side); one that fails is
`media_rejected`, in Facebook's words.
"""

from __future__ import annotations

from typing import Any
from typing import Literal

from pressroom.providers.adapter import ProviderError
from pressroom.providers.facebook.page import PageApi
from pressroom.providers.facebook.page import required_value
from pressroom.providers.http import PollBudget
from pressroom.providers.http import safe_detail

# Between status checks, and in all for one publish (the default lease is 60 seconds).
DEFAULT_POLL_INTERVAL = 3.0
DEFAULT_POLL_BUDGET = 30.0
_DONE = frozenset({"complete", "completed"})

Goal = Literal["uploaded", "published", "ready"]


async def wait_for_video(api: PageApi, video_id: str, goal: Goal, budget: PollBudget) -> bool:
    """Poll the video's status until `goal` (True) or the budget is spent (False). Raises
    `media_rejected` when Facebook reports an error, `timeout` when the session expired."""
    while True:
        body = await api.get(video_id, "checking the video's processing", {"fields": "status"})
        status = body.get("status")
        status = status if isinstance(status, dict) else {}
        _raise_on_failure(status, api.token)
        if _reached(status, goal):
            return True
        if not await budget.wait():
            return False


def _reached(status: dict[str, Any], goal: Goal) -> bool:
    video_status = status.get("video_status")
    if goal == "ready":
        return bool(video_status == "ready")
    if goal == "uploaded":
        return _phase(status, "uploading_phase") in _DONE or video_status in (
            "upload_complete",
            "processing",
            "ready",
        )
    publishing = status.get("publishing_phase")
    published = isinstance(publishing, dict) and publishing.get("publish_status") == "published"
    return published or _phase(status, "publishing_phase") in _DONE


def _phase(status: dict[str, Any], name: str) -> object:
    phase = status.get(name)
    return phase.get("status") if isinstance(phase, dict) else None


def _raise_on_failure(status: dict[str, Any], token: str) -> None:
    video_status = status.get("video_status")
    if video_status == "expired":
        raise ProviderError(
            "timeout",
            "Facebook's upload session for the video expired before it was published; it "
            "will be retried.",
        )
    for name in ("uploading_phase", "processing_phase", "publishing_phase"):
        phase = status.get(name)
        if isinstance(phase, dict) and phase.get("status") == "error":
            said = safe_detail(_phase_error(phase) or f"{name} failed", (token,))
            raise ProviderError("media_rejected", f"Facebook could not process the video: {said}")
    if video_status in ("error", "upload_failed"):
        raise ProviderError(
            "media_rejected", f"Facebook could not process the video (status {video_status})."
        )


def _phase_error(phase: dict[str, Any]) -> str | None:
    error = phase.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    errors = phase.get("errors")
    if isinstance(errors, list):
        said = [e["message"] for e in errors if isinstance(e, dict) and "message" in e]
        return "; ".join(str(message) for message in said) or None
    return None


async def publish_video(api: PageApi, file_url: str, text: str, budget: PollBudget) -> str:
    """A feed video; returns its video id once processed or once the budget is spent."""
    form = {"file_url": file_url}
    if text:
        form["description"] = text
    body = await api.post(f"{api.page_id}/videos", "publishing the video", form)
    video_id = required_value(body, "id", "publishing the video")
    await wait_for_video(api, video_id, "ready", budget)
    return video_id


async def publish_reel(api: PageApi, file_url: str, text: str, budget: PollBudget) -> str:
    """A Reel: upload session, then finish as published; returns its video id."""
    edge = f"{api.page_id}/video_reels"
    video_id = await _uploaded_session(api, edge, file_url, "reel", budget)
    form = {"upload_phase": "finish", "video_id": video_id, "video_state": "PUBLISHED"}
    if text:
        form["description"] = text
    body = await api.post(edge, "publishing the reel", form)
    if body.get("success") is not True:
        raise ProviderError("provider_unavailable", "Facebook did not confirm publishing the reel.")
    await wait_for_video(api, video_id, "published", budget)
    return video_id


async def publish_video_story(api: PageApi, file_url: str, budget: PollBudget) -> str:
    """A video story: upload session, then finish; returns the story's post id."""
    edge = f"{api.page_id}/video_stories"
    video_id = await _uploaded_session(api, edge, file_url, "story video", budget)
    form = {"upload_phase": "finish", "video_id": video_id}
    body = await api.post(edge, "publishing the story", form)
    return required_value(body, "post_id", "publishing the story")


async def _uploaded_session(
    api: PageApi, edge: str, file_url: str, noun: str, budget: PollBudget
) -> str:
    start = await api.post(edge, f"starting the {noun} upload", {"upload_phase": "start"})
    video_id = required_value(start, "video_id", f"starting the {noun} upload")
    upload_url = api.upload_url(start.get("upload_url"), video_id)
    await api.upload_from_url(upload_url, file_url, f"sending the {noun} to Facebook")
    if not await wait_for_video(api, video_id, "uploaded", budget):
        raise ProviderError(
            "timeout",
            f"Facebook was still fetching the {noun} after {budget.polling.budget:g} seconds; "
            "nothing was published, and it will be retried.",
        )
    return video_id
