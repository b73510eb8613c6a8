"""Publishing a plan of steps (steps.py), resuming what an earlier attempt already did.

For each step, in order:

1. already published by this process (progress.py): its id is reused;
2. on a retry, a step this process knows nothing about, that is the post itself or replies to
   a post an earlier attempt made, is looked for among what the account published
   (recovery.py): found, it is not posted again;
3. a container this process made for it less than 24 hours ago is polled: `FINISHED` is
   published, `PUBLISHED` means the earlier attempt's publish went through though its answer
   was lost (the post is looked for), `EXPIRED` is replaced;
4. otherwise a new container is made (reusing the carousel items already made), waited for
   and published.

Before the first step that really posts, the account's quota is checked for all that remains.
"""

from __future__ import annotations

from pressroom.providers.adapter import ProviderError
from pressroom.providers.threads.containers import Containers
from pressroom.providers.threads.containers import Step
from pressroom.providers.threads.progress import CONTAINER_LIFETIME_SECONDS
from pressroom.providers.threads.progress import PublishProgress
from pressroom.providers.threads.progress import StepProgress
from pressroom.providers.threads.quota import check_quota
from pressroom.providers.threads.recovery import find_published_post
from pressroom.providers.threads.recovery import find_published_reply
from pressroom.providers.threads.session import ThreadsSession


async def publish_steps(
    session: ThreadsSession,
    containers: Containers,
    steps: list[Step],
    progress: PublishProgress,
    attempt: int,
) -> str:
    """Publish every step not yet published; the post's id (the first step's)."""
    ids: list[str] = []
    recovered: set[int] = set()
    quota_checked = False
    for step in steps:
        state = progress.step(step.index)
        parent = ids[step.reply_to] if step.reply_to is not None else None
        untouched = state.media_id is None and not state.started_at
        if untouched and attempt > 1 and (step.reply_to is None or step.reply_to in recovered):
            state.media_id = await _find(session, step, parent)
            if state.media_id is not None:
                recovered.add(step.index)
        if state.media_id is None:
            if not quota_checked:
                remaining = steps[step.index :]
                roots = sum(1 for s in remaining if s.reply_to is None)
                await check_quota(session, posts=roots, replies=len(remaining) - roots)
                quota_checked = True
            state.media_id = await _publish(session, containers, step, state, parent)
        ids.append(state.media_id)
    return ids[0]


async def _publish(
    session: ThreadsSession,
    containers: Containers,
    step: Step,
    state: StepProgress,
    parent: str | None,
) -> str:
    now = session.clock()
    if not state.started_at or now - state.started_at >= CONTAINER_LIFETIME_SECONDS:
        state.restart(now)
    if state.container_id is not None:
        status = await containers.wait(state.container_id, step.label)
        if status == "FINISHED":
            return await containers.publish(state.container_id, step.label)
        if status == "PUBLISHED":
            found = await _find(session, step, parent)
            if found is None:
                raise ProviderError(
                    "provider_unavailable",
                    f"Threads reports {step.label} published, but does not list it yet; it "
                    "will be looked for again.",
                )
            return found
        state.restart(now)  # EXPIRED
    state.container_id = await containers.create(step, parent, state.items)
    status = await containers.wait(state.container_id, step.label)
    if status != "FINISHED":
        raise ProviderError(
            "provider_unavailable",
            f"Threads answered {status} for the new container of {step.label}; it will be retried.",
        )
    return await containers.publish(state.container_id, step.label)


async def _find(session: ThreadsSession, step: Step, parent: str | None) -> str | None:
    if parent is None:
        return await find_published_post(session, step)
    return await find_published_reply(session, parent, step)
