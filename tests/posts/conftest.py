from __future__ import annotations

import pytest

from pressroom.runtime import Runtime
from tests.posts.factories import cancel_queued_targets


@pytest.fixture(autouse=True)
async def empty_publishing_queue(runtime: Runtime) -> None:
    await cancel_queued_targets(runtime)
