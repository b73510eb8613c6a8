"""The HTTP boundary: the route class (per-request unit of work, access checks, idempotency,
audit hook), the middleware, problem rendering and the OpenAPI document. Domains' `routes.py`
modules build on it; it knows no domain beyond who is calling (auth) and what is recorded
(audit)."""
