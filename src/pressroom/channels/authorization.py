"""Connecting channels through the provider's OAuth authorization: X (PKCE), Mastodon (an app
registered on the instance, then PKCE) and every network in `registry.CONNECTORS` (Facebook,
Instagram, Threads, ...), whose grants may cover several accounts.

1. startChannelConnection: `prepare` makes a random `state` and has the provider's step
   (channels/oauth_grants.py) build the authorization URL and what the callback will need (a
   PKCE verifier, Mastodon's app secret, whatever a connector's `start` keeps); `record`
   stores the pending authorization, bound to the organization and the member (and key) who
   started it, with the state only as a SHA-256 digest and those secrets encrypted with the
   server key. It lives 10 minutes and serves one callback.
2. The provider sends the person's browser to `/connect/{provider}/callback?code=&state=`.
   `claim` finds the pending authorization by the state's digest and marks it used (a
   conditional update: of two callbacks with one state, one wins), in a transaction of its own.
3. `exchange` trades the code for the granted accounts' credentials, outside any transaction.
4. `complete` creates one channel per account (each emitting channel.connected.v1) with the
   credentials stored encrypted, in one transaction; the caller appends the audit entries in
   the same transaction.

No token, verifier or client secret ever reaches a response, a log line or the ledger; the
state is shown once, in the start's own response (and the authorization URL).
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import secrets
import uuid
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from datetime import timedelta
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.auth.service import Principal
from pressroom.channels import oauth_grants
from pressroom.channels import repository
from pressroom.channels import service as channels
from pressroom.channels.adapters import with_limits
from pressroom.channels.models import Channel
from pressroom.channels.models import ChannelAuthorization
from pressroom.config import Settings
from pressroom.kit.attributes import from_attributes
from pressroom.kit.clock import utcnow
from pressroom.kit.errors import FieldError
from pressroom.kit.errors import PressroomError
from pressroom.kit.errors import field_error
from pressroom.kit.errors import validation_error
from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import ConnectedAccount
from pressroom.providers.declarations import PROVIDER_IDS
from pressroom.providers.http import safe_detail
from pressroom.providers.mastodon import oauth as mastodon_oauth
from pressroom.providers.registry import configured_providers
from pressroom.runtime import Runtime

AUTHORIZATION_LIFETIME = timedelta(minutes=10)
# Pending authorizations are deleted this long after they expired (until then an old state
# is answered "expired" rather than "unknown").
KEEP_EXPIRED = timedelta(days=1)
# How other providers are connected, for the 400 that says so.
OTHER_WAYS = {
    "bluesky": "bluesky connects with an app password: "
    "`pressroom channels connect bluesky --handle H --app-password-env VAR`",
    "sandbox": "the sandbox needs no authorization: `pressroom channels connect sandbox`",
}


@dataclass(frozen=True)
class StartedAuthorization:
    id: uuid.UUID
    authorization_url: str
    state: str = field(repr=False)
    expires_at: datetime


@dataclass(frozen=True)
class ClaimedAuthorization:
    """A pending authorization taken by its callback, with what its start kept decrypted."""

    id: uuid.UUID
    organization_id: uuid.UUID
    member_id: uuid.UUID
    credential_id: uuid.UUID
    credential_prefix: str
    provider: str
    name: str
    instance: str | None
    return_url: str | None
    kept: dict[str, str] = field(repr=False)


def state_digest(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


def check_provider(provider: str, settings: Settings) -> None:
    """404 for an unknown provider; 400 for one that is not connected through OAuth here, or
    not configured in this deployment (naming the settings it lacks)."""
    if provider not in PROVIDER_IDS:
        raise PressroomError("not_found", detail=f"No provider {provider!r}.")
    if not oauth_grants.connected_through_oauth(provider):
        reason = OTHER_WAYS.get(
            provider, f"{provider} cannot be connected in this deployment yet (no adapter for it)"
        )
        raise field_error("provider", "unsupported", reason)
    if provider not in configured_providers(settings):
        reason = channels.not_configured_reason(provider, settings)
        raise field_error("provider", "not_configured", reason)


@dataclass(frozen=True)
class PreparedAuthorization:
    """An authorization ready to be recorded: where to send the person, and what the callback
    will need (kept encrypted)."""

    provider: str
    name: str
    instance: str | None
    return_url: str | None
    authorization_url: str
    state: str = field(repr=False)
    secret: dict[str, str] = field(repr=False)


async def prepare(
    runtime: Runtime,
    *,
    provider: str,
    name: str,
    instance: str | None,
    return_url: str | None,
) -> PreparedAuthorization:
    """Check the request and build the provider's authorization URL. For Mastodon, the app is
    looked up, or registered on the instance, in transactions of its own (a registration is
    kept even if the request then fails); call this before the request's transaction begins."""
    check_provider(provider, runtime.settings)
    errors = _check_start(provider, name, instance, return_url)
    if errors:
        raise validation_error(errors)
    state = secrets.token_urlsafe(32)
    started = await oauth_grants.start(runtime, provider, state, instance)
    return PreparedAuthorization(
        provider, name.strip(), started.instance, return_url, started.url, state, started.secret
    )


async def record(
    session: AsyncSession, runtime: Runtime, principal: Principal, prepared: PreparedAuthorization
) -> StartedAuthorization:
    """Store the pending authorization, bound to the caller, for 10 minutes and one callback."""
    now = utcnow()
    await repository.purge_authorizations(session, now - KEEP_EXPIRED)
    row = ChannelAuthorization(
        organization_id=principal.organization_id,
        member_id=principal.member_id,
        credential_id=principal.credential_id,
        credential_prefix=principal.credential_prefix,
        provider=prepared.provider,
        name=prepared.name,
        instance=prepared.instance,
        return_url=prepared.return_url,
        state_digest=state_digest(prepared.state),
        secret_encrypted=runtime.box.encrypt(json.dumps(prepared.secret)),
        created_at=now,
        expires_at=now + AUTHORIZATION_LIFETIME,
    )
    session.add(row)
    await session.flush()
    return StartedAuthorization(row.id, prepared.authorization_url, prepared.state, row.expires_at)


def _check_start(
    provider: str, name: str, instance: str | None, return_url: str | None
) -> list[FieldError]:
    errors = []
    if not name.strip():
        errors.append(FieldError("name", "required", "must not be blank"))
    if provider == "mastodon":
        if instance is None or not instance.strip():
            errors.append(
                FieldError(
                    "instance",
                    "required",
                    "mastodon needs the instance, e.g. https://mastodon.social",
                )
            )
        else:
            try:
                mastodon_oauth.check_instance_url(instance)
            except ValueError as exc:
                errors.append(FieldError("instance", "invalid", str(exc)))
    elif instance is not None:
        errors.append(FieldError("instance", "not_applicable", f"{provider} has no instances"))
    if return_url is not None:
        reason = _return_url_problem(return_url)
        if reason is not None:
            errors.append(FieldError("redirectUri", "invalid", reason))
    return errors


def _return_url_problem(url: str) -> str | None:
    if any(c.isspace() or ord(c) < 0x20 or c == "\\" for c in url):
        return "must not contain whitespace, control characters or backslashes"
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return "must be an absolute https URL"
    if parts.username is not None or parts.password is not None:
        return "must not contain credentials"
    if parts.fragment or url.endswith("#"):
        return "must not contain a fragment"
    if parts.scheme == "http" and not _is_loopback(parts.hostname):
        return "must use https (http only for localhost and loopback addresses)"
    return None


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def claim(
    session: AsyncSession, runtime: Runtime, provider: str, state: str | None
) -> ClaimedAuthorization:
    """Take the pending authorization `state` names, once. 400 (field `state`) when it is
    missing, unknown (or for another provider), expired or already used."""
    if not state:
        raise field_error("state", "required", "the callback carries no state")
    row = await repository.authorization_by_state_digest(session, state_digest(state))
    if row is None or row.provider != provider:
        raise field_error(
            "state", "unknown", "names no pending connection; start the connection again"
        )
    now = utcnow()
    if row.used_at is not None:
        raise field_error(
            "state",
            "already_used",
            "this connection was already completed or refused; start the connection again",
        )
    if row.expires_at <= now:
        raise field_error(
            "state",
            "expired",
            f"the connection had to be completed within "
            f"{int(AUTHORIZATION_LIFETIME.total_seconds() // 60)} minutes; start it again",
        )
    if not await repository.use_authorization(session, row.id, now):
        raise field_error(
            "state",
            "already_used",
            "this connection was already completed or refused; start the connection again",
        )
    secret: dict[str, str] = json.loads(runtime.box.decrypt(row.secret_encrypted))
    return from_attributes(ClaimedAuthorization, row, kept=secret)


def refused_by_provider(error: str, description: str | None) -> PressroomError:
    """The provider sent the browser back with an error (`access_denied`: the person declined)."""
    said = safe_detail(description or "", ())
    code = error if error.replace("_", "").isalnum() and len(error) <= 64 else "provider_error"
    message = (
        "the person declined to authorize Pressroom"
        if error == "access_denied"
        else f"the provider refused the authorization ({error[:64]})"
    )
    if said:
        message += f": {said}"
    return field_error("error", code, message + "; no channel was connected")


async def exchange(
    runtime: Runtime, authorization: ClaimedAuthorization, code: str | None
) -> list[ConnectedAccount]:
    """Trade the callback's code for the granted accounts' credentials (network; no
    transaction). 400 on `code` when the provider refuses it or grants no account."""
    if not code:
        raise field_error("code", "required", "the callback carries no authorization code")
    provider = authorization.provider
    try:
        accounts = await oauth_grants.exchange(
            runtime, provider, code, authorization.kept, authorization.instance
        )
    except ProviderError as error:
        raise field_error(
            "code",
            "rejected" if error.code == "auth_expired" else "provider_failed",
            f"{provider} did not complete the connection: {error.message}",
        ) from None
    if not accounts:
        raise field_error(
            "code",
            "no_account",
            f"{provider} granted access to no account; start the connection again and select "
            "the account(s) to connect",
        )
    return await with_limits(provider, accounts, runtime)


async def complete(
    session: AsyncSession,
    runtime: Runtime,
    authorization: ClaimedAuthorization,
    accounts: list[ConnectedAccount],
) -> list[Channel]:
    """Create one channel per granted account, with its credentials (encrypted), each
    emitting channel.connected.v1."""
    return await channels.connect_accounts(
        session,
        runtime,
        organization_id=authorization.organization_id,
        provider=authorization.provider,
        name=authorization.name,
        accounts=accounts,
    )
