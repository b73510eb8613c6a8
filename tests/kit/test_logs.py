"""The service's log output: database errors are described without their text."""

from __future__ import annotations

import io
import json
import logging
import sqlite3

from sqlalchemy.exc import IntegrityError

from pressroom.kit.logs import DatabaseErrorFilter
from pressroom.kit.logs import JSONFormatter
from pressroom.kit.logs import format_exception
from pressroom.kit.logs import log_handler

MARKER = "customer-text-4821"


def database_error() -> IntegrityError:
    """A database error as SQLAlchemy raises it, with the parameters and the driver's
    message both quoting the value."""
    try:
        try:
            raise sqlite3.IntegrityError(f"UNIQUE constraint failed: value {MARKER!r}")
        except sqlite3.IntegrityError as driver_error:
            raise IntegrityError(
                "INSERT INTO members (email) VALUES (?)", (MARKER,), driver_error
            ) from driver_error
    except IntegrityError as error:
        return error


def test_a_database_error_is_formatted_with_its_type_and_statement_but_no_values():
    error = database_error()
    text = format_exception((type(error), error, error.__traceback__))
    assert MARKER not in text
    assert "sqlalchemy.exc.IntegrityError" in text and "sqlite3.IntegrityError" in text
    assert "INSERT INTO members (email) VALUES (?)" in text
    assert "test_logs.py" in text  # the stack is kept


def test_other_errors_are_formatted_in_full():
    try:
        raise ValueError(MARKER)
    except ValueError as error:
        text = format_exception((type(error), error, error.__traceback__))
    assert f"ValueError: {MARKER}" in text


def test_the_service_handler_withholds_database_errors_from_every_formatter():
    stream = io.StringIO()
    handler = log_handler(stream)
    logger = logging.getLogger("pressroom.test_logs")
    logger.addHandler(handler)
    logger.propagate = False
    handled: list[logging.LogRecord] = []
    handler.addFilter(lambda record: handled.append(record) or True)
    try:
        error = database_error()
        try:
            raise error
        except IntegrityError:
            logger.exception("unhandled error")
        logger.error("failed: %s", database_error())
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert lines[0]["message"] == "unhandled error"
    assert "IntegrityError" in lines[0]["exception"]
    assert MARKER not in stream.getvalue()
    for record in handled:
        assert MARKER not in logging.Formatter().format(record)


def test_the_filter_leaves_other_records_alone():
    record = logging.makeLogRecord({"msg": "value %s", "args": (MARKER,)})
    assert DatabaseErrorFilter().filter(record)
    assert JSONFormatter().format(record).count(MARKER) == 1
