"""One Settings object, read from the environment (prefix PRESSROOM_)."""

from __future__ import annotations

import math
import re
from functools import cached_property
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import ByteSize
from pydantic import Field
from pydantic import SecretStr
from pydantic import field_validator
from pydantic import model_validator
from pydantic_settings import BaseSettings
from pydantic_settings import SettingsConfigDict

from pressroom.kit.crypto import GENERATE_KEY_HINT
from pressroom.kit.crypto import weak_key_reason
from pressroom.kit.outbound.destination import parse_resolve_overrides

_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_rate(value: str) -> tuple[int, int]:
    """`600/60` -> (600 requests, 60 seconds)."""
    match = _RATE.match(value)
    if not match or int(match.group(1)) < 1 or int(match.group(2)) < 1:
        raise ValueError(f"expected REQUESTS/SECONDS such as 600/60, got {value!r}")
    return int(match.group(1)), int(match.group(2))


class Settings(BaseSettings):
    # Inputs stay out of validation errors: they may be keys, secrets or URLs with passwords.
    model_config = SettingsConfigDict(
        env_prefix="PRESSROOM_", extra="ignore", hide_input_in_errors=True
    )

    database_url: str | None = None
    data_dir: Path = Path(".pressroom")
    secret_key: str | None = None
    redis_url: str | None = None
    rate_limit: str = "600/60"
    auth_failure_limit: str = "60/60"
    webhook_timeout_seconds: float = Field(default=10.0, gt=0)
    webhook_retry_schedule: str = "5,60,300,1800,7200,18000,36000"
    webhook_retention_seconds: int = 259200
    webhook_resolve: str | None = None
    webhook_ca_bundle: str | None = None
    media_storage: str | None = None
    # Upload size limits (contract section 7); bytes, or a size such as `20MiB`.
    media_max_image_bytes: ByteSize = Field(default=ByteSize(20 * 2**20), gt=0)
    media_max_gif_bytes: ByteSize = Field(default=ByteSize(15 * 2**20), gt=0)
    media_max_video_bytes: ByteSize = Field(default=ByteSize(2**30), gt=0)
    # PDF documents (an addition): LinkedIn's limit, "100MB" (Documents API).
    media_max_document_bytes: ByteSize = Field(default=ByteSize(100 * 10**6), gt=0)
    media_max_request_bytes: ByteSize = Field(default=ByteSize(2 * 2**30), gt=0)
    # What inspecting one uploaded file may cost (README "Media"): frames x canvas pixels
    # decoded (X's own ceiling for animated GIFs), wall-clock seconds, and how many files one
    # process decodes at once (each may hold ~400 MB while it does).
    media_max_decode_pixels: int = Field(default=300_000_000, ge=1)
    media_decode_timeout_seconds: float = Field(default=30.0, gt=0)
    media_decode_concurrency: int = Field(default=2, ge=1, le=64)
    idempotency_retention_seconds: int = 86400
    log_level: str = "INFO"
    # FastAPI's native OpenTelemetry spans and metrics (off unless asked for).
    telemetry: bool = False
    # Connections per process; API and worker nodes each hold their own pool.
    database_pool_size: int = Field(default=20, ge=1)
    # The sandbox simulator's round trip per call, to make it behave like a network.
    sandbox_latency_ms: float = Field(default=0.0, ge=0)
    # How long a publisher worker owns a claimed target before another may take it over; a
    # live worker renews the leases of its publishes in flight every third of it.
    publisher_lease_seconds: float = Field(default=60.0, gt=0)
    # The longest one publish may take: uploads plus the networks' documented processing waits
    # (Mastodon and X each poll a processing video for up to 300 s), with room for both.
    publisher_publish_timeout_seconds: float = Field(default=900.0, gt=0)
    # Seconds before each retry of a retryable provider error; its length is the number of
    # retries, so a target gets at most len + 1 attempts.
    publisher_retry_schedule: str = "10,60,300,1800"
    # Publishes in flight at once per worker process (each is mostly waiting on the network).
    publisher_concurrency: int = Field(default=32, ge=1, le=1000)
    # Where people's browsers reach this service: OAuth redirect URIs are built on it
    # (`{public_url}/connect/{provider}/callback`), so it must be registered with the providers.
    public_url: str = "http://127.0.0.1:8000"
    # A console session left idle this long is signed out (README "The console").
    console_idle_seconds: int = Field(default=1800, ge=60, le=30 * 86400)
    # The deployment's X app (developer portal, OAuth 2.0 "User authentication settings"): X
    # channels can be connected and their tokens refreshed only when the client id is set. The
    # secret (confidential clients) is never logged or shown.
    x_client_id: str | None = None
    x_client_secret: SecretStr | None = None
    # The deployment's apps at the other OAuth networks (contract section 13), each beside what
    # else that network needs: a provider is configured exactly when both its client id and
    # secret are set. Secrets are never logged or shown.
    linkedin_client_id: str | None = None
    linkedin_client_secret: SecretStr | None = None
    # The LinkedIn-Version (YYYYMM) every LinkedIn REST call names. LinkedIn supports each monthly
    # version for at least a year, then answers 426 NONEXISTENT_VERSION: move this forward then.
    linkedin_version: str = Field(default="202605", pattern=r"^\d{6}(\.\d{2})?$")
    facebook_client_id: str | None = None
    facebook_client_secret: SecretStr | None = None
    instagram_client_id: str | None = None
    instagram_client_secret: SecretStr | None = None
    # The Graph API version Facebook, Instagram and Threads calls name (Meta retires each about
    # two years after its release; a retired one answers every call with an error).
    meta_graph_version: str = "v24.0"
    threads_client_id: str | None = None
    threads_client_secret: SecretStr | None = None
    # TikTok's client key goes in its client id.
    tiktok_client_id: str | None = None
    tiktok_client_secret: SecretStr | None = None
    # TikTok restricts apps that have not passed its Content Posting audit to private
    # (SELF_ONLY) posts; say true once the deployment's app is audited.
    tiktok_audited: bool = False
    # TikTok pulls media from a URL only on domains verified in its developer portal: say true
    # once the domain of PRESSROOM_PUBLIC_URL's media links is verified. Videos are uploaded in
    # chunks otherwise (photo posts always need it).
    tiktok_pull_from_url: bool = False
    youtube_client_id: str | None = None
    youtube_client_secret: SecretStr | None = None
    pinterest_client_id: str | None = None
    pinterest_client_secret: SecretStr | None = None
    # How long a signed public media link (the URL Instagram, Threads and others fetch a post's
    # media from) stays valid.
    media_link_seconds: int = Field(default=6 * 3600, ge=60, le=7 * 86400)
    # Prometheus metrics at /metrics (README "Metrics"): off unless asked for; when the token is
    # set, a scrape must send it as a bearer token. Database counts are read at most once per
    # cache period, whatever the number of scrapers. `pressroom worker` serves its own /metrics
    # on metrics_host:metrics_port (API nodes serve it on their own port).
    metrics: bool = False
    metrics_token: SecretStr | None = None
    metrics_cache_seconds: float = Field(default=10.0, ge=0, le=3600)
    metrics_host: str = "127.0.0.1"
    metrics_port: int = Field(default=9464, ge=1, le=65535)
    # The MCP server (README "MCP"): mounted at /mcp unless turned off; read-only serves no
    # write tool; a write's confirmation token lives this long; media uploads may come from
    # files under these comma-separated directories, and from public URLs only when allowed.
    mcp: bool = True
    mcp_read_only: bool = False
    mcp_confirmation_seconds: int = Field(default=600, ge=10, le=86400)
    mcp_media_dirs: str | None = None
    mcp_media_urls: bool = False

    @field_validator("rate_limit", "auth_failure_limit")
    @classmethod
    def _check_rate(cls, value: str) -> str:
        parse_rate(value)
        return value

    @field_validator("secret_key")
    @classmethod
    def _check_secret_key(cls, value: str | None) -> str | None:
        if not value:
            return None  # set but empty: generated into the data directory
        # Used exactly as given (never stripped): the key of existing encrypted data.
        reason = weak_key_reason(value)
        if reason:
            raise ValueError(
                f"PRESSROOM_SECRET_KEY is too weak: {reason}. Generate one with {GENERATE_KEY_HINT}"
            )
        return value

    @model_validator(mode="after")
    def _postgres_needs_a_shared_key(self) -> Settings:
        # Nodes on different hosts would each generate a key of their own into their data
        # directory, and none could read what the others encrypted.
        if self.secret_key is None and self.effective_database_url.startswith("postgres"):
            raise ValueError(
                "PRESSROOM_SECRET_KEY must be set (the same value on every node) when "
                f"PRESSROOM_DATABASE_URL is PostgreSQL. Generate one with {GENERATE_KEY_HINT}"
            )
        return self

    @field_validator("webhook_retry_schedule", "publisher_retry_schedule")
    @classmethod
    def _check_schedule(cls, value: str) -> str:
        parts = [p.strip() for p in value.split(",") if p.strip()]
        # `inf` and `nan` parse as floats but make no delay: a retry could never be scheduled.
        if any(not math.isfinite(float(p)) or float(p) < 0 for p in parts):
            raise ValueError("retry delays must be non-negative seconds")
        return value

    @field_validator("webhook_resolve")
    @classmethod
    def _check_webhook_resolve(cls, value: str | None) -> str | None:
        # A malformed value stops the process at start-up instead of failing each endpoint
        # creation and delivery.
        parse_resolve_overrides(value)
        return value

    @field_validator("media_storage")
    @classmethod
    def _check_media_storage(cls, value: str | None) -> str | None:
        if value and not value.startswith(("file://", "s3://")):
            raise ValueError("expected file://PATH or s3://BUCKET/PREFIX")
        return value or None  # set but empty: the default

    @field_validator("public_url")
    @classmethod
    def _check_public_url(cls, value: str) -> str:
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("expected an absolute http(s) URL such as https://pressroom.example")
        if parts.query or parts.fragment:
            raise ValueError("the public URL must not have a query string or a fragment")
        return value.strip().rstrip("/")

    @field_validator("x_client_id")
    @classmethod
    def _blank_is_unset(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None

    @field_validator("x_client_secret", "metrics_token")
    @classmethod
    def _blank_secret_is_unset(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None
        return value

    @cached_property
    def rate(self) -> tuple[int, int]:
        return parse_rate(self.rate_limit)

    @cached_property
    def auth_failure_rate(self) -> tuple[int, int]:
        return parse_rate(self.auth_failure_limit)

    @cached_property
    def retry_delays(self) -> tuple[float, ...]:
        return tuple(float(p) for p in self.webhook_retry_schedule.split(",") if p.strip())

    @cached_property
    def publisher_retry_delays(self) -> tuple[float, ...]:
        return tuple(float(p) for p in self.publisher_retry_schedule.split(",") if p.strip())

    @property
    def resolved_data_dir(self) -> Path:
        return self.data_dir.expanduser().resolve()

    @property
    def effective_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.resolved_data_dir / 'pressroom.db'}"

    @property
    def media_storage_url(self) -> str:
        """Where media live: the setting, else the `media` directory of the data dir."""
        return self.media_storage or (self.resolved_data_dir / "media").as_uri()

    @property
    def is_sqlite(self) -> bool:
        return self.effective_database_url.startswith("sqlite")
