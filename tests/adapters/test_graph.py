"""The Graph API plumbing Meta's networks share: error classes, rate-limit waits, the request
helper and insights.

Error bodies follow developers.facebook.com/docs/graph-api/guides/error-handling (codes 1, 2, 4,
10, 17, 32, 100/33, 190 with subcodes, 200-299, 341, 368, 506, 613, is_transient), the Business
Use Case codes and usage headers of graph-api/overview/rate-limiting, the Video API's error codes
(video-api/reference/error-codes), Instagram's publishing limit (code 9, subcode 2207042) and the
upload host's `debug_info` answers."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.graph import GraphClient
from pressroom.providers.graph import GraphFailure
from pressroom.providers.graph import appsecret_proof
from pressroom.providers.graph import canonical_metrics
from pressroom.providers.graph import graph_failure
from pressroom.providers.graph import insight_values
from pressroom.providers.graph import usage_retry_after

from .facebook_support import graph_error


def refused(response: httpx.Response) -> Any:
    return graph_failure(response, "Facebook", "publishing the post", ("tok-123",))


@pytest.mark.parametrize(
    ("response", "code", "retryable"),
    [
        (graph_error(190, "Error validating access token", subcode=463), "auth_expired", False),
        (graph_error(102, "Session key invalid"), "auth_expired", False),
        (graph_error(10, "Application does not have permission"), "permission_denied", False),
        (graph_error(200, "Requires pages_manage_posts", status=403), "permission_denied", False),
        (
            graph_error(368, "Temporarily blocked for policies violations"),
            "permission_denied",
            False,
        ),
        (graph_error(4, "Application request limit reached"), "rate_limited", True),
        (graph_error(17, "User request limit reached"), "rate_limited", True),
        (graph_error(32, "Page request limit reached"), "rate_limited", True),
        (graph_error(613, "Calls to this api have exceeded the rate limit"), "rate_limited", True),
        (graph_error(80001, "There have been too many calls to this Page"), "rate_limited", True),
        (graph_error(9, "Maximum posts reached", subcode=2207042), "rate_limited", True),
        (graph_error(506, "Duplicate status message"), "duplicate_content", False),
        (graph_error(100, "Object does not exist", subcode=33), "not_found", False),
        (graph_error(324, "Missing or invalid image file"), "media_rejected", False),
        (
            graph_error(6000, "There was a problem uploading your video file"),
            "media_rejected",
            False,
        ),
        (graph_error(100, "Video too large", subcode=1363023), "media_rejected", False),
        (graph_error(100, "Upload timed out", subcode=1363030), "provider_unavailable", True),
        (graph_error(1, "An unknown error occurred", status=500), "provider_unavailable", True),
        (graph_error(2, "Service temporarily unavailable"), "provider_unavailable", True),
        (graph_error(100, "Some error", is_transient=True), "provider_unavailable", True),
        (graph_error(100, "(#100) The message is too long"), "text_rejected", False),
        (graph_error(100, "(#100) Invalid parameter"), "invalid_request", False),
        (httpx.Response(502, text="<html>Bad gateway</html>"), "provider_unavailable", True),
        (httpx.Response(429), "rate_limited", True),
    ],
)
def test_graph_errors_are_classified_by_code_then_status(
    response: httpx.Response, code: str, retryable: bool
) -> None:
    error = refused(response)
    assert (error.code, error.retryable) == (code, retryable)


def test_message_quotes_the_network_and_its_codes_without_secrets() -> None:
    error = refused(
        graph_error(
            190,
            "Error validating access token tok-123",
            subcode=460,
            error_user_title="Password changed",
            error_user_msg="Log in again.",
        )
    )
    assert isinstance(error, GraphFailure)
    assert (error.graph_code, error.graph_subcode) == (190, 460)
    assert "the password changed" in error.message
    assert "Password changed; Log in again.; Error validating access token" in error.message
    assert "(code 190, subcode 460, fbtrace_id AbCdEf123)" in error.message
    assert "tok-123" not in error.message


def test_business_use_case_wait_is_given_in_minutes() -> None:
    usage = {"1": [{"type": "pages", "call_count": 100, "estimated_time_to_regain_access": 3}]}
    headers = httpx.Headers({"X-Business-Use-Case-Usage": json.dumps(usage)})
    assert usage_retry_after(headers) == 180.0


def test_retry_after_wins_over_the_usage_estimate() -> None:
    usage = {"1": [{"estimated_time_to_regain_access": 30}]}
    headers = httpx.Headers({"Retry-After": "12", "X-Business-Use-Case-Usage": json.dumps(usage)})
    assert usage_retry_after(headers) == 12.0


def test_app_usage_estimate_is_read_too() -> None:
    headers = httpx.Headers(
        {"X-App-Usage": json.dumps({"call_count": 100, "estimated_time_to_regain_access": 2})}
    )
    assert usage_retry_after(headers) == 120.0


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"X-App-Usage": json.dumps({"call_count": 80, "total_time": 10})},
        {"X-Business-Use-Case-Usage": json.dumps({"1": [{"estimated_time_to_regain_access": 0}]})},
        {"X-Business-Use-Case-Usage": "not json"},
    ],
)
def test_no_usable_estimate_means_no_wait(headers: dict[str, str]) -> None:
    assert usage_retry_after(httpx.Headers(headers)) is None


def test_rate_limit_error_carries_the_wait() -> None:
    usage = {"1": [{"estimated_time_to_regain_access": 5}]}
    response = graph_error(80001, "Too many calls to this Page")
    response.headers["X-Business-Use-Case-Usage"] = json.dumps(usage)
    error = refused(response)
    assert error.retry_after == 300.0
    assert "retry in 300 s" in error.message


def test_upload_host_refusals_are_read_from_debug_info() -> None:
    gone = httpx.Response(
        400, json={"debug_info": {"retriable": False, "type": "NotFound", "message": "no file"}}
    )
    busy = httpx.Response(
        400, json={"debug_info": {"retriable": True, "type": "Busy", "message": "try again"}}
    )
    assert (refused(gone).code, refused(gone).message.endswith("no file")) == (
        "media_rejected",
        True,
    )
    assert (refused(busy).code, refused(busy).retryable) == ("provider_unavailable", True)


def test_appsecret_proof_is_the_hmac_sha256_of_the_token() -> None:
    expected = hmac.new(b"secret", b"token", hashlib.sha256).hexdigest()
    assert appsecret_proof("token", "secret") == expected


async def test_client_sends_the_token_in_a_header_and_the_proof_only_to_its_host(
    network: respx.MockRouter,
) -> None:
    graph = network.get("https://graph.threads.net/v1.0/me").respond(200, json={"id": "1"})
    upload = network.post("https://rupload.facebook.com/ig-api-upload/v1.0/9").respond(
        200, json={"success": True}
    )
    async with httpx.AsyncClient() as http:
        client = GraphClient(
            http,
            provider="Threads",
            version="v1.0",
            host="https://graph.threads.net",
            app_secret="secret",
        )
        assert await client.call("GET", "/me", "reading", token="tok") == {"id": "1"}
        await client.call(
            "POST",
            "https://rupload.facebook.com/ig-api-upload/v1.0/9",
            "uploading",
            token="tok",
            auth_scheme="OAuth",
        )
    assert graph.calls[0].request.headers["authorization"] == "Bearer tok"
    assert dict(graph.calls[0].request.url.params) == {
        "appsecret_proof": appsecret_proof("tok", "secret")
    }
    assert upload.calls[0].request.headers["authorization"] == "OAuth tok"
    assert not upload.calls[0].request.url.params


async def test_unreachable_graph_is_a_retryable_failure_naming_no_url(
    network: respx.MockRouter,
) -> None:
    network.get("https://graph.facebook.com/v24.0/me").mock(side_effect=httpx.ConnectError("x"))
    async with httpx.AsyncClient() as http:
        client = GraphClient(http, provider="Facebook", version="v24.0")
        with pytest.raises(ProviderError) as failed:
            await client.call("GET", "me", "reading the Page", token="tok")
    assert (failed.value.code, failed.value.retryable) == ("provider_unavailable", True)
    assert "graph.facebook.com" not in str(failed.value)


def test_insight_values_read_series_totals_and_breakdowns() -> None:
    body = {
        "data": [
            {
                "name": "post_media_view",
                "period": "lifetime",
                "values": [{"value": 5}, {"value": 8}],
            },
            {"name": "views", "period": "day", "total_value": {"value": 30}},
            {"name": "post_reactions_by_type_total", "values": [{"value": {"like": 3, "love": 2}}]},
            {"name": "post_clicks", "values": [{"value": "n/a"}]},
            {"name": "no_values"},
        ]
    }
    assert insight_values(body) == {
        "post_media_view": 8,
        "views": 30,
        "post_reactions_by_type_total": 5,
    }


def test_canonical_metrics_sum_their_sources_and_leave_out_unreported_keys() -> None:
    values = {"a": 2, "b": 3}
    sources = {"likes": ("a", "b"), "shares": ("c",), "views": ("b",)}
    assert canonical_metrics(values, sources) == {"likes": 5, "views": 3}
