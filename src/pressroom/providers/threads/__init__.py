"""Threads: what it accepts (declaration.py), connecting an account (oauth.py) and the adapter
that publishes to it (adapter.py)."""

from pressroom.providers.threads.adapter import ThreadsAdapter
from pressroom.providers.threads.oauth import CONNECTOR
from pressroom.providers.threads.oauth import ThreadsConnector

__all__ = ["CONNECTOR", "ThreadsAdapter", "ThreadsConnector"]
