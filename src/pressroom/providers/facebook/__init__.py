"""Facebook Pages: what a Page accepts (declaration.py), connecting Pages through Facebook Login
(oauth.py `CONNECTOR`) and publishing as a Page (adapter.py `FacebookAdapter`)."""

from pressroom.providers.facebook.adapter import FacebookAdapter
from pressroom.providers.facebook.oauth import CONNECTOR
from pressroom.providers.facebook.oauth import FacebookConnector

__all__ = ["CONNECTOR", "FacebookAdapter", "FacebookConnector"]
