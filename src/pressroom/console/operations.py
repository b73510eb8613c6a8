"""The operations screens' routers (webhooks, analytics, audit, media, channels), installed
by `routes.py` after the overview's and the posts screens'."""

from __future__ import annotations

from fastapi import APIRouter

from pressroom.console import analytics
from pressroom.console import audit
from pressroom.console import channels
from pressroom.console import library
from pressroom.console import webhooks

OPERATIONS_ROUTERS: tuple[APIRouter, ...] = (
    webhooks.router,
    analytics.router,
    audit.router,
    library.router,
    channels.router,
)
