"""Secrets leave the service once, where the contract reveals them, and never again.

Every operation of the OpenAPI document is exercised with valid requests (plus the command line,
an OAuth connection and the background workers) while everything the service says is captured:
response bodies and headers, log records (raw and as the JSON lines written), audit entries,
stored idempotent responses, event payloads, what the webhook receiver got, and every row of the
database that belongs to the organization. No API key, webhook signing secret (nor its base64
part), provider token, OAuth code, PKCE verifier or app secret may appear in any of it. The only
reveals: `signingSecret` in the answers of createWebhookEndpoint and
rotateWebhookEndpointSecret, the OAuth `state` in startChannelConnection's answer, and the key
printed by `keys create` (the command line, not an HTTP answer)."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid
from collections.abc import AsyncIterator
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
import respx
from fastapi import FastAPI
from pydantic import SecretStr
from sqlalchemy import delete
from sqlalchemy import select
from sqlalchemy import update
from typer.testing import CliRunner

import pressroom.tables  # noqa: F401 (every table in the metadata)
from pressroom.audit.models import AuditEntry
from pressroom.channels import service as channels
from pressroom.channels.models import CredentialRevocation
from pressroom.cli import app as cli
from pressroom.config import Settings
from pressroom.db import Base
from pressroom.db import unit_of_work
from pressroom.http.idempotency_models import IdempotencyRecord
from pressroom.kit.logs import JSONFormatter
from pressroom.posts.models import PostTarget
from pressroom.runtime import Runtime
from pressroom.webhooks.models import Delivery
from pressroom.webhooks.models import DeliveryAttempt
from pressroom.webhooks.models import Event
from pressroom.workers.loops import default_loops
from pressroom.workers.runner import WorkerRunner
from tests.channels.factories import connect_channel
from tests.factories import SERVER_KEY
from tests.media.factories import CONTENT_TYPE
from tests.media.factories import FormPart
from tests.media.factories import multipart_body
from tests.media.factories import png_bytes
from tests.posts.factories import cancel_queued_targets
from tests.webhooks.factories import eventually
from tests.webhooks.receiver import WebhookReceiver

# The answers that reveal a secret to the caller, and the fields that carry it.
ONE_TIME_REVEALS = {
    "createWebhookEndpoint": ("signingSecret",),
    "rotateWebhookEndpointSecret": ("signingSecret",),
    # The OAuth `state` goes to the person's browser (inside the authorization URL) and comes
    # back once to the callback; nothing else may show it.
    "startChannelConnection": ("state", "authorizationUrl"),
}
# Stored idempotent answers holding one of those secrets are encrypted at rest.
ENCRYPTED_WHEN_STORED = {"createWebhookEndpoint", "rotateWebhookEndpointSecret"}
X_APP_SECRET = f"x-app-secret-{uuid.uuid4().hex}"
# Any key or signing secret, known to this test or not (a rotation that issued a secret it
# never revealed would still be caught).
SECRET_SHAPES = re.compile(r"prk_[A-Za-z0-9_-]{20,}|whsec_[A-Za-z0-9+/=]{20,}")


@pytest.fixture(scope="module")
def leak_receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver("leaks.example.com") as receiver:
        yield receiver


@pytest.fixture
def settings(database_url: str, data_dir: Path, leak_receiver: WebhookReceiver) -> Settings:
    """The suite's settings, with deliveries going to the loopback receiver, and an X app for
    connecting a channel through OAuth."""
    return Settings(
        database_url=database_url,
        data_dir=data_dir,
        secret_key=SERVER_KEY,
        redis_url=None,
        public_url="https://pressroom.example",
        x_client_id="leak-check-x-client",
        x_client_secret=SecretStr(X_APP_SECRET),
        webhook_resolve=leak_receiver.resolve_setting,
        webhook_ca_bundle=leak_receiver.ca_bundle_path,
        webhook_retry_schedule="0.05,0.05",
        webhook_timeout_seconds=2.0,
    )


@dataclass
class Exchange:
    operation_id: str | None
    method: str
    path: str
    status: int
    headers: dict[str, str]
    body: str


def operation_matcher(document: dict[str, Any]) -> list[tuple[str, re.Pattern[str], str]]:
    """(method, path pattern, operationId) of every operation of the document."""
    found = []
    for path, methods in document["paths"].items():
        pattern = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$")
        for method, operation in methods.items():
            found.append((method.upper(), pattern, operation["operationId"]))
    return found


@pytest.fixture
async def recording_client(
    app: FastAPI,
) -> AsyncIterator[tuple[httpx.AsyncClient, list[Exchange]]]:
    """A client of the application that keeps every response it receives."""
    matcher = operation_matcher(app.openapi())
    exchanges: list[Exchange] = []

    async def keep(response: httpx.Response) -> None:
        await response.aread()
        method, path = response.request.method, response.request.url.path
        operation = next(
            (op for m, pattern, op in matcher if m == method and pattern.match(path)), None
        )
        exchanges.append(
            Exchange(
                operation,
                method,
                path,
                response.status_code,
                dict(response.headers),
                response.content.decode("utf-8", "replace"),
            )
        )

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://testserver", event_hooks={"response": [keep]}
    ) as client:
        yield client, exchanges


runner = CliRunner()


async def command(*args: str) -> tuple[dict[str, Any], str]:
    """Run the command line (in a thread: it runs its own event loop); its JSON and output."""
    result = await asyncio.to_thread(runner.invoke, cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1]), result.output


def raw_record(record: logging.LogRecord) -> str:
    """A log record before the formatter's scrubbing: its message, every extra field and the
    exception, so a secret handed to the logger counts even if the last line of defence
    would have masked it."""
    reserved = set(vars(logging.makeLogRecord({})))
    extras = {key: value for key, value in vars(record).items() if key not in reserved}
    text = record.getMessage() + json.dumps(extras, default=str)
    if record.exc_info:
        text += logging.Formatter().formatException(record.exc_info)
    return text


async def organization_rows(runtime: Runtime, organization_id: uuid.UUID) -> list[str]:
    """Every row of every table that belongs to the organization (and every row of the
    deployment-wide tables), as text."""
    rows: list[str] = []
    async with unit_of_work(runtime.sessions) as session:
        deliveries = select(Delivery.id).where(Delivery.organization_id == organization_id)
        for table in Base.metadata.sorted_tables:
            columns = table.columns
            if "organization_id" in columns:
                statement = select(table).where(columns["organization_id"] == organization_id)
            elif table.name == "organizations":
                statement = select(table).where(columns["id"] == organization_id)
            elif table.name == DeliveryAttempt.__tablename__:
                statement = select(table).where(columns["delivery_id"].in_(deliveries))
            else:
                # Deployment-wide (registrations with providers): small, read whole.
                statement = select(table)
            for row in (await session.execute(statement)).mappings():
                rows.append(f"{table.name}: " + json.dumps(dict(row), default=str))
    return rows


async def test_no_secret_appears_anywhere_but_its_one_time_reveal(
    app: FastAPI,
    recording_client: tuple[httpx.AsyncClient, list[Exchange]],
    runtime: Runtime,
    settings: Settings,
    leak_receiver: WebhookReceiver,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
):
    caplog.set_level(logging.DEBUG)
    client, exchanges = recording_client
    leak_receiver.reset()
    for name, value in {
        "PRESSROOM_DATABASE_URL": settings.effective_database_url,
        "PRESSROOM_DATA_DIR": str(tmp_path / "cli"),
        "PRESSROOM_SECRET_KEY": settings.secret_key or "",
    }.items():
        monkeypatch.setenv(name, value)
    # The workers serve every organization of the shared test database: nothing of earlier
    # tests may be waiting for them.
    await cancel_queued_targets(runtime)
    async with unit_of_work(runtime.sessions) as session:
        await session.execute(
            update(Delivery)
            .where(Delivery.status.in_(("pending", "processing")))
            .values(status="exhausted", lease_owner=None, lease_until=None)
        )
        await session.execute(delete(CredentialRevocation))

    # -- the command line: bootstrap, keys (one revealed on stdout each), a channel ----------
    cli_outputs: list[str] = []
    created_org, output = await command("orgs", "create", "--name", "Leak Check")
    cli_outputs.append(output)
    org = created_org["id"]
    added, output = await command(
        "members", "add", "--org", org, "--email", "o@leak.example", "--role", "owner"
    )
    cli_outputs.append(output)
    member = added["id"]
    api_keys: list[str] = []
    for scopes in ("all", "posts:read"):
        issued, _ = await command(
            "keys", "create", "--org", org, "--member", member, "--scopes", scopes
        )
        api_keys.append(issued["key"])
    spare, _ = await command("keys", "create", "--org", org, "--member", member, "--scopes", "all")
    api_keys.append(spare["key"])
    cli_outputs.append((await command("keys", "revoke", spare["id"]))[1])
    sandbox_channel, output = await command(
        "channels", "connect", "sandbox", "--org", org, "--name", "Leaky sandbox"
    )
    cli_outputs.append(output)
    organization_id = uuid.UUID(org)
    headers = {"Authorization": f"Bearer {api_keys[0]}"}
    # Refused keys are secrets too: the revoked one, and one that never existed.
    api_keys.append("prk_" + uuid.uuid4().hex + uuid.uuid4().hex[:11])
    for refused in api_keys[-2:]:
        response = await client.get(
            "/api/v1/tenant", headers={"Authorization": f"Bearer {refused}"}
        )
        assert response.status_code == 401, response.text

    # -- provider credentials: stored through the services, as adapters and connects do -----
    tokens = [f"provider-token-{n}-{uuid.uuid4().hex}" for n in range(4)]
    async with unit_of_work(runtime.sessions) as session:
        await channels.store_credentials(
            session,
            runtime,
            uuid.UUID(sandbox_channel["id"]),
            {"accessToken": tokens[0], "refreshToken": tokens[1]},
        )
    simulated = await connect_channel(
        runtime,
        organization_id,
        provider="bluesky",
        name="Leaky bluesky",
        handle="@leaky.bsky.social",
        credentials={"identifier": "leaky.bsky.social", "appPassword": tokens[2]},
    )
    spare_channel = await connect_channel(
        runtime, organization_id, name="Leaky spare", credentials={"accessToken": tokens[3]}
    )

    # An X account connected through OAuth: the provider's answers are recorded (respx), and
    # only for these two requests, before any worker runs.
    connection = await client.post("/api/v1/connect/x", json={"name": "Leaky X"}, headers=headers)
    assert connection.status_code == 201, connection.text
    state = connection.json()["state"]
    code = f"x-code-{uuid.uuid4().hex}"
    x_tokens = [f"x-access-{uuid.uuid4().hex}", f"x-refresh-{uuid.uuid4().hex}"]
    with respx.mock(assert_all_mocked=True, assert_all_called=True) as network:
        exchange = network.post("https://api.x.com/2/oauth2/token").mock(
            return_value=httpx.Response(
                200,
                json={
                    "token_type": "bearer",
                    "expires_in": 7200,
                    "access_token": x_tokens[0],
                    "refresh_token": x_tokens[1],
                    "scope": "tweet.read tweet.write users.read media.write offline.access",
                },
            )
        )
        network.get("https://api.x.com/2/users/me").mock(
            return_value=httpx.Response(
                200, json={"data": {"id": "1", "name": "Leaky", "username": "leaky"}}
            )
        )
        connected = await client.get("/connect/x/callback", params={"code": code, "state": state})
    assert connected.status_code == 200, connected.text
    x_channel = connected.json()["id"]
    sent = parse_qs(exchange.calls[0].request.content.decode())
    oauth_secrets = {state, code, sent["code_verifier"][0], X_APP_SECRET, *x_tokens}

    worker = WorkerRunner(runtime, default_loops(), grace_seconds=10)
    await worker.start()
    try:
        # -- webhooks ------------------------------------------------------------------------
        every_event = [
            "channel.connected.v1",
            "channel.disconnected.v1",
            "channel.reconnect-required.v1",
            "media.created.v1",
            "post.created.v1",
            "post.updated.v1",
            "post.deleted.v1",
            "post.scheduled.v1",
            "post.published.v1",
            "post.failed.v1",
            "webhook.test.v1",
        ]
        create_key = {"Idempotency-Key": f"leak-create-{uuid.uuid4()}"}
        create_body = {"url": leak_receiver.url_for("/leaks/main"), "events": every_event}
        created = await client.post(
            "/api/v1/webhooks", json=create_body, headers={**headers, **create_key}
        )
        assert created.status_code == 201, created.text
        endpoint = created.json()["id"]
        again = await client.post(
            "/api/v1/webhooks", json=create_body, headers={**headers, **create_key}
        )
        assert again.json()["signingSecret"] == created.json()["signingSecret"]
        rotated = await client.post(
            f"/api/v1/webhooks/{endpoint}/rotate",
            json={"expireCurrentInSeconds": 3600},
            headers={**headers, "Idempotency-Key": f"leak-rotate-{uuid.uuid4()}"},
        )
        assert rotated.status_code == 200, rotated.text
        assert (
            await client.patch(
                f"/api/v1/webhooks/{endpoint}",
                json={"description": "everything"},
                headers=headers,
            )
        ).status_code == 200
        refusing = await client.post(
            "/api/v1/webhooks",
            json={"url": leak_receiver.url_for("/leaks/refuse"), "events": ["webhook.test.v1"]},
            headers=headers,
        )
        assert refusing.status_code == 201, refusing.text
        refusing_id = refusing.json()["id"]
        leak_receiver.respond(410, path="/leaks/refuse")
        test = await client.post(
            f"/api/v1/webhooks/{refusing_id}/test",
            json={"event": "webhook.test.v1"},
            headers={**headers, "Idempotency-Key": f"leak-test-{uuid.uuid4()}"},
        )
        assert test.status_code == 202, test.text

        # -- media, posts, channels ----------------------------------------------------------
        uploaded = await client.post(
            "/api/v1/media",
            content=multipart_body([FormPart(png_bytes(), "leak.png", "image/png")]),
            headers={**headers, "Content-Type": CONTENT_TYPE, "Idempotency-Key": "leak-media"},
        )
        assert uploaded.status_code == 201, uploaded.text
        media = uploaded.json()["items"][0]["id"]
        # One more asset, that no post uses, for deleteMedia below.
        spare = await client.post(
            "/api/v1/media",
            content=multipart_body([FormPart(png_bytes(), "spare.png", "image/png")]),
            headers={**headers, "Content-Type": CONTENT_TYPE},
        )
        assert spare.status_code == 201, spare.text
        spare_media = spare.json()["items"][0]["id"]
        published = await client.post(
            "/api/v1/posts",
            json={
                "text": "Going out now",
                "publishNow": True,
                "mediaIds": [media],
                "targets": [
                    {"channelId": sandbox_channel["id"]},
                    {"channelId": str(simulated), "options": {"simulate": "auth_expired"}},
                ],
            },
            headers={**headers, "Idempotency-Key": f"leak-post-{uuid.uuid4()}"},
        )
        assert published.status_code == 201, published.text
        draft = await client.post(
            "/api/v1/posts",
            json={
                "text": "A draft",
                "tags": ["leaks"],
                "targets": [{"channelId": str(spare_channel)}],
            },
            headers=headers,
        )
        assert draft.status_code == 201, draft.text
        draft_id = draft.json()["id"]
        checked = await client.post(
            "/api/v1/posts/preflight",
            json={"text": "A check", "targets": [{"channelId": str(simulated)}]},
            headers=headers,
        )
        assert checked.status_code == 200, checked.text
        later = (datetime.now(UTC) + timedelta(days=1)).isoformat()
        assert (
            await client.patch(
                f"/api/v1/posts/{draft_id}", json={"scheduledAt": later}, headers=headers
            )
        ).status_code == 200

        async def settled_post() -> dict[str, Any] | None:
            post = (
                await client.get(f"/api/v1/posts/{published.json()['id']}", headers=headers)
            ).json()
            done = {t["status"] for t in post["targets"]} <= {"published", "failed"}
            return post if done else None

        settled = await eventually(settled_post, timeout=20, what="the post to settle")
        assert {t["status"] for t in settled["targets"]} == {"published", "failed"}

        async def exhausted() -> str | None:
            listed = (
                await client.get(
                    f"/api/v1/webhooks/{refusing_id}/deliveries",
                    params={"status": "exhausted"},
                    headers=headers,
                )
            ).json()["items"]
            return listed[0]["id"] if listed else None

        refused = await eventually(exhausted, timeout=20, what="the refused delivery")
        replayed = await client.post(
            f"/api/v1/webhooks/{refusing_id}/deliveries/{refused}/replay", headers=headers
        )
        assert replayed.status_code == 202, replayed.text

        async def replay_done() -> dict[str, Any] | None:
            read = (
                await client.get(
                    f"/api/v1/webhooks/{refusing_id}/deliveries/{refused}", headers=headers
                )
            ).json()
            return read if read["status"] == "succeeded" else None

        await eventually(replay_done, timeout=20, what="the replayed delivery")

        # -- every read ----------------------------------------------------------------------
        window = {
            "start": (datetime.now(UTC) - timedelta(days=1)).isoformat(),
            "end": (datetime.now(UTC) + timedelta(minutes=1)).isoformat(),
        }
        for path, params in [
            ("/api/v1/tenant", {}),
            ("/api/v1/providers", {}),
            ("/api/v1/providers/bluesky", {}),
            ("/api/v1/channels", {}),
            (f"/api/v1/channels/{sandbox_channel['id']}", {}),
            (f"/api/v1/channels/{simulated}", {}),
            (f"/api/v1/channels/{x_channel}", {}),
            ("/api/v1/posts", {}),
            (f"/api/v1/posts/{published.json()['id']}", {}),
            ("/api/v1/media", {}),
            (f"/api/v1/media/{media}", {}),
            (f"/api/v1/media/{media}/content", {}),
            (f"/api/v1/media/{media}/preview", {}),
            ("/api/v1/analytics", window),
            ("/api/v1/webhooks", {}),
            (f"/api/v1/webhooks/{endpoint}", {}),
            (f"/api/v1/webhooks/{endpoint}/deliveries", {"pageSize": "100"}),
            (f"/api/v1/webhooks/{refusing_id}/deliveries/{refused}", {}),
        ]:
            response = await client.get(path, params=params, headers=headers)
            assert response.status_code == 200, (path, response.text)

        # -- the deletes, then every event delivered -----------------------------------------
        for path in (
            f"/api/v1/posts/{draft_id}",
            f"/api/v1/channels/{sandbox_channel['id']}",
            f"/api/v1/webhooks/{refusing_id}",
            f"/api/v1/media/{spare_media}",
        ):
            response = await client.delete(path, headers=headers)
            assert response.status_code == 200, (path, response.text)

        # The X channel's disconnect queues its tokens, encrypted, for revocation; the
        # credential revoker then revokes them at X (the only provider request while the
        # workers run; the webhook receiver on loopback is reached as before). The queued
        # row is gone by the database scan below; its insert is among the logs on SQLite.
        with respx.mock(assert_all_mocked=True, assert_all_called=False) as network:
            revoke = network.post("https://api.x.com/2/oauth2/revoke").mock(
                return_value=httpx.Response(200, json={"revoked": True})
            )
            network.route().pass_through()
            response = await client.delete(f"/api/v1/channels/{x_channel}", headers=headers)
            assert response.status_code == 200, response.text

            async def revoked() -> bool | None:
                async with unit_of_work(runtime.sessions) as session:
                    left = await session.scalars(select(CredentialRevocation.id))
                    return True if not list(left) else None

            await eventually(revoked, timeout=20, what="the X tokens revoked")
        assert [parse_qs(c.request.content.decode())["token"] for c in revoke.calls] == [
            [x_tokens[1]],
            [x_tokens[0]],
        ]

        async with unit_of_work(runtime.sessions) as session:
            expected = {
                str(event_id)
                for event_id in await session.scalars(
                    select(Delivery.event_id).where(Delivery.endpoint_id == uuid.UUID(endpoint))
                )
            }

        async def all_delivered() -> bool | None:
            arrived = {r.headers["webhook-id"] for r in leak_receiver.requests}
            return True if expected <= arrived else None

        await eventually(all_delivered, timeout=20, what="every event at the receiver")
    finally:
        await worker.stop()

    # Every operation of the document was exercised with a successful answer.
    document_operations = {op for _, _, op in operation_matcher(app.openapi())}
    succeeded = {e.operation_id for e in exchanges if 200 <= e.status < 300}
    assert document_operations - succeeded == set(), "operations never exercised"

    # -- what is secret ----------------------------------------------------------------------
    reveals = [e for e in exchanges if e.operation_id in ONE_TIME_REVEALS and e.status < 300]
    signing_secrets = {
        json.loads(e.body)["signingSecret"]
        for e in reveals
        if e.operation_id in ENCRYPTED_WHEN_STORED
    }
    assert len(signing_secrets) == 3  # two endpoints created, one rotated (a replay repeats)
    for reveal in reveals:
        assert reveal.headers.get("cache-control") == "no-store", reveal.path
    secrets = set(api_keys) | set(tokens) | oauth_secrets
    for secret in signing_secrets:
        secrets |= {secret, secret.removeprefix("whsec_")}

    # -- everything said, with the one-time reveals taken out --------------------------------
    said: list[tuple[str, str]] = []
    for exchange in exchanges:
        body = exchange.body
        if any(exchange is reveal for reveal in reveals):
            revealed = json.loads(body)
            for name in ONE_TIME_REVEALS[exchange.operation_id or ""]:
                del revealed[name]
            body = json.dumps(revealed)
        said.append((f"{exchange.method} {exchange.path} body", body))
        said.append((f"{exchange.method} {exchange.path} headers", json.dumps(exchange.headers)))
    said += [("command line", output) for output in cli_outputs]
    formatter = JSONFormatter()
    assert any(record.getMessage() == "request" for record in caplog.records)
    for record in caplog.records:
        said.append((f"log line {record.name}", formatter.format(record)))
        said.append((f"log record {record.name}", raw_record(record)))
    for request in leak_receiver.requests:
        said.append((f"webhook {request.path}", request.body.decode()))
        said.append((f"webhook {request.path} headers", json.dumps(request.headers)))
    said += [("database", row) for row in await organization_rows(runtime, organization_id)]

    async with unit_of_work(runtime.sessions) as session:
        audit = list(
            await session.scalars(
                select(AuditEntry).where(AuditEntry.organization_id == organization_id)
            )
        )
        stored = list(
            await session.scalars(
                select(IdempotencyRecord).where(
                    IdempotencyRecord.organization_id == organization_id
                )
            )
        )
        events = list(
            await session.scalars(select(Event).where(Event.organization_id == organization_id))
        )
        targets = list(
            await session.scalars(
                select(PostTarget).where(PostTarget.organization_id == organization_id)
            )
        )
    # The ledger holds every command and every mutating operation, the stores hold what they
    # should: the database scan above read real rows of each.
    operations = {entry.operation_id for entry in audit}
    assert {"cli.keys.create", "cli.keys.revoke", "createWebhookEndpoint"} <= operations
    assert {"rotateWebhookEndpointSecret", "disconnectChannel", "uploadMedia"} <= operations
    assert {event.type for event in events} >= {
        "channel.reconnect-required.v1",
        "channel.disconnected.v1",
        "post.published.v1",
        "post.failed.v1",
        "webhook.test.v1",
    }
    assert any(t.status == "published" for t in targets)
    # Stored answers that hold a one-time secret are encrypted like the secret itself.
    by_operation = {record.operation_id: record for record in stored}
    assert set(by_operation) >= ENCRYPTED_WHEN_STORED | {"createPost", "uploadMedia"}
    for record in stored:
        assert record.body_encrypted == (record.operation_id in ENCRYPTED_WHEN_STORED), record.key

    leaks = sorted(
        (where, secret[:12]) for where, text in said for secret in secrets if secret in text
    )
    assert not leaks, leaks
    shapes = sorted(
        (where, match[:12]) for where, text in said for match in SECRET_SHAPES.findall(text)
    )
    assert not shapes, shapes
    print(
        f"\n{len(succeeded)} operations, {len(exchanges)} responses, {len(caplog.records)} log "
        f"records, {len(audit)} audit entries, {len(said)} texts checked for {len(secrets)} secrets"
    )
