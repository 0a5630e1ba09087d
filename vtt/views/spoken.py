"""Spoken answers over HTTP: a player's page uploads a recording; the host's console plays it, asks for a
transcript suggestion, and the session page deletes a session's recordings (consent).

The upload is an action like any other, sent as a file: it is acknowledged only once the file is on disk and the
engine has committed its ``recorded`` action, and a resent upload (same action id) is acknowledged again and
stored once: an id already committed writes nothing at all, and sends of one id racing each other end with one
file and one row.  A player's and a session's takes and bytes are capped (VTT_MAX_TAKES_PER_PLAYER, _PER_SESSION,
VTT_MAX_TAKE_MB_PER_PLAYER, _PER_SESSION): an upload reserves its place before its first byte is written
(vtt.recordings.caps), so uploads arriving together never pass a cap.
Recordings are served to the host only: no juror or stage page ever gets their address.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from flask import Blueprint, abort, current_app, flash, jsonify, redirect, request, send_from_directory, url_for
from flask_babel import get_locale
from flask_babel import gettext as _
from sqlalchemy import select

from ..engine.actions import Actor
from ..extensions import csrf, request_db
from ..jobs.model import ACTIVE, DONE
from ..jobs.store import cancel as cancel_job
from ..models import Player, VttSession
from ..offloop import off_loop, off_loop_waiting
from ..persistence.queries import seen_client_keys
from ..protocol.replies import error_message, result_message
from ..protocol.vocabulary import MAX_RECORDING_BYTES, MAX_RECORDING_SECONDS, MAX_SQL_INTEGER
from ..realtime.hub import current_hub
from ..recordings import RecordingProblem, delete_all, discard, file_name, kept, media_type, store
from ..recordings.caps import WRITE_SECONDS, Caps, release, reserve
from .auth import host_required
from .jobs import start_and_wait

bp = Blueprint("spoken", __name__)

TRANSCRIBE_SECONDS = 120  # a job that takes longer is cancelled: the host types the transcript instead


def _folder() -> Path:
    return Path(current_app.config["RECORDINGS_DIR"])


def _refusal(code: str, message: str, status: int):
    return jsonify(error_message(code, message)), status


# A problem's HTTP status (422 otherwise): too large, too slow, or refused by the session's state or its caps
CAPPED = ("too_many_takes", "too_many_session_takes", "too_much_audio", "too_much_session_audio")
PROBLEM_STATUS = {"too_large": 413, "timeout": 408, "answering_closed": 409, **dict.fromkeys(CAPPED, 409)}


def _whole_field(name: str, high: int) -> int | None:
    value = request.form.get(name)
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except ValueError:
        raise RecordingProblem("bad_field", f"{name} must be a whole number") from None
    if not 0 <= number <= high:
        raise RecordingProblem("bad_field", f"{name} must be between 0 and {high}")
    return number


@bp.post("/play/<token>/recording")
@csrf.exempt  # the player's link is the credential, not a cookie: nothing for another site to ride on
def upload(token: str):
    """A spoken answer's recording: multipart ``audio`` (the file) with ``id`` (the action's id), ``question`` and
    optionally ``duration_ms`` and ``ended_ms_ago`` (how long before this send the recording stopped, by the
    page's clock: a resend after a dropped connection still dates the take right)."""
    received = datetime.now(UTC)
    db = request_db()
    player = db.scalar(select(Player).where(Player.token == token))
    if player is None:
        return _refusal("bad_token", "this link is not valid (no player has that token)", 404)
    if (request.content_length or 0) > MAX_RECORDING_BYTES + 64 * 1024:
        return _refusal("too_large", f"a recording may be at most {MAX_RECORDING_BYTES // (1024 * 1024)} MB", 413)
    audio = request.files.get("audio")
    folder, database_url = _folder(), current_app.config["DATABASE_URL"]
    session_id, actor = player.session_id, Actor("player", player.id)  # kept: the rollback below expires rows
    try:
        if audio is None:
            raise RecordingProblem("bad_field", "send the recording as the multipart field audio")
        question = _whole_field("question", MAX_SQL_INTEGER)
        if question is None:
            raise RecordingProblem("bad_field", "question is missing (the question's id)")
        mime = media_type(audio.mimetype or audio.content_type)
        action_id = request.form.get("id") or ""
        name = file_name(session_id, question, actor.id, action_id, mime)
        duration = _whole_field("duration_ms", MAX_RECORDING_SECONDS * 1000)
        ago = _whole_field("ended_ms_ago", 7 * 24 * 3600 * 1000) or 0
        if seen_client_keys(db, session_id, [(actor.label, action_id)]):
            # a take the engine has: acknowledged again (the engine answers a duplicate), and nothing written
            known = {"question": question, "file": name}
            return jsonify(current_hub().act(session_id, actor, "recorded", known, action_id))
        db.rollback()  # end this read: what follows must see the rows that racing sends of this take commit
        # its place under the caps, before a byte is written: its length (the multipart's, a little more than the
        # file's), or a whole take's when the page did not say
        size = min(request.content_length or MAX_RECORDING_BYTES, MAX_RECORDING_BYTES)
        caps = Caps.from_config(current_app.config)
        reservation = off_loop_waiting(reserve, database_url, session_id, actor.id, action_id, size, caps)
    except RecordingProblem as problem:
        return _refusal(problem.code, problem.message, PROBLEM_STATUS.get(problem.code, 422))
    try:
        chunks = iter(lambda: audio.stream.read(64 * 1024), b"")
        stored = off_loop(store, folder, name, chunks, size, time.monotonic() + WRITE_SECONDS)
        args = {
            "question": question,
            "file": name,
            "mime": mime,
            "size": stored.size,
            "duration_ms": duration,
            "ended_at": (received - timedelta(milliseconds=ago)).isoformat(),
        }
        reply = current_hub().act(session_id, actor, "recorded", args, action_id)
        if stored.created and (not reply.get("ok") or reply.get("duplicate")):
            # refused (answering closed...), or a racing send of this take was committed first: the file this send
            # put in place goes, unless that send's row names it (it found this file there and acted on it)
            db.rollback()
            if kept(db, session_id, name) is None:
                discard(folder, name)
    except RecordingProblem as problem:
        return _refusal(problem.code, problem.message, PROBLEM_STATUS.get(problem.code, 422))
    finally:
        off_loop_waiting(release, database_url, reservation)  # the take's row counts now, or nothing of it was kept
    if not reply.get("ok"):
        return jsonify(reply), 409
    return jsonify(reply)


def _session(session_id: int) -> VttSession:
    return request_db().get(VttSession, session_id) or abort(404)


@bp.get("/host/sessions/<int:session_id>/recordings/<name>")
@host_required
def play(session_id: int, name: str):
    """A recording for the host's console (byte ranges: browsers seek in audio too)."""
    take = kept(request_db(), _session(session_id).id, name)
    if take is None or not (_folder() / take.file).is_file():
        abort(404)
    response = send_from_directory(_folder(), take.file, conditional=True, mimetype=take.mime, max_age=0)
    response.headers["Cache-Control"] = "private, no-store"  # a child's voice stays off shared caches
    return response


@bp.post("/host/sessions/<int:session_id>/recordings/<name>/transcribe")
@host_required
def transcribe(session_id: int, name: str):
    """A transcript suggestion from the configured backend (VTT_TRANSCRIBE), made by a worker process, with how sure
    the backend was; kept with the take through the engine (``transcribed``: every host console gets the take's
    ``recording`` event) and returned for the console's box.  The host confirms or corrects it: it is never an
    answer by itself.  What the worker says is checked like any message: anything but a text, a confidence from 0 to
    1 (or none), a backend's name and a level (vtt.transcribe.levels) is no suggestion."""
    db = request_db()
    vtt_session = _session(session_id)
    take = kept(db, vtt_session.id, name)
    if take is None:
        abort(404)
    # the questions' language (the design's), else the language of the host's page
    language = (vtt_session.design or {}).get("language") or str(get_locale() or "en")
    spec = current_app.config.get("TRANSCRIBE")
    if not spec:
        message = _("No transcription backend is set (VTT_TRANSCRIBE): type what you hear.")
        return jsonify({"ok": False, "message": message}), 409
    job = start_and_wait(
        "transcribe",
        [str(_folder() / take.file), spec, language],
        vtt_session.id,
        wait=TRANSCRIBE_SECONDS,
        limit=TRANSCRIBE_SECONDS,
    )
    if job.state in ACTIVE:  # past its time: stopped, the host types the transcript instead
        cancel_job(request_db(), job.id)
    said = job.output if job.state == DONE and isinstance(job.output, dict) else {"error": job.error}
    if not isinstance(said, dict) or "text" not in said:
        error = said.get("error") if isinstance(said, dict) else None
        reason = error if isinstance(error, str) else _("the transcription worker gave no answer")
        return jsonify({"ok": False, "message": _("No suggestion: %(reason)s", reason=reason)}), 502
    args = {
        "question": take.session_question_id,
        "player": take.player_id,
        "file": take.file,
        "text": said.get("text"),
        "confidence": said.get("confidence"),
        "backend": said.get("backend"),
        "level": said.get("level"),
    }
    db.rollback()  # the view's read ends here: the writer makes the change
    reply = current_hub().act(vtt_session.id, Actor("system"), "transcribed", args)
    if not reply.get("ok"):
        reason = reply["error"]["message"]
        return jsonify({"ok": False, "message": _("No suggestion: %(reason)s", reason=reason)}), 409
    heard = {key: args[key] for key in ("text", "confidence", "backend", "level")}
    return jsonify(result_message(**heard, seconds=said.get("seconds")))


@bp.post("/host/sessions/<int:session_id>/recordings/delete")
@host_required
def delete(session_id: int):
    """Delete every recording of the session (a family withdrew consent, or the study's data plan says so)."""
    db = request_db()
    vtt_session = _session(session_id)
    if request.form.get("sure") != "yes":
        flash(_("Tick the box to confirm: deleting recordings cannot be undone."), "error")
        return redirect(url_for("host.session_config", session_id=session_id) + "#recordings")
    try:
        count = delete_all(db, _folder(), vtt_session, "host", Path(current_app.config["EXPORTS_DIR"]))
    except RecordingProblem:
        flash(_("The session is running: finish it first, then delete its recordings."), "error")
    else:
        db.commit()
        flash(_("Deleted %(count)s recordings of this session.", count=count), "success")
    return redirect(url_for("host.session_config", session_id=session_id) + "#recordings")
