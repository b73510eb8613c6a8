"""connectChannel on the command line (`pressroom channels connect`).

A real account's credentials are checked with the network first (channels/verification.py),
outside any transaction, so a wrong app password or a revoked token stores nothing; the channel,
its credentials (encrypted with the server key) and the audit entry are then written in one unit
of work. A token that gives access to several accounts (a Facebook user's Pages) connects one
channel per account, all in that unit of work. The sandbox, and any provider with
`--simulated`, take no credentials.

Secrets arrive as options or, to keep them out of shell history and process listings, as the
names of environment variables holding them (`--access-token-env VAR`). They go to the provider
and, encrypted, to the channel row: never to a log, an error message or the audit entry.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Collection
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from pressroom.audit import service as audit
from pressroom.channels import service
from pressroom.channels import verification
from pressroom.channels.adapters import with_limits
from pressroom.channels.models import Channel
from pressroom.config import Settings
from pressroom.db import unit_of_work
from pressroom.providers.connection import ConnectedAccount
from pressroom.providers.declarations import PROVIDER_IDS
from pressroom.providers.registry import configured_providers
from pressroom.runtime import Runtime
from pressroom.tenant import service as tenant


@dataclass(frozen=True)
class SecretOption:
    """A secret given directly (`--app-password P`) or by the name of an environment variable
    that holds it (`--app-password-env VAR`)."""

    value: str | None = field(default=None, repr=False)
    variable: str | None = None

    @property
    def given(self) -> bool:
        return self.value is not None or self.variable is not None

    def read(self, option: str) -> str | None:
        """The secret; ValueError if both forms were given or the variable is unset."""
        if self.value is not None and self.variable is not None:
            raise ValueError(f"give {option} or {option}-env, not both")
        if self.variable is None:
            return self.value
        found = os.environ.get(self.variable, "").strip()
        if not found:
            raise ValueError(f"{option}-env names {self.variable}, which is not set or is empty")
        return found


@dataclass(frozen=True)
class ConnectRequest:
    """The command's arguments and options, as the person typed them."""

    provider: str
    name: str
    handle: str | None = None
    simulated: bool = False
    app_password: SecretOption = field(default_factory=SecretOption)
    service: str | None = None
    instance: str | None = None
    access_token: SecretOption = field(default_factory=SecretOption)
    refresh_token: SecretOption = field(default_factory=SecretOption)

    @property
    def real(self) -> bool:
        """A real account of the provider, verified with the network."""
        return self.provider != "sandbox" and not self.simulated

    def given(self) -> list[str]:
        """The provider options given (by their direct name, for either form of a secret)."""
        present = {
            "--app-password": self.app_password.given,
            "--service": self.service is not None,
            "--instance": self.instance is not None,
            "--access-token": self.access_token.given,
            "--refresh-token": self.refresh_token.given,
        }
        return [option for option, given in present.items() if given]


async def connect_from_command_line(
    runtime: Runtime, organization_id: uuid.UUID, request: ConnectRequest
) -> list[uuid.UUID]:
    """Connect the channel (one per account the credentials give access to) and append a
    `cli.channels.connect` audit entry per channel; their ids. ValueError for options the
    person must fix or credentials the provider refused, LookupError for an unknown
    organization."""
    configured = configured_providers(runtime.settings)
    options = _provider_options(request, configured, runtime.settings)
    async with unit_of_work(runtime.sessions) as session:
        await tenant.require_organization(session, organization_id)
    accounts: list[ConnectedAccount] | None = None
    if options is not None:
        # The network is asked outside any transaction; nothing is stored if it says no.
        try:
            accounts = await verification.verify(
                request.provider, options, settings=runtime.settings, http=runtime.provider_http
            )
        except verification.VerificationFailed as exc:
            raise ValueError(str(exc)) from None
        accounts = await with_limits(request.provider, accounts, runtime)
    async with unit_of_work(runtime.sessions) as session:
        if accounts is None:
            made = [
                await service.connect(
                    session,
                    runtime,
                    organization_id=organization_id,
                    provider=request.provider,
                    name=request.name,
                    handle=request.handle,
                    simulated=request.simulated,
                    configured=configured,
                )
            ]
        else:
            made = await service.connect_accounts(
                session,
                runtime,
                organization_id=organization_id,
                provider=request.provider,
                name=request.name,
                accounts=accounts,
                configured=configured,
            )
        ids = [channel.id for channel in made]
        verified: list[ConnectedAccount | None] = [None] if accounts is None else [*accounts]
        for channel, account in zip(made, verified, strict=True):
            changes = _audited_changes(request, channel, account, ids)
            await audit.append_command_line(
                session, organization_id, "cli.channels.connect", "channel", channel.id, changes
            )
        return ids


def _provider_options(
    request: ConnectRequest, configured: Collection[str], settings: Settings
) -> verification.ProviderOptions | None:
    """What to verify a real account with (secrets read from the environment where asked);
    None for the sandbox and simulated channels."""
    provider = request.provider
    if not request.real:
        if request.given():
            raise ValueError(
                "the sandbox and --simulated channels take no credentials; drop the provider "
                "options"
            )
        return None
    if provider not in PROVIDER_IDS:
        raise ValueError(f"unknown provider {provider!r}; one of {', '.join(PROVIDER_IDS)}")
    if provider not in configured:
        raise ValueError(service.not_configured_reason(provider, settings))
    accepted = verification.accepted_options(provider)
    stray = [option for option in request.given() if option not in accepted]
    if stray:
        takes = ", ".join(accepted) or "no credential options"
        raise ValueError(f"{stray[0]} is not an option of {provider} (it takes {takes})")
    return verification.ProviderOptions(
        handle=request.handle,
        app_password=request.app_password.read("--app-password"),
        service=request.service,
        instance=request.instance,
        access_token=request.access_token.read("--access-token"),
        refresh_token=request.refresh_token.read("--refresh-token"),
    )


def _audited_changes(
    request: ConnectRequest,
    channel: Channel,
    account: ConnectedAccount | None,
    ids: Sequence[uuid.UUID],
) -> dict[str, Any]:
    changes: dict[str, Any] = {
        "provider": request.provider,
        "name": channel.name,
        "handle": channel.handle,
        "simulated": request.simulated,
    }
    if len(ids) > 1:
        changes["channelIds"] = [str(channel_id) for channel_id in ids]
    if account is not None:
        # What was verified, never the secrets themselves.
        changes["verified"] = True
        changes["options"] = request.given()
        if request.instance is not None:
            changes["instance"] = account.credentials.get("baseUrl")
        if request.service is not None:
            changes["service"] = request.service
    return changes
