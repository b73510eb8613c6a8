"""Structured logs (one JSON object a line), scrubbed of secrets as a last line of defence."""

from __future__ import annotations

import json
import logging
import re
import sys
from typing import Any

_SECRET = re.compile(r"(prk_[A-Za-z0-9_-]{20,}|whsec_[A-Za-z0-9+/=]{20,}|Bearer\s+\S+)")


def scrub(text: str) -> str:
    return _SECRET.sub("[redacted]", text)


class JSONFormatter(logging.Formatter):
    _RESERVED = set(vars(logging.makeLogRecord({})))

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in self._RESERVED and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return scrub(json.dumps(entry, default=str, ensure_ascii=False))


def configure_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # Our own access log replaces uvicorn's (which would print query strings verbatim).
    logging.getLogger("uvicorn.access").disabled = True
    logging.getLogger("uvicorn.access").propagate = False
    logging.getLogger("alembic").setLevel(logging.WARNING)
