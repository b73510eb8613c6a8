"""Pinterest: what it accepts (declaration.py), connecting an account through OAuth (oauth.py
`CONNECTOR`) and publishing pins to its boards (adapter.py `PinterestAdapter`)."""

from pressroom.providers.pinterest.adapter import PinterestAdapter
from pressroom.providers.pinterest.oauth import CONNECTOR
from pressroom.providers.pinterest.oauth import PinterestConnector

__all__ = ["CONNECTOR", "PinterestAdapter", "PinterestConnector"]
