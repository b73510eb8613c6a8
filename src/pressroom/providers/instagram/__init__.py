"""Instagram through the Instagram API with Instagram Login: what it accepts (declaration.py),
how an account connects (oauth.py) and the adapter that publishes to it (adapter.py)."""

from pressroom.providers.instagram.adapter import InstagramAdapter
from pressroom.providers.instagram.oauth import InstagramConnector

__all__ = ["InstagramAdapter", "InstagramConnector"]
