"""`pressroom analytics import` (contract section 10) and the demo history, as a person
runs them."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func
from sqlalchemy import select
from typer.testing import CliRunner

from pressroom.app import create_app
from pressroom.cli import app as cli
from pressroom.config import Settings
from pressroom.posts.models import Post
from pressroom.posts.models import PostTarget
from pressroom.runtime import Runtime
from tests.factories import SERVER_KEY

runner = CliRunner()


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, database_url: str, tmp_path: Path) -> None:
    monkeypatch.setenv("PRESSROOM_DATABASE_URL", database_url)
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PRESSROOM_SECRET_KEY", SERVER_KEY)


def run_json(*args: str) -> dict[str, Any]:
    result = runner.invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def in_runtime(work: Any) -> Any:
    async def main() -> Any:
        runtime = Runtime.build(Settings())
        try:
            return await work(runtime)
        finally:
            await runtime.close()

    return asyncio.run(main())


def organization() -> tuple[str, str, str]:
    """(organization id, sandbox channel id, analytics key)."""
    org = str(run_json("orgs", "create", "--name", "Importer")["id"])
    channel = str(run_json("channels", "connect", "sandbox", "--org", org, "--name", "Main")["id"])
    member = str(
        run_json(
            "members",
            "add",
            "--org",
            org,
            "--email",
            f"{uuid.uuid4().hex[:8]}@x.io",
            "--role",
            "owner",
        )["id"]
    )
    key = str(
        run_json("keys", "create", "--org", org, "--member", member, "--scopes", "analytics:read")[
            "key"
        ]
    )
    return org, channel, key


def posts_of(org: str) -> int:
    async def count(runtime: Runtime) -> int:
        async with runtime.sessions() as session:
            return int(
                await session.scalar(
                    select(func.count())
                    .select_from(Post)
                    .where(Post.organization_id == uuid.UUID(org))
                )
                or 0
            )

    return int(in_runtime(count))


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"
    )
    return path


def report(key: str, params: dict[str, str]) -> dict[str, Any]:
    async def get(runtime: Runtime) -> dict[str, Any]:
        transport = httpx.ASGITransport(app=create_app(runtime=runtime))
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            response = await client.get(
                "/api/v1/analytics", params=params, headers={"Authorization": f"Bearer {key}"}
            )
            assert response.status_code == 200, response.text
            return response.json()  # type: ignore[no-any-return]

    return in_runtime(get)  # type: ignore[no-any-return]


def test_import_stores_published_history_and_prints_the_count(cli_env: None, tmp_path: Path):
    org, channel, key = organization()
    path = write_lines(
        tmp_path / "history.jsonl",
        [
            {
                "channelId": channel,
                "publishedAt": "2026-03-05T10:00:00+01:00",
                "text": "Spring is here",
                "contentKind": "post",
                "tags": ["spring"],
                "topics": ["pricing"],
                "model": "gpt-5",
                "approvalStatus": "approved",
                "metrics": {"impressions": 1000, "likes": 30, "clicks": 20},
            },
            "",
            {
                "channelId": channel,
                "publishedAt": "2026-03-06T10:00:00Z",
                "contentKind": "post",
                "metrics": {"impressions": 500},
            },
        ],
    )
    assert run_json("analytics", "import", "--org", org, str(path)) == {"imported": 2}
    body = report(
        key,
        {
            "start": "2026-03-01T00:00:00Z",
            "end": "2026-03-31T23:59:59Z",
            "metrics": "impressions,engagements",
        },
    )
    assert body["totals"]["impressions"]["value"] == 1500
    assert body["totals"]["engagements"]["value"] == 50
    item = body["posts"]["items"][1]
    assert (
        item["publishedAt"],
        item["tags"],
        item["topics"],
        item["model"],
        item["approvalStatus"],
    ) == (
        "2026-03-05T09:00:00.000Z",
        ["spring"],
        ["pricing"],
        "gpt-5",
        "approved",
    )
    verified = run_json("audit", "verify", "--org", org)
    assert verified["ok"] is True


def test_a_bad_line_is_named_with_its_field_and_nothing_is_imported(cli_env: None, tmp_path: Path):
    org, channel, _ = organization()
    good = {"channelId": channel, "publishedAt": "2026-03-05T10:00:00Z", "contentKind": "post"}
    path = write_lines(
        tmp_path / "history.jsonl",
        [good, {**good, "metrics": {"likes": -1}}, good],
    )
    result = runner.invoke(cli, ["analytics", "import", "--org", org, str(path), "--json"])
    assert result.exit_code == 1
    assert "line 2: metrics.likes: must be a non-negative integer" in result.stderr
    assert "line 1" not in result.stderr and "line 3" not in result.stderr
    assert result.stdout == ""
    assert posts_of(org) == 0


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", "line 1: is not valid JSON"),
        ("[1, 2]", "line 1: must be a JSON object"),
        (
            {"publishedAt": "2026-03-05T10:00:00Z", "contentKind": "post"},
            "line 1: channelId: is required",
        ),
        (
            {"channelId": "CHANNEL", "publishedAt": "2026-03-05T10:00:00", "contentKind": "post"},
            "line 1: publishedAt:",
        ),
        (
            {"channelId": "CHANNEL", "publishedAt": "2026-03-05T10:00:00Z", "contentKind": "reel"},
            "line 1: contentKind: 'reel' is not a content kind of sandbox",
        ),
        (
            {"channelId": "FOREIGN", "publishedAt": "2026-03-05T10:00:00Z", "contentKind": "post"},
            "line 1: channelId: is not a connected channel of this organization",
        ),
        (
            {
                "channelId": "CHANNEL",
                "publishedAt": "2026-03-05T10:00:00Z",
                "contentKind": "post",
                "metrics": {"engagementRate": 1},
            },
            "line 1: metrics.engagementRate: is derived",
        ),
        (
            {
                "channelId": "CHANNEL",
                "publishedAt": "2026-03-05T10:00:00Z",
                "contentKind": "post",
                "tags": ["a", "a"],
            },
            "line 1: tags[1]:",
        ),
        (
            {
                "channelId": "CHANNEL",
                "publishedAt": "2026-03-05T10:00:00Z",
                "contentKind": "post",
                "approvalStatus": "pending",
            },
            "line 1: approvalStatus:",
        ),
        (
            {
                "channelId": "CHANNEL",
                "publishedAt": "2026-03-05T10:00:00Z",
                "contentKind": "post",
                "bogus": 1,
            },
            "line 1: bogus: is not a known field",
        ),
        (
            {
                "channelId": "CHANNEL",
                "publishedAt": "2026-03-05T10:00:00Z",
                "contentKind": "post",
                "text": "nul \u0000 inside",
            },
            "line 1: text: must not contain NUL characters",
        ),
        (
            {
                "channelId": "CHANNEL",
                "publishedAt": "9999-12-31T20:00:00-14:00",
                "contentKind": "post",
            },
            "line 1: publishedAt: is outside the years 1-9999 in UTC",
        ),
    ],
    ids=[
        "not-json",
        "not-an-object",
        "channel-missing",
        "naive-time",
        "kind-of-another-provider",
        "foreign-channel",
        "derived-metric",
        "duplicate-tag",
        "pending-approval",
        "unknown-field",
        "nul-character",
        "time-out-of-range",
    ],
)
def test_each_kind_of_bad_line_is_named(cli_env: None, tmp_path: Path, line: Any, expected: str):
    org, channel, _ = organization()
    other_org = str(run_json("orgs", "create", "--name", "Other")["id"])
    foreign = str(
        run_json("channels", "connect", "sandbox", "--org", other_org, "--name", "X")["id"]
    )
    if isinstance(line, dict):
        line = json.dumps(line).replace("CHANNEL", channel).replace("FOREIGN", foreign)
    path = write_lines(tmp_path / "bad.jsonl", [line])
    result = runner.invoke(cli, ["analytics", "import", "--org", org, str(path)])
    assert result.exit_code == 1
    assert expected in result.stderr
    assert posts_of(org) == 0


def test_demo_history_spans_about_90_days_and_is_made_once(cli_env: None):
    org, _, key = organization()
    made = run_json("analytics", "import", "--org", org, "--demo")["imported"]
    assert made >= 150
    assert run_json("analytics", "import", "--org", org, "--demo") == {
        "imported": 0,
        "reason": "the organization already has published history",
    }

    async def span(runtime: Runtime) -> tuple[datetime, datetime]:
        async with runtime.sessions() as session:
            row = (
                await session.execute(
                    select(
                        func.min(PostTarget.published_at), func.max(PostTarget.published_at)
                    ).where(PostTarget.organization_id == uuid.UUID(org))
                )
            ).one()
            return row[0], row[1]

    first, last = in_runtime(span)
    assert last - first >= timedelta(days=85)
    now = datetime.now(UTC).replace(microsecond=0)
    body = report(key, {"start": (now - timedelta(days=91)).isoformat(), "end": now.isoformat()})
    assert body["posts"]["totalItems"] == made
    assert body["range"]["groupBy"] == "week"
    assert sum(1 for bucket in body["timeseries"] if bucket["values"]["impressions"] > 0) >= 12
    assert len(body["breakdowns"]["campaigns"]) >= 3


def test_the_serve_demo_organization_gets_history_on_its_sandbox_channels(cli_env: None):
    from pressroom.cli import create_demo

    created = in_runtime(create_demo)
    now = datetime.now(UTC).replace(microsecond=0)
    body = report(
        created["key"], {"start": (now - timedelta(days=91)).isoformat(), "end": now.isoformat()}
    )
    assert body["posts"]["totalItems"] > 100
    assert body["breakdowns"]["channels"], "history lies on the demo's channels"


def test_import_needs_exactly_one_of_a_file_and_demo(cli_env: None, tmp_path: Path):
    org, _, _ = organization()
    assert runner.invoke(cli, ["analytics", "import", "--org", org]).exit_code == 1
    path = write_lines(tmp_path / "x.jsonl", [])
    result = runner.invoke(cli, ["analytics", "import", "--org", org, str(path), "--demo"])
    assert result.exit_code == 1
    assert "either FILE or --demo" in result.stderr


def test_demo_import_into_an_organization_with_history_says_why_and_succeeds(cli_env: None):
    org, _, _ = organization()
    run_json("analytics", "import", "--org", org, "--demo")
    again = runner.invoke(cli, ["analytics", "import", "--org", org, "--demo"])
    assert again.exit_code == 0
    assert again.stdout.strip() == (
        "imported 0 published posts: the organization already has published history"
    )


def test_a_long_import_reports_progress_on_stderr_only(
    cli_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from pressroom.cli import history

    monkeypatch.setattr(history, "PROGRESS_EVERY", 2)
    org, channel, _ = organization()
    line = {"channelId": channel, "publishedAt": "2026-03-06T10:00:00Z", "contentKind": "post"}
    path = write_lines(tmp_path / "history.jsonl", [line] * 5)
    result = runner.invoke(cli, ["analytics", "import", "--org", org, str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"imported": 5}
    assert result.stderr.splitlines() == [
        "pressroom: read 2 lines",
        "pressroom: read 4 lines",
        "pressroom: read 5 lines; writing them",
    ]
