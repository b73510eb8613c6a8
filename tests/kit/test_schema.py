"""Input and output conventions of request and response bodies."""

from __future__ import annotations


def test_times_must_be_rfc3339_text_with_an_offset():
    import pytest
    from pydantic import TypeAdapter
    from pydantic import ValidationError

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


def test_a_time_whose_utc_instant_leaves_the_years_1_to_9999_is_refused_not_raised():
    import pytest
    from pydantic import TypeAdapter
    from pydantic import ValidationError

    from pressroom.kit.schema import AwareDatetime

    adapter = TypeAdapter(AwareDatetime)
    for text in ("9999-12-31T20:00:00-14:00", "0001-01-01T00:00:00+05:00"):
        with pytest.raises(ValidationError) as raised:
            adapter.validate_python(text)
        assert raised.value.errors()[0]["type"] == "out_of_range"
    assert adapter.validate_python("9999-12-31T23:59:59.999999Z").year == 9999
    assert adapter.validate_python("0001-01-01T05:00:00+05:00").year == 1


def test_not_null_fields_may_be_absent_but_not_null_and_show_no_null():
    import pytest
    from pydantic import ValidationError

    from pressroom.kit.schema import APIInput
    from pressroom.kit.schema import NotNull

    class Patch(APIInput):
        enabled: NotNull[bool] = None
        note: str | None = None

    assert Patch.model_validate({}).enabled is None
    assert Patch.model_validate({"enabled": False}).enabled is False
    with pytest.raises(ValidationError) as raised:
        Patch.model_validate({"enabled": None})
    assert raised.value.errors()[0]["type"] == "null"
    properties = Patch.model_json_schema()["properties"]
    assert properties["enabled"] == {"title": "Enabled", "type": "boolean"}
    assert {"type": "null"} in properties["note"]["anyOf"]


def test_integer_fields_take_integral_numbers_but_not_strings_or_booleans():
    import pytest
    from pydantic import TypeAdapter
    from pydantic import ValidationError

    from pressroom.kit.schema import JSONInt

    adapter = TypeAdapter(JSONInt)
    assert adapter.validate_json("60.0") == 60
    assert adapter.validate_json("60") == 60
    for bad in ("60.5", '"60"', "true", "1e400"):
        with pytest.raises(ValidationError):
            adapter.validate_json(bad)


def test_no_input_string_may_hold_a_nul_character_at_any_depth():
    import pytest
    from pydantic import ValidationError

    from pressroom.kit.schema import APIInput

    class Entry(APIInput):
        text: str

    class Body(APIInput):
        name: str = ""
        labels: list[str] = []
        entries: list[Entry] = []
        options: dict[str, object] = {}

    for given, field in (
        ({"name": "a\x00"}, ("name",)),
        ({"labels": ["ok", "b\x00"]}, ("labels",)),
        ({"entries": [{"text": "\x00"}]}, ("entries",)),
        ({"options": {"k\x00": 1}}, ("options",)),
        ({"options": {"k": {"deep": ["\x00"]}}}, ("options",)),
    ):
        with pytest.raises(ValidationError) as raised:
            Body.model_validate(given)
        error = raised.value.errors()[0]
        assert (error["type"], error["loc"][:1]) == ("invalid_character", field), given
    assert Body.model_validate({"name": "\\u0000 is six characters"}).name.startswith("\\u")
