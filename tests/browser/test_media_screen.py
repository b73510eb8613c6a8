"""The media library in a real browser: an upload with its progress bar (XMLHttpRequest upload
progress, through the console to uploadMedia), previews of an image and of a video's poster
frame, and the API's refusal of a file it cannot decode shown to the person."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.harness import ConsoleServer
from tests.browser.operations import look_at
from tests.browser.operations import sign_in
from tests.media import factories

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Every text the upload's status line showed, recorded as it changes.
_WATCH_STATUS = """() => {
  window.statusSeen = [];
  const status = document.querySelector('[data-upload-status]');
  new MutationObserver(() => window.statusSeen.push(status.textContent))
    .observe(status, {childList: true, characterData: true, subtree: true});
}"""
# A preview that loaded: its natural size is the preview's.
_PREVIEW_SIZE = """(id) => {
  const img = document.querySelector(`li[data-media="${id}"] img`);
  return img && img.complete ? [img.naturalWidth, img.naturalHeight] : null;
}"""


def file_payload(name: str, mime: str, data: bytes) -> dict[str, Any]:
    return {"name": name, "mimeType": mime, "buffer": data}


def test_upload_with_progress_and_previews(page: Any, console_server: ConsoleServer) -> None:
    sign_in(page, console_server, console_server.owner.key)
    page.get_by_role("link", name="Media").click()
    page.get_by_role("heading", name="Media library").wait_for()
    assert page.get_by_text("Nothing uploaded yet.").is_visible()
    # About 6 MB of noise: big enough for the browser to report upload progress.
    photo = factories.jpeg_bytes((2400, 1800), noise=True)
    assert len(photo) > 2_000_000
    page.get_by_label("Files to upload").set_input_files(
        [
            file_payload("photo.jpg", "image/jpeg", photo),
            file_payload("clip.mp4", "video/mp4", factories.mp4_bytes()),
        ]
    )
    page.evaluate(_WATCH_STATUS)
    page.get_by_role("button", name="Upload", exact=True).click()
    page.wait_for_function("() => window.statusSeen.includes('Uploaded.')", timeout=60_000)
    seen = page.evaluate("() => window.statusSeen")
    assert any(text.startswith("Uploading: ") and text.endswith("%") for text in seen), seen
    assert page.locator("progress").evaluate("bar => bar.value") == 100

    items = page.locator("#media-grid li.asset")
    assert items.count() == 2
    photo_id, clip_id = (items.nth(i).get_attribute("data-media") for i in range(2))
    page.wait_for_function(f"() => ({_PREVIEW_SIZE})('{photo_id}')")
    assert page.evaluate(_PREVIEW_SIZE, photo_id) == [320, 240]
    page.wait_for_function(f"() => ({_PREVIEW_SIZE})('{clip_id}')")
    poster = page.evaluate(_PREVIEW_SIZE, clip_id)
    assert poster[0] > 0 and max(poster) <= 320
    assert "2400\u00d71800" in items.nth(0).inner_text()

    # The library after a reload: the same assets, newest first, with their previews.
    page.reload()
    names = page.locator("#media-grid li.asset .name").all_inner_texts()
    assert sorted(names) == ["clip.mp4", "photo.jpg"]
    page.wait_for_function(f"() => ({_PREVIEW_SIZE})('{clip_id}')")
    look_at(page, "media")

    # Deleting asks first; the asset then leaves the library and its preview is gone.
    page.get_by_role("link", name="Delete clip.mp4").click()
    page.get_by_role("heading", name="Delete this asset?").wait_for()
    look_at(page, "media-delete")
    page.get_by_role("button", name="Delete the asset").click()
    page.wait_for_url(f"{console_server.base}/console/media?done=deleted")
    assert page.get_by_role("status").first.inner_text() == "The asset was deleted."
    assert page.locator("#media-grid .name").all_inner_texts() == ["photo.jpg"]
    gone = page.request.get(f"{console_server.base}/console/media/{clip_id}/preview")
    assert gone.status == 404


def test_a_refused_upload_says_why(page: Any, console_server: ConsoleServer) -> None:
    sign_in(page, console_server, console_server.owner.key)
    page.goto(f"{console_server.base}/console/media")
    page.get_by_label("Files to upload").set_input_files(
        [file_payload("notes.txt", "text/plain", b"not an image at all")]
    )
    page.get_by_role("button", name="Upload", exact=True).click()
    status = page.locator("[data-upload-status]")
    status.filter(has_text="files[0]").or_(status.filter(has_text="notes.txt")).wait_for()
    assert "Uploaded." not in status.inner_text()
    # Without the session's CSRF token, the console refuses before the API sees a byte.
    refused = page.request.post(
        f"{console_server.base}/console/media/upload",
        multipart={"files": file_payload("a.png", "image/png", factories.png_bytes())},
    )
    assert refused.status == 403
