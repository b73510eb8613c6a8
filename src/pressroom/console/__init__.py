"""The console at `/console`: server-rendered pages (Jinja2 templates and htmx) for people.

It signs a person in (a one-time link, or an API key pasted once) and then acts for them
through the API itself, in process: every read and write goes through the same routes, scope
and role checks, validation, services and audit ledger as a call with a key (`api.py`)."""
