from __future__ import annotations

import pytest

from pressroom.runtime import Runtime
from tests.channels.fake_connector import FakeConnector
from tests.channels.fake_connector import register
from tests.posts.factories import cancel_queued_targets


@pytest.fixture(autouse=True)
async def empty_publishing_queue(runtime: Runtime) -> None:
    await cancel_queued_targets(runtime)


@pytest.fixture
def connector(monkeypatch: pytest.MonkeyPatch) -> FakeConnector:
    """A network connected through an OAuth connector (a fake Facebook) for the test."""
    return register(monkeypatch)
