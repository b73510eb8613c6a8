"""YouTube: what it accepts (declaration.py), connecting a channel through Google OAuth
(oauth.py `CONNECTOR`) and uploading videos and Shorts to it (adapter.py `YouTubeAdapter`)."""

from pressroom.providers.youtube.adapter import YouTubeAdapter
from pressroom.providers.youtube.oauth import CONNECTOR
from pressroom.providers.youtube.oauth import YouTubeConnector

__all__ = ["CONNECTOR", "YouTubeAdapter", "YouTubeConnector"]
