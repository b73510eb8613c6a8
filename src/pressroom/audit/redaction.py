"""What must never reach the ledger: secrets, tokens and keys, by name or by shape."""

from __future__ import annotations

import re
from typing import Any

REDACTED = "[redacted]"

# Field names whose values are secret whatever they look like.
_SECRET_NAME = re.compile(
    r"(secret|token|password|passwd|authorization|credential|api_?key|^key$|private|jwt)",
    re.IGNORECASE,
)
# Values that are secret whatever they are called: our key and secret formats, bearer strings.
_SECRET_VALUE = re.compile(r"(prk_[A-Za-z0-9_-]{20,}|whsec_[A-Za-z0-9+/=]{20,}|Bearer\s+\S+)")


def redact(value: Any, name: str | None = None) -> Any:
    """A copy of `value` with every secret replaced by a marker."""
    if name is not None and _SECRET_NAME.search(name) and value is not None:
        return REDACTED
    if isinstance(value, dict):
        return {str(k): redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str) and _SECRET_VALUE.search(value):
        return _SECRET_VALUE.sub(REDACTED, value)
    return value
