"""Webhooks: endpoints, signed deliveries, replay.

The package root re-exports only the receiver-side verification helper, so integrators can write
`from pressroom.webhooks import verify` without importing the database or HTTP layers. Keep it
that way: import nothing here but `signing`.
"""

from pressroom.webhooks.signing import WebhookVerificationError
from pressroom.webhooks.signing import verify

__all__ = ["WebhookVerificationError", "verify"]
