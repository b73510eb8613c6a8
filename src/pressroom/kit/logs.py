"""Structured logs (one JSON object a line), scrubbed of secrets as a last line of defence.

Database errors are never logged with their text: SQLAlchemy's message carries the statement's
parameters (user content, encrypted secrets) unless the engine hides them, and the drivers
quote rejected values in their own messages (asyncpg: `invalid input for query argument $1:
'...'`). Their type, SQLSTATE, statement and stack are enough to diagnose them."""

from __future__ import annotations

import json
import logging
import re
import sys
import traceback
from types import TracebackType
from typing import Any
from typing import TextIO

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.exc import StatementError

_SECRET = re.compile(r"(prk_[A-Za-z0-9_-]{20,}|whsec_[A-Za-z0-9+/=]{20,}|Bearer\s+\S+)")
# Modules of the database drivers and of SQLAlchemy's adapters around them.
_DATABASE_MODULES = ("sqlalchemy.", "asyncpg.", "sqlite3", "aiosqlite.")
_WITHHELD = "[message withheld: database errors may quote parameter values]"

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


def scrub(text: str) -> str:
    return _SECRET.sub("[redacted]", text)


def is_database_error(exc: BaseException) -> bool:
    return isinstance(exc, SQLAlchemyError) or type(exc).__module__.startswith(_DATABASE_MODULES)


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and those it was raised from or during, outermost first."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        if current.__cause__ is not None:
            current = current.__cause__
        elif current.__suppress_context__:
            current = None
        else:
            current = current.__context__
    return chain


def _summary(exc: BaseException) -> str:
    """A database error described without its message."""
    name = f"{type(exc).__module__}.{type(exc).__qualname__}"
    code = getattr(exc, "sqlstate", None) or getattr(getattr(exc, "orig", None), "sqlstate", None)
    text = f"{name}: {_WITHHELD}"
    if code:
        text += f" (SQLSTATE {code})"
    if isinstance(exc, StatementError) and exc.statement:
        text += f"\n[SQL: {exc.statement}]"
    return text


def format_exception(exc_info: ExcInfo) -> str:
    """Like `traceback.format_exception`, but every exception at or below a database error in
    the chain (the driver's own errors, and what they were raised from) shows only its type."""
    chain = _chain(exc_info[1])
    withheld = False
    blocks: list[str] = []
    for exc in chain:
        withheld = withheld or is_database_error(exc)
        lines = ["Traceback (most recent call last):\n", *traceback.format_tb(exc.__traceback__)]
        if withheld:
            lines.append(_summary(exc) + "\n")
        else:
            lines.extend(traceback.format_exception_only(type(exc), exc))
        blocks.append("".join(lines))
    return "\nThe above exception led to the following one:\n\n".join(reversed(blocks)).rstrip()


def _has_database_error(exc: BaseException) -> bool:
    return any(is_database_error(item) for item in _chain(exc))


class DatabaseErrorFilter(logging.Filter):
    """Renders a record's database error (in exc_info or in the arguments) without its text,
    before any formatter sees it: exc_info is replaced by the withheld rendering."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            if _has_database_error(exc):
                record.exc_text = format_exception((type(exc), exc, exc.__traceback__))
                record.exc_info = None
        if isinstance(record.args, tuple) and any(
            isinstance(arg, BaseException) and _has_database_error(arg) for arg in record.args
        ):
            record.args = tuple(
                _summary(arg) if isinstance(arg, BaseException) and is_database_error(arg) else arg
                for arg in record.args
            )
        return True


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
        elif record.exc_text:
            entry["exception"] = record.exc_text
        return scrub(json.dumps(entry, default=str, ensure_ascii=False))

    def formatException(self, ei: Any) -> str:
        if ei[1] is None:
            return super().formatException(ei)
        return format_exception(ei)


def log_handler(stream: TextIO) -> logging.Handler:
    """The service's handler: JSON lines, database errors withheld."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JSONFormatter())
    handler.addFilter(DatabaseErrorFilter())
    return handler


def configure_logging(level: str = "INFO") -> None:
    root = logging.getLogger()
    root.handlers[:] = [log_handler(sys.stderr)]
    root.setLevel(level.upper())
    # Our own access log replaces uvicorn's (which would print query strings verbatim).
    logging.getLogger("uvicorn.access").disabled = True
    logging.getLogger("uvicorn.access").propagate = False
    logging.getLogger("alembic").setLevel(logging.WARNING)
