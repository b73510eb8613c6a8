"""LinkedIn document posts: a PDF uploaded with the Documents API, then posted with the Posts
API as `content.media` with the document's URN and a title.

Recorded shapes (learn.microsoft.com/linkedin/marketing/community-management/shares/
documents-api): `POST /rest/documents?action=initializeUpload` with
`{"initializeUploadRequest": {"owner"}}` -> `{"value": {"uploadUrlExpiresAt", "uploadUrl",
"document"}}`; the file `PUT` to `uploadUrl`; `GET /rest/documents/{urn}` -> `{"status":
"PROCESSING" | "AVAILABLE" | "PROCESSING_FAILED", ...}`; Posts API `content.media` with `id`
and `title` (.../shares/posts-api)."""

from __future__ import annotations

import dataclasses
from urllib.parse import quote

import httpx
import pytest
import respx

from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError

from .linkedin_support import API
from .linkedin_support import ORGANIZATION
from .linkedin_support import PERSON
from .linkedin_support import TOKEN
from .linkedin_support import VERSION
from .linkedin_support import created
from .linkedin_support import linkedin_adapter
from .linkedin_support import member_channel
from .linkedin_support import page_channel
from .linkedin_support import sent_headers
from .linkedin_support import sent_json
from .support import MediaShelf
from .support import RecordedSleep
from .support import publish_request
from .test_linkedin_publish import no_retired_versions  # noqa: F401 (autouse fixture)
from .test_linkedin_publish import post

DOCUMENT = "urn:li:document:D5F10AQHlYR1Rj1iYtQ"
UPLOAD_URL = "https://www.linkedin.com/dms-uploads/sp/D5F10AQHlYR1Rj1iYtQ/uploaded-document/0"
PDF = b"%PDF-1.7\n" + bytes(range(256)) * 4 + b"\nstartxref\n9\n%%EOF\n"


def pdf(shelf: MediaShelf, filename: str = "Q3 results.pdf") -> MediaItem:
    return dataclasses.replace(shelf.add("document", "application/pdf", PDF), filename=filename)


def document_routes(network: respx.MockRouter, statuses: list[str]) -> dict[str, respx.Route]:
    value = {"uploadUrlExpiresAt": 1795003600000, "uploadUrl": UPLOAD_URL, "document": DOCUMENT}
    return {
        "init": network.post(f"{API}/rest/documents", params={"action": "initializeUpload"}).mock(
            return_value=httpx.Response(200, json={"value": value})
        ),
        "put": network.put(UPLOAD_URL).mock(return_value=httpx.Response(201)),
        "status": network.get(f"{API}/rest/documents/{quote(DOCUMENT, safe='')}").mock(
            side_effect=[
                httpx.Response(
                    200,
                    json={
                        "id": DOCUMENT,
                        "owner": PERSON,
                        "status": status,
                        "processingFailureReason": "Unsupported file",
                    },
                )
                for status in statuses
            ]
        ),
    }


async def test_a_pdf_is_uploaded_polled_and_posted_with_its_title(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    document = pdf(shelf)
    routes = document_routes(network, ["PROCESSING", "AVAILABLE"])
    post_route = network.post(f"{API}/rest/posts").mock(return_value=created())
    sleep = RecordedSleep()
    async with linkedin_adapter(shelf, sleep=sleep) as adapter:
        await adapter.publish(
            publish_request(
                member_channel(),
                "Our quarter",
                media=(document,),
                options={"documentTitle": "Q3 in numbers"},
            )
        )

    assert sent_json(routes["init"]) == {"initializeUploadRequest": {"owner": PERSON}}
    init_headers = sent_headers(routes["init"])
    assert init_headers["LinkedIn-Version"] == VERSION
    assert init_headers["X-Restli-Protocol-Version"] == "2.0.0"
    assert init_headers["Authorization"] == f"Bearer {TOKEN}"
    put = routes["put"].calls[0].request
    assert put.content == PDF
    assert put.headers["content-type"] == "application/pdf"
    assert put.headers["content-length"] == str(len(PDF))
    assert routes["status"].call_count == 2 and sleep.delays == [2.0]
    content = {"media": {"id": DOCUMENT, "title": "Q3 in numbers"}}
    assert sent_json(post_route) == post(PERSON, "Our quarter", content=content)
    # Nothing is posted before the document is available.
    assert network.calls[-1].request.url.path == "/rest/posts"


async def test_without_a_title_option_the_file_name_titles_the_document(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    document = pdf(shelf, "deck.final.pdf")
    routes = document_routes(network, ["AVAILABLE"])
    post_route = network.post(f"{API}/rest/posts").mock(return_value=created())
    async with linkedin_adapter(shelf) as adapter:
        await adapter.publish(publish_request(page_channel(), "Deck", media=(document,)))
    assert sent_json(routes["init"]) == {"initializeUploadRequest": {"owner": ORGANIZATION}}
    content = sent_json(post_route)["content"]
    assert content == {"media": {"id": DOCUMENT, "title": "deck.final"}}


async def test_a_document_linkedin_cannot_process_is_media_rejected_and_never_posted(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    document_routes(network, ["PROCESSING_FAILED"])
    async with linkedin_adapter(shelf) as adapter:
        with pytest.raises(ProviderError) as raised:
            await adapter.publish(publish_request(member_channel(), "x", media=(pdf(shelf),)))
    assert raised.value.code == "media_rejected"
    assert raised.value.message == "LinkedIn could not process the document: Unsupported file"


async def test_a_document_with_other_media_is_refused_before_any_call(
    network: respx.MockRouter,
) -> None:
    shelf = MediaShelf()
    image = shelf.add("image", "image/png", b"\x89PNG\r\n\x1a\n")
    async with linkedin_adapter(shelf) as adapter:
        with pytest.raises(ProviderError) as raised:
            await adapter.publish(publish_request(member_channel(), "x", media=(pdf(shelf), image)))
    assert raised.value.code == "invalid_request"
    assert len(network.calls) == 0
