"""A demo data set: about 90 days of published history on an organization's channels,
enough to make the charts of `GET /analytics` meaningful (weekly rhythm, a growing
audience, campaigns that start and end, models and topics that perform differently).

Deterministic for an organization (seeded by its id), and made once: an organization
that already has published targets gets nothing more."""

from __future__ import annotations

import math
import random
import uuid
from datetime import datetime
from datetime import timedelta

from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.analytics.importer import ImportedLine
from pressroom.analytics.importer import ImportedPost
from pressroom.analytics.importer import connected_channels
from pressroom.analytics.importer import store
from pressroom.channels import service as channels_service
from pressroom.channels.models import Channel
from pressroom.kit.clock import utcnow
from pressroom.posts.models import PostTarget
from pressroom.providers.declarations import DECLARATIONS
from pressroom.runtime import Runtime

DEMO_DAYS = 90
# (tag, first day, last day) counted back from today: campaigns come and go.
CAMPAIGNS = (
    ("spring-launch", 88, 60),
    ("webinar-series", 75, 20),
    ("customer-stories", 90, 0),
    ("summer-sale", 35, 5),
    ("product-update", 25, 0),
)
TOPICS = ("pricing", "onboarding", "integrations", "security", "culture", "roadmap")
# Topics people engage with more (multiplies the engagement rate).
TOPIC_APPEAL = {"pricing": 1.3, "security": 0.8, "culture": 1.5, "roadmap": 1.1}
MODELS = (None, None, "gpt-5", "claude-sonnet-4.5", "gemini-2.5-pro")
MODEL_APPEAL = {None: 1.15, "gpt-5": 1.0, "claude-sonnet-4.5": 1.05, "gemini-2.5-pro": 0.9}
# Share of impressions per metric, before the appeal factors.
RATES = {
    "reach": 0.7,
    "views": 0.45,
    "likes": 0.035,
    "comments": 0.006,
    "shares": 0.004,
    "saves": 0.003,
    "clicks": 0.012,
}
WEEKDAY_TRAFFIC = (1.1, 1.15, 1.2, 1.1, 1.0, 0.6, 0.55)  # Monday first


async def demo_channels(
    session: AsyncSession, runtime: Runtime, organization_id: uuid.UUID
) -> list[Channel]:
    """The organization's connected channels; a sandbox channel is connected if it has none."""
    found = list((await connected_channels(session, organization_id)).values())
    if found:
        return sorted(found, key=lambda channel: channel.created_at)
    channel = await channels_service.connect(
        session,
        runtime,
        organization_id=organization_id,
        provider="sandbox",
        name="Sandbox",
        handle="@demo",
    )
    return [channel]


async def has_history(session: AsyncSession, organization_id: uuid.UUID) -> bool:
    count = await session.scalar(
        select(func.count())
        .select_from(PostTarget)
        .where(PostTarget.organization_id == organization_id, PostTarget.status == "published")
    )
    return bool(count)


def generate(
    organization_id: uuid.UUID, channels: list[Channel], now: datetime, days: int = DEMO_DAYS
) -> list[ImportedLine]:
    """The demo posts, one line per (post, channel) as the importer takes them."""
    rng = random.Random(organization_id.int)
    lines: list[ImportedLine] = []
    for back in range(days, 0, -1):
        day = (now - timedelta(days=back)).replace(hour=0, minute=0, second=0, microsecond=0)
        traffic = WEEKDAY_TRAFFIC[day.weekday()] * (1 + 0.6 * (days - back) / days)
        for _ in range(rng.choice((2, 3, 3, 4, 5))):
            published_at = day + timedelta(hours=rng.uniform(7, 20))
            tags = [tag for tag, first, last in CAMPAIGNS if last <= back <= first]
            tags = rng.sample(tags, min(len(tags), rng.choice((0, 1, 1, 2))))
            topics = rng.sample(TOPICS, rng.choice((0, 1, 1, 2)))
            model = rng.choice(MODELS)
            approval = rng.choice(("not_required", "not_required", "approved", "rejected"))
            appeal = MODEL_APPEAL[model] * math.prod(TOPIC_APPEAL.get(t, 1.0) for t in topics)
            # The import format is one post per channel: each demo post goes to one.
            for channel in (rng.choice(channels),):
                declaration = DECLARATIONS[channel.provider]
                impressions = int(rng.lognormvariate(6.2, 0.7) * traffic)
                metrics = {"impressions": impressions}
                for key, rate in RATES.items():
                    share = rate * (appeal if key not in ("reach", "views") else 1.0)
                    metrics[key] = int(impressions * share * rng.uniform(0.6, 1.4))
                post = ImportedPost(
                    channel_id=channel.id,
                    published_at=published_at + timedelta(seconds=rng.uniform(0, 30)),
                    text=f"Demo post about {', '.join(topics) or 'our week'}",
                    content_kind=declaration.content_kinds[0].kind,
                    tags=tags,
                    topics=topics,
                    model=model,
                    approval_status=approval,
                )
                lines.append(
                    ImportedLine(
                        number=len(lines) + 1,
                        post=post,
                        # Only what this network reports (a Bluesky post has no impressions).
                        metrics={k: v for k, v in metrics.items() if k in declaration.metrics},
                        provider=channel.provider,
                    )
                )
    return lines


async def create_demo_history(
    session: AsyncSession, runtime: Runtime, organization_id: uuid.UUID
) -> int:
    """About 90 days of history for the organization, unless it has published history
    already; the number of published targets made."""
    if await has_history(session, organization_id):
        return 0
    channels = await demo_channels(session, runtime, organization_id)
    lines = generate(organization_id, channels, utcnow())
    await store(session, organization_id, lines)
    return len(lines)
