"""Secrets at rest: the server key, encryption of stored secrets, and key digests."""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import os
import secrets
from collections import Counter
from pathlib import Path

from cryptography.fernet import Fernet
from cryptography.fernet import InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

_KEY_FILE = "secret.key"
# What a server key must carry (README "Configuration"): a key of `secrets.token_urlsafe(32)`
# (43 characters, 256 random bits) estimates at about 210 bits and passes; so does
# `openssl rand -base64 32`.
MIN_KEY_LENGTH = 32
MIN_KEY_BITS = 128
GENERATE_KEY_HINT = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"


def weak_key_reason(key: str) -> str | None:
    """Why a configured server key is too weak to protect secrets at rest, or None.

    The entropy is estimated from the key's own character frequencies (length times the
    Shannon entropy per character): a generous upper bound that still catches short keys,
    keys of few distinct characters (`"x" * 40`) and repeated patterns."""
    if len(key) < MIN_KEY_LENGTH:
        return f"it has {len(key)} characters; at least {MIN_KEY_LENGTH} are needed"
    for period in range(1, len(key) // 2 + 1):
        if len(key) % period == 0 and key == key[:period] * (len(key) // period):
            return "it repeats a shorter pattern"
    counts = Counter(key)
    bits = -sum(n * math.log2(n / len(key)) for n in counts.values())
    if bits < MIN_KEY_BITS:
        return (
            f"its characters vary too little (about {int(bits)} bits; at least "
            f"{MIN_KEY_BITS} are needed)"
        )
    return None


def server_key_file(data_dir: Path) -> Path:
    """Where the key generated when none is configured lives."""
    return data_dir / _KEY_FILE


def load_or_create_server_key(configured: str | None, data_dir: Path) -> str:
    """The configured key, else one generated once into the data directory (mode 0600)."""
    if configured:
        return configured
    path = server_key_file(data_dir)
    if path.exists():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(48)
    # O_EXCL: two processes starting at once must not both write a key.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
    return key


class SecretBox:
    """Authenticated encryption of secrets at rest, keyed from the server key.

    Separate subkeys are derived for encryption, for signing cursors and for each other use
    of `sign`, so no use can be turned against another."""

    def __init__(self, server_key: str) -> None:
        material = server_key.encode()
        self._fernet = Fernet(base64.urlsafe_b64encode(self._derive(material, b"encrypt")))
        self._mac_key = self._derive(material, b"mac")
        self._signing_root = self._derive(material, b"sign")
        self._signing_keys: dict[str, bytes] = {}
        self._check_key = self._derive(material, b"key-check")

    @staticmethod
    def _derive(material: bytes, purpose: bytes) -> bytes:
        return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"pressroom", info=purpose).derive(
            material
        )

    def encrypt(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode()).decode()

    def decrypt(self, token: str) -> str:
        try:
            return self._fernet.decrypt(token.encode()).decode()
        except InvalidToken as exc:
            # Never include the token: it is the ciphertext of a secret.
            raise ValueError("stored secret could not be decrypted with the server key") from exc

    def mac(self, data: bytes) -> bytes:
        return hmac.new(self._mac_key, data, hashlib.sha256).digest()

    def sign(self, purpose: str, data: bytes) -> bytes:
        """HMAC-SHA256 of `data` under a key derived for `purpose` alone: a signature made
        for one purpose (media links) is worth nothing for another, or as a cursor's."""
        key = self._signing_keys.get(purpose)
        if key is None:
            key = self._derive(self._signing_root, purpose.encode())
            self._signing_keys[purpose] = key
        return hmac.new(key, data, hashlib.sha256).digest()

    def key_check_value(self) -> str:
        """A value only this server key produces, to store beside the data it encrypts: a node
        started with another key tells by comparing it. An HMAC of a constant under a subkey
        of its own, so it reveals nothing of the key nor of the other subkeys."""
        return hmac.new(self._check_key, b"pressroom server key check", hashlib.sha256).hexdigest()


def digest_api_key(key: str) -> str:
    """Keys carry 256 random bits, so a plain SHA-256 is a safe, fast lookup digest."""
    return hashlib.sha256(key.encode()).hexdigest()
