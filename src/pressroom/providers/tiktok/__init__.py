"""TikTok: what it accepts (declaration.py), connecting an account (oauth.py) and the adapter
that posts to it (adapter.py)."""

from pressroom.providers.tiktok.adapter import TikTokAdapter
from pressroom.providers.tiktok.oauth import CONNECTOR
from pressroom.providers.tiktok.oauth import TikTokConnector

__all__ = ["CONNECTOR", "TikTokAdapter", "TikTokConnector"]
