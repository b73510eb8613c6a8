"""LinkedIn: what it accepts (declaration.py), connecting members and Pages (oauth.py) and
publishing to them (adapter.py)."""

from pressroom.providers.linkedin.adapter import LinkedInAdapter
from pressroom.providers.linkedin.oauth import CONNECTOR
from pressroom.providers.linkedin.oauth import LinkedInConnector

__all__ = ["CONNECTOR", "LinkedInAdapter", "LinkedInConnector"]
