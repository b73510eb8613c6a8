"""What one process holds: settings, the database engine, counters, the server key."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from pressroom.config import Settings
from pressroom.db import create_engine, make_sessionmaker
from pressroom.kit.crypto import SecretBox, load_or_create_server_key
from pressroom.kit.notify import Notifier
from pressroom.kit.ratelimit import RateLimiter


@dataclass
class Runtime:
    settings: Settings
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    limiter: RateLimiter
    box: SecretBox
    notifier: Notifier = field(default_factory=Notifier)

    @classmethod
    def build(cls, settings: Settings) -> Runtime:
        engine = create_engine(
            settings.effective_database_url, pool_size=settings.database_pool_size
        )
        return cls(
            settings=settings,
            engine=engine,
            sessions=make_sessionmaker(engine),
            limiter=RateLimiter.from_url(settings.redis_url),
            box=SecretBox(
                load_or_create_server_key(settings.secret_key, settings.resolved_data_dir)
            ),
            notifier=Notifier(engine),
        )

    async def close(self) -> None:
        await self.notifier.close()
        await self.engine.dispose()
