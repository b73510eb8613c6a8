"""Input and output conventions of request and response bodies."""

from __future__ import annotations


def test_times_must_be_rfc3339_text_with_an_offset():
    import pytest
    from pydantic import TypeAdapter, ValidationError

    from pressroom.kit.schema import AwareDatetime

    adapter = TypeAdapter(AwareDatetime)
    assert adapter.validate_python("2026-12-01T09:00:00+02:00").isoformat() == (
        "2026-12-01T07:00:00+00:00"
    )
    assert adapter.validate_python("2026-12-01T09:00:00.5Z").microsecond == 500000
    for bad in (
        "0.5",
        "1700000000",
        1700000000,
        0.5,
        "2026-12-01T09:00:00",
        "2026-12-01",
        "yesterday",
        "",
    ):
        with pytest.raises(ValidationError):
            adapter.validate_python(bad)
