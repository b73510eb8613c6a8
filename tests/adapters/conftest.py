"""Every adapter test runs under respx with `assert_all_mocked`: a request to any address the
test did not record fails the test, so nothing leaves the machine, and `assert_all_called`: an
exchange recorded but never made fails it too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import respx


@pytest.fixture
def network() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_mocked=True, assert_all_called=True) as router:
        yield router
