"""The composition root: what the domains hand each other through the runtime.

A domain may only call the domains below it; where a lower one must set off a use case of a
higher one, the higher one's use case is registered here as a hook on the runtime. Every
process that serves the API (`app.create_app`) wires its runtime."""

from __future__ import annotations

from pressroom.posts.service import fail_targets_of_disconnected_channel
from pressroom.runtime import Runtime


def wire(runtime: Runtime) -> Runtime:
    """Register the cross-domain hooks on `runtime` (once, however often it is called)."""
    hooks = runtime.hooks
    if fail_targets_of_disconnected_channel not in hooks.channel_gone:
        hooks.channel_gone.append(fail_targets_of_disconnected_channel)
    return runtime
