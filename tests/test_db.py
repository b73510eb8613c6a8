"""The transaction boundary of db.py on both databases."""

from __future__ import annotations

import asyncio

from sqlalchemy import select
from sqlalchemy import text

from pressroom.auth.models import Organization
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from pressroom.tenant import service as tenant_service


async def test_a_long_autocommit_read_never_blocks_a_writer(runtime: Runtime):
    """Reports read through `Runtime.reader`; on SQLite a read that took the write lock
    would stall every write until the report ended (busy_timeout is 30 s)."""
    async with runtime.reader.connect() as reading:
        assert (await reading.execute(text("SELECT 1"))).scalar() == 1
        # The reading connection is still open, mid-report, when a write commits.

        async def write() -> None:
            async with unit_of_work(runtime.sessions) as session:
                await tenant_service.create_organization(session, "Written during a report")

        await asyncio.wait_for(write(), timeout=5)
        names = (await reading.execute(select(Organization.name))).scalars().all()
    assert "Written during a report" in names


async def test_a_failed_unit_of_work_leaves_nothing(runtime: Runtime):
    class Boom(Exception):
        pass

    try:
        async with unit_of_work(runtime.sessions) as session:
            await tenant_service.create_organization(session, "Never kept")
            await session.flush()
            raise Boom
    except Boom:
        pass
    async with unit_of_work(runtime.sessions) as session:
        kept = await session.scalar(select(Organization).where(Organization.name == "Never kept"))
    assert kept is None
