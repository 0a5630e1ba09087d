"""Settings from the environment, with defaults that are safe on a laptop.

Secrets that are not given are generated once and kept under the instance folder, so a restart
(or a second worker on the same machine) sees the same values.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INSTANCE = PROJECT_ROOT / "instance"


def _kept_secret(path: Path, make) -> str:
    """Read a secret from ``path``; on first use create it (owner-only permissions).

    The file appears whole or not at all (written aside, then linked into place), so processes
    starting together on a new instance folder all end up with the same, non-empty value.
    """
    existing = path.read_text(encoding="utf-8").strip() if path.exists() else ""
    if existing:
        return existing
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, staged = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(make() + "\n")
        os.chmod(staged, 0o600)
        try:
            os.link(staged, path)  # fails if another process got there first: theirs wins
        except FileExistsError:
            if not path.read_text(encoding="utf-8").strip():  # an empty file left by hand
                os.replace(staged, path)
    finally:
        if os.path.exists(staged):
            os.unlink(staged)
    return path.read_text(encoding="utf-8").strip()


def _transcriber(value: str | None) -> str | None:
    """VTT_TRANSCRIBE: unset is pocketsphinx (offline, English); ``off`` (or ``none``) is no backend: the host types."""
    value = (value or "").strip()
    if value.lower() in ("off", "none"):
        return None
    return value or "pocketsphinx"


def _proxy_count(value: str | None) -> int:
    """VTT_TRUSTED_PROXIES: a whole number of proxies, 0 or more (empty: 0)."""
    text = (value or "").strip()
    if not text:
        return 0
    if not text.isdigit():
        raise ValueError(
            f"VTT_TRUSTED_PROXIES must be the number of reverse proxies in front (0, 1, 2 ...), not {value!r}"
        )
    return int(text)


def _cap(env, name: str, default: int) -> int:
    """A cap from the environment: a whole number, at least 1 (empty: the default)."""
    text = (env.get(name) or "").strip()
    if not text:
        return default
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{name} must be a whole number of at least 1, not {text!r}")
    return int(text)


@dataclass(frozen=True)
class Settings:
    instance_path: Path
    database_url: str
    redis_url: str | None
    secret_key: str
    host_password: str
    host_password_source: str  # where the host finds it again: the file, or the variable
    base_url: str | None  # what players' and jurors' links start with (VTT_BASE_URL); None: derived from the server
    audit_log: str | None  # VTT_AUDIT_LOG: every message sent to clients, one JSON line each
    media_dir: Path  # VTT_MEDIA_DIR: where local clips are served from (/media/<path>); default instance/media
    # VTT_TRUSTED_PROXIES: how many reverse proxies (nginx ...) stand in front; only then are their X-Forwarded-For/
    # -Proto/-Host believed (vtt.access.web_guard).  0, the default: served directly, the headers are ignored.
    trusted_proxies: int = 0
    # VTT_JUDGE_URL and VTT_JUDGE_MODEL: the grading page's judge (docs/grading.md); its key stays in the environment
    judge_url: str | None = None
    judge_model: str | None = None
    # VTT_RECORDINGS_DIR: where spoken answers' recordings are kept (default instance/recordings); VTT_TRANSCRIBE:
    # the transcription backend the console asks for a suggestion (pocketsphinx, the default, or http:URL; off: none)
    recordings_dir: Path | None = None
    transcribe: str | None = "pocketsphinx"
    # VTT_MAX_TAKES_PER_PLAYER and VTT_MAX_TAKES_PER_SESSION: how many recordings a spoken player, and a whole
    # session, may send (a page stuck re-recording must not fill the disk); a take past either is refused
    max_takes_per_player: int = 60
    max_takes_per_session: int = 600
    # VTT_MAX_TAKE_MB_PER_PLAYER and VTT_MAX_TAKE_MB_PER_SESSION: how many megabytes of recordings they may send (a
    # leaked player link costs the disk at most this much); an upload that would pass either is refused
    max_take_mb_per_player: int = 64
    max_take_mb_per_session: int = 1024
    # VTT_JOBS: how many background jobs (exports, reports, model runs) run at once on this machine (vtt.jobs);
    # VTT_DOWNLOAD_KEEP_SECONDS: how long a file built for a download waits for it before the server removes it
    jobs: int = 2
    download_keep_seconds: int = 600

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        instance = Path(env.get("VTT_INSTANCE_PATH") or DEFAULT_INSTANCE)
        instance.mkdir(parents=True, exist_ok=True)
        database_url = env.get("DATABASE_URL") or f"sqlite:///{instance / 'vtt.db'}"
        # Heroku-style URLs name the driver "postgres"; SQLAlchemy wants an explicit psycopg 3.
        if database_url.startswith(("postgres://", "postgresql://")):
            database_url = "postgresql+psycopg://" + database_url.split("://", 1)[1]
        password = env.get("VTT_HOST_PASSWORD")
        return cls(
            instance_path=instance,
            database_url=database_url,
            redis_url=env.get("REDIS_URL") or None,
            secret_key=env.get("SECRET_KEY") or _kept_secret(instance / "secret_key", lambda: secrets.token_hex(32)),
            host_password=password or _kept_secret(instance / "host_password", lambda: secrets.token_urlsafe(9)),
            host_password_source="VTT_HOST_PASSWORD" if password else str(instance / "host_password"),
            base_url=(env.get("VTT_BASE_URL") or "").rstrip("/") or None,
            audit_log=env.get("VTT_AUDIT_LOG") or None,
            media_dir=Path(env.get("VTT_MEDIA_DIR") or instance / "media"),
            trusted_proxies=_proxy_count(env.get("VTT_TRUSTED_PROXIES")),
            judge_url=env.get("VTT_JUDGE_URL") or None,
            judge_model=env.get("VTT_JUDGE_MODEL") or None,
            recordings_dir=Path(env.get("VTT_RECORDINGS_DIR") or instance / "recordings"),
            transcribe=_transcriber(env.get("VTT_TRANSCRIBE")),
            max_takes_per_player=_cap(env, "VTT_MAX_TAKES_PER_PLAYER", cls.max_takes_per_player),
            max_takes_per_session=_cap(env, "VTT_MAX_TAKES_PER_SESSION", cls.max_takes_per_session),
            max_take_mb_per_player=_cap(env, "VTT_MAX_TAKE_MB_PER_PLAYER", cls.max_take_mb_per_player),
            max_take_mb_per_session=_cap(env, "VTT_MAX_TAKE_MB_PER_SESSION", cls.max_take_mb_per_session),
            jobs=_cap(env, "VTT_JOBS", cls.jobs),
            download_keep_seconds=_cap(env, "VTT_DOWNLOAD_KEEP_SECONDS", cls.download_keep_seconds),
        )

    def flask_config(self) -> dict:
        return {
            "SECRET_KEY": self.secret_key,
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "HOST_PASSWORD": self.host_password,
            "INSTANCE_PATH": str(self.instance_path),
            "BASE_URL": self.base_url,
            "AUDIT_LOG": self.audit_log,
            "MEDIA_DIR": str(self.media_dir),
            "TRUSTED_PROXIES": self.trusted_proxies,
            "JUDGE_URL": self.judge_url,
            "JUDGE_MODEL": self.judge_model,
            "RECORDINGS_DIR": str(self.recordings_dir or self.instance_path / "recordings"),
            "TRANSCRIBE": self.transcribe,
            "MAX_TAKES_PER_PLAYER": self.max_takes_per_player,
            "MAX_TAKES_PER_SESSION": self.max_takes_per_session,
            "MAX_TAKE_BYTES_PER_PLAYER": self.max_take_mb_per_player * 1024 * 1024,
            "MAX_TAKE_BYTES_PER_SESSION": self.max_take_mb_per_session * 1024 * 1024,
            # exports and report files the results page's workers build, streamed, then gone (vtt.offloop)
            "EXPORTS_DIR": str(self.instance_path / "exports"),
            "JOBS": self.jobs,
            "DOWNLOAD_KEEP_SECONDS": self.download_keep_seconds,
            # Not readable by scripts, not sent on other sites' subrequests; Secure is added per request when it came
            # over HTTPS (vtt.access.web_guard), so the same install still works over plain HTTP on a venue's LAN.
            "SESSION_COOKIE_HTTPONLY": True,
            "SESSION_COOKIE_SAMESITE": "Lax",
            "MAX_CONTENT_LENGTH": 64 * 1024 * 1024,
            # Host login and open juror joins are rate-limited per address; processes share counts through Redis.
            "RATELIMIT_STORAGE_URI": self.redis_url or "memory://",
            # No X-RateLimit-Remaining on every answer (a guesser need not be told how many tries are left): a refusal
            # says when to try again itself, in its page and its Retry-After (vtt.views.errors).
            "RATELIMIT_HEADERS_ENABLED": False,
            "WTF_CSRF_TIME_LIMIT": None,  # a console left open all evening still submits (the token is per session)
        }
