"""The host's API token: host control for scripts (``vtt simulate --drive``, a client of one's own) without the
login form.

It is derived from the installation's ``SECRET_KEY`` and host password, so every process of one installation
accepts the same token, nothing is stored, and changing the host password (or the secret key) revokes it.
``vtt host-token`` prints it; a Socket.IO connection gives it as ``auth.host_token`` with ``code`` and
``role: "host"``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac


def host_token(secret_key: str, host_password: str) -> str:
    digest = hmac.new(secret_key.encode(), b"vtt host token\0" + host_password.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:24]).decode()


def is_host_token(given: str | None, secret_key: str, host_password: str) -> bool:
    return bool(given) and hmac.compare_digest(given.encode(), host_token(secret_key, host_password).encode())
