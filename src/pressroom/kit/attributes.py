"""Records built from objects that carry their fields under the same names."""

from __future__ import annotations

import dataclasses
from typing import Any
from typing import TypeVar

from pydantic import BaseModel

T = TypeVar("T")


# Each class's fields, read once.
_FIELDS: dict[type[Any], tuple[tuple[str, bool], ...]] = {}


def _fields(cls: type[Any]) -> tuple[tuple[str, bool], ...]:
    """Each field `cls` is built from, and whether it has a default."""
    known = _FIELDS.get(cls)
    if known is None:
        known = _FIELDS[cls] = _read_fields(cls)
    return known


def _read_fields(cls: type[Any]) -> tuple[tuple[str, bool], ...]:
    if dataclasses.is_dataclass(cls):
        return tuple(
            (
                f.name,
                f.default is not dataclasses.MISSING
                or f.default_factory is not dataclasses.MISSING,
            )
            for f in dataclasses.fields(cls)
            if f.init
        )
    if issubclass(cls, BaseModel):
        return tuple((name, not info.is_required()) for name, info in cls.model_fields.items())
    raise TypeError(f"{cls.__name__} is neither a dataclass nor a pydantic model")


def from_attributes(cls: type[T], source: object, /, **given: Any) -> T:
    """`cls` (a dataclass or a pydantic model) built from `given` and, for every other field,
    the attribute of `source` with the same name (a database row, an ORM object, another
    record). A field with a default keeps it when `source` has no such attribute; a field
    without one must be found on `source`. A name in `given` that is not a field of `cls` is a
    TypeError."""
    fields = _fields(cls)
    unknown = given.keys() - {name for name, _ in fields}
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(unknown))}")
    values = dict(given)
    for name, has_default in fields:
        if name in values:
            continue
        if has_default and not hasattr(source, name):
            continue
        values[name] = getattr(source, name)
    return cls(**values)
