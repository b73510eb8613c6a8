"""The body of a LinkedIn post and its creation (Posts API,
https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api).

`POST /rest/posts` with `author`, `commentary` (little text, commentary.py), `visibility`,
`distribution` (the main feed, no targeting), `lifecycleState: PUBLISHED` and, for media or a
link, `content`: `{"media": {"id", "altText"}}` for one image or a video (`{"id", "title"}` for a
document), `{"multiImage": {"images": [{"id", "altText"}, ...]}}` for 2 to 20 images
(.../shares/multiimage-post-api), `{"article": {"source", "title", "description"}}` for a link.
LinkedIn answers 201 with the new post's URN in the `x-restli-id` header.
"""

from __future__ import annotations

from typing import Any

from pressroom.providers.adapter import ProviderError
from pressroom.providers.linkedin.commentary import little_text
from pressroom.providers.linkedin.errors import duplicate_of
from pressroom.providers.linkedin.session import LinkedInSession
from pressroom.providers.linkedin.session import encoded

VISIBILITIES = ("PUBLIC", "CONNECTIONS")


def visibility(options: dict[str, Any], author: str) -> str:
    value = options.get("visibility") or "PUBLIC"
    if value not in VISIBILITIES:
        raise ProviderError("invalid_request", "options.visibility must be PUBLIC or CONNECTIONS.")
    if value == "CONNECTIONS" and not author.startswith("urn:li:person:"):
        raise ProviderError(
            "invalid_request", "A LinkedIn Page posts publicly: CONNECTIONS is for members only."
        )
    return str(value)


def article(options: dict[str, Any]) -> dict[str, Any] | None:
    """`options.link` (with `linkTitle`, `linkDescription`) as an article, or None."""
    link = options.get("link")
    if link is None or link == "":
        return None
    if not isinstance(link, str) or not link.startswith(("https://", "http://")):
        raise ProviderError("invalid_request", "options.link must be an http(s) URL.")
    title = options.get("linkTitle")
    found: dict[str, Any] = {
        "source": link,
        "title": title if isinstance(title, str) and title else link,
    }
    description = options.get("linkDescription")
    if isinstance(description, str) and description:
        found["description"] = description
    return {"article": found}


def post_body(
    session: LinkedInSession, text: str, options: dict[str, Any], content: dict[str, Any] | None
) -> dict[str, Any]:
    author = session.author
    body: dict[str, Any] = {
        "author": author,
        "commentary": little_text(text),
        "visibility": visibility(options, author),
        "distribution": {
            "feedDistribution": "MAIN_FEED",
            "targetEntities": [],
            "thirdPartyDistributionChannels": [],
        },
        "lifecycleState": "PUBLISHED",
        "isReshareDisabledByAuthor": False,
    }
    if content is not None:
        body["content"] = content
    return body


async def create_post(session: LinkedInSession, body: dict[str, Any], *, retried: bool) -> str:
    """The new post's URN. On a retried publish, LinkedIn's refusal of the same post as a
    duplicate names the post the earlier attempt made: that one is the result."""
    action = "creating the post"
    response = await session.request("POST", "/rest/posts", action, json=body)
    if response.is_success:
        urn = response.headers.get("x-restli-id") or response.headers.get("x-linkedin-id")
        if not urn:
            raise ProviderError("provider_unavailable", "LinkedIn created the post without its id.")
        return str(urn)
    existing = duplicate_of(response)
    if retried and existing is not None:
        return existing
    raise session.classify(response, action)


async def comment(session: LinkedInSession, urn: str, text: str) -> None:
    """A comment by the channel's account under its post
    (`POST /rest/socialActions/{urn}/comments`, .../shares/comments-api)."""
    await session.call(
        "POST",
        f"/rest/socialActions/{encoded(urn)}/comments",
        "posting the first comment",
        json={"actor": session.author, "object": urn, "message": {"text": text}},
    )
