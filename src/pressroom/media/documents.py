"""Inspect an uploaded PDF for real: its structure, whether it can be read, and its pages.

A file that starts with a PDF header (sniff.py) is only a claim. ISO 32000-1 section 7.5 says
what a whole PDF is: the header, a body of objects, a cross-reference table or stream, and a
trailer ending with `startxref`, the table's offset and `%%EOF`. Readers (and LinkedIn) look for
the end within the last 1024 bytes, so a file without it there is truncated or not a PDF. The
rest is read with pypdf, which follows the cross-reference data to the document catalog and
counts the leaves of its page tree without rendering (or decompressing) any page content: cheap
whatever the file holds. An encrypted (password-protected) document cannot be read by us nor
shown by a network without its password, and one without a page shows nothing: both are
refused.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pypdf import PdfReader


class UnreadableDocument(Exception):
    """The file is not a whole, readable PDF; the message is safe to show the client (inspect.py
    turns it into UnprocessableMedia)."""


# How far from the end the trailer's `%%EOF` may sit (ISO 32000-1 7.5.5, as readers apply it).
TRAILER_WINDOW = 1024

# pypdf reports every repair it makes to a sloppy but readable file as a warning; they are not
# ours to log for every upload.
logging.getLogger("pypdf").setLevel(logging.ERROR)


def pdf_page_count(path: Path) -> int:
    """The number of pages of the PDF at `path`; UnreadableDocument when it is not a whole,
    readable, unencrypted PDF with at least one page."""
    size = path.stat().st_size
    with path.open("rb") as file:
        file.seek(max(0, size - TRAILER_WINDOW))
        tail = file.read()
    if b"%%EOF" not in tail:
        raise UnreadableDocument(
            "the PDF has no end-of-file marker (%%EOF) in its last 1024 bytes: it is truncated "
            "or not a PDF"
        )
    if b"startxref" not in tail:
        raise UnreadableDocument("the PDF's trailer has no cross-reference offset (startxref)")
    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            raise UnreadableDocument(
                "the PDF is encrypted (password-protected); upload it without a password"
            )
        pages = len(reader.pages)
    except UnreadableDocument:
        raise
    except Exception as exc:
        # pypdf signals bad structure with PdfReadError, PdfStreamError, and plain ValueError,
        # KeyError, TypeError or RecursionError from deep in a broken object graph: at this
        # boundary every one of them means "not a readable PDF".
        message = str(exc).replace(str(path), "file").strip() or type(exc).__name__
        raise UnreadableDocument(f"the PDF cannot be read: {message}") from exc
    if pages < 1:
        raise UnreadableDocument("the PDF has no pages")
    return pages
