"""from_attributes: records copied field by field from objects with the same names."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest
from pydantic import Field

from pressroom.kit.attributes import from_attributes
from pressroom.kit.schema import APIModel


@dataclasses.dataclass(frozen=True)
class Record:
    id: int
    name: str
    tags: list[str] = dataclasses.field(default_factory=list)
    note: str = ""
    derived: int = dataclasses.field(default=0, init=False)


class Model(APIModel):
    item_id: int = Field(description="An id.")
    label: str | None
    extra: int = 3


def test_dataclass_fields_are_read_by_name() -> None:
    source = SimpleNamespace(id=7, name="seven", tags=["a"], note="n", derived=9, other=1)
    assert from_attributes(Record, source) == Record(7, "seven", ["a"], "n")


def test_given_values_win_over_the_source() -> None:
    source = SimpleNamespace(id=7, name="seven", tags=["a"], note="n")
    assert from_attributes(Record, source, name="given") == Record(7, "given", ["a"], "n")


def test_a_field_with_a_default_keeps_it_when_the_source_lacks_it() -> None:
    built = from_attributes(Record, SimpleNamespace(id=1, name="one"))
    assert built == Record(1, "one")
    assert built.tags == [] and built.note == ""


def test_a_field_without_a_default_must_be_on_the_source() -> None:
    with pytest.raises(AttributeError):
        from_attributes(Record, SimpleNamespace(id=1))


def test_an_unknown_given_name_is_refused() -> None:
    with pytest.raises(TypeError, match="no field nme"):
        from_attributes(Record, SimpleNamespace(id=1, name="one"), nme="typo")


def test_pydantic_models_are_built_by_field_name() -> None:
    source = SimpleNamespace(item_id=4, label=None, extra=5)
    assert from_attributes(Model, source) == Model(item_id=4, label=None, extra=5)
    assert from_attributes(Model, SimpleNamespace(item_id=4), label="x") == Model(
        item_id=4, label="x"
    )


def test_other_classes_are_refused() -> None:
    with pytest.raises(TypeError, match="neither a dataclass nor a pydantic model"):
        from_attributes(SimpleNamespace, SimpleNamespace())
