"""The live pages: a player's, a juror's (and the open join that makes one), the stage screen, the host's console.

Each page is a client of the Socket.IO protocol like any other (``static/js/client.js``); these views only
check the link and hand the page what it needs to connect.  Nothing is created by opening a link: an open
join makes a juror only when the person presses join (chat apps fetch links to preview them).
"""

from __future__ import annotations

import io
import secrets
from pathlib import Path

import qrcode
import qrcode.image.svg
from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    flash,
    g,
    jsonify,
    redirect,
    render_template,
    request,
    send_from_directory,
    url_for,
)
from flask import session as cookie  # Flask's signed cookie; 'session' means a VTT session
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel import refresh
from flask_limiter.util import get_remote_address
from sqlalchemy import select
from werkzeug.security import safe_join

from ..access.admission import admit, stage_key, stage_key_valid
from ..engine.actions import Actor, Refusal
from ..extensions import request_db
from ..media import phone_rendition
from ..models import Juror, Jury, Player, PlayerKind, VttSession
from ..offloop import off_loop
from ..on_behalf.ai_players import ImportProblem, answer_from_predictions
from ..realtime.hub import current_hub
from .auth import host_required
from .displaced import displaced_page
from .joinurl import join_base_url

bp = Blueprint("live", __name__)


def _session_by_code(code: str) -> VttSession:
    found = request_db().scalar(select(VttSession).where(VttSession.join_code == code.strip().upper()))
    return found or abort(404, description=_("No session has the code %(code)s.", code=code))


@bp.get("/play/<token>")
def player_page(token: str):
    return _person_page(Player, token, "live/play.html", _("This player link is not valid. Ask the host for yours."))


@bp.get("/jury/<token>")
def juror_page(token: str):
    """A live juror's page; a displaced juror's (judging the finished session later) is another page.  An AI
    juror's token opens nothing: a model judges through the server, not a page."""
    juror = request_db().scalar(select(Juror).where(Juror.token == token))
    if juror is not None and juror.jury is Jury.DISPLACED:
        return displaced_page(juror)
    if juror is not None and juror.jury is Jury.AI:
        abort(404, description=_("This juror link is not valid. Ask the host for yours."))
    return _person_page(Juror, token, "live/jury.html", _("This juror link is not valid. Ask the host for yours."))


def _person_page(model: type[Player] | type[Juror], token: str, template: str, invalid: str):
    """A player's or juror's own page: the token is checked here and again by the socket's auth."""
    person = request_db().scalar(select(model).where(model.token == token))
    if person is None:
        abort(404, description=invalid)
    if model is Player:  # the child's page speaks the questions' language (vtt.i18n)
        g.session_language = (person.session.design or {}).get("language")
        refresh()  # the language was chosen before this view knew the session
    return render_template(
        template, auth={"token": token}, key=token, route=person.session.join_code, title=person.session.name
    )


@bp.route("/join/<code>", methods=["GET", "POST"])
def join(code: str):
    vtt_session = _session_by_code(code)
    error = None
    door = (request.form.get("door") or request.args.get("door") or "").strip()[:8]  # the stage's QR carries it
    finished = vtt_session.phase == "finished"  # Phase.FINISHED (a StrEnum)
    if finished:  # nothing to join: say so, without the form (a POST from a page opened earlier too)
        return render_template("live/join.html", s=vtt_session, error=None, finished=True, door=door), (
            409 if request.method == "POST" else 200
        )
    status = 200
    if request.method == "POST":
        nickname = request.form.get("nickname", "").strip()
        if not nickname:
            error = _("Enter a nickname.")
        elif len(nickname) > 30:
            error = _("A nickname has at most 30 characters.")
        else:
            try:
                door_ok = admit(get_remote_address(), vtt_session.id, door)
            except Refusal:
                return (
                    render_template(
                        "live/join.html",
                        s=vtt_session,
                        finished=False,
                        door=door,
                        error=_(
                            "Too many joins right now. Try again in a minute, or enter the door code shown on the "
                            "stage screen."
                        ),
                    ),
                    429,
                    {"Retry-After": "60"},
                )
            reply = current_hub().act(
                vtt_session.id, Actor("guest"), "join", {"nickname": nickname, "door_ok": door_ok}
            )
            if reply.get("ok"):
                return redirect(url_for("live.juror_page", token=reply["token"]))
            code_ = reply["error"].get("code")
            if code_ == "finished":
                return render_template("live/join.html", s=vtt_session, error=None, finished=True, door=door), 409
            error = str(JOIN_REFUSALS[code_]) if code_ in JOIN_REFUSALS else reply["error"]["message"]
        status = 400 if error else 200
    elif not vtt_session.open_join:
        error = str(JOIN_REFUSALS["join_closed"])
    return render_template("live/join.html", s=vtt_session, error=error, finished=False, door=door), status


# The engine's refusals of an open join, as the join page says them.
JOIN_REFUSALS = {
    "join_closed": _l("This session does not take open joins now. Ask the host for a juror link."),
    "door_code": _l("Enter the door code shown on the stage screen (it changes every two minutes)."),
    "join_full": _l("The jury is full. Ask the host if you should join."),
    "bad_text": _l("That nickname cannot be used. Choose another."),
}


@bp.get("/stage/<code>")
def stage(code: str):
    """The stage screen, opened with its key (the host console's stage link) or the host's login.  The join code
    alone opens nothing: it is public in the room, and a finished session's stage names who was the AI."""
    vtt_session = _session_by_code(code)
    key = stage_key(current_app.config["SECRET_KEY"], vtt_session.id)
    if not (cookie.get("host") or stage_key_valid(request.args.get("key", "")[:64], key)):
        abort(403, description=_("The stage screen opens with the stage link from the host's console."))
    return render_template(
        "live/stage.html",
        s=vtt_session,
        join_url=f"{join_base_url()}/join/{vtt_session.join_code}",
        auth={"code": vtt_session.join_code, "role": "stage", "key": key},
    )


@bp.get("/stage/<code>/join-qr.svg")
def join_qr(code: str):
    """The open join link as a QR code (SVG), for the stage screen's lobby; ``?door=NNNN`` puts the door code in
    it (the stage asks for the current one), so a phone that scans it joins without typing."""
    vtt_session = _session_by_code(code)
    door = request.args.get("door", "")
    link = f"{join_base_url()}/join/{vtt_session.join_code}" + (
        f"?door={door}" if door.isdigit() and len(door) == 4 else ""
    )
    image = qrcode.make(link, image_factory=qrcode.image.svg.SvgPathImage, box_size=12, border=2)
    buffer = io.BytesIO()
    image.save(buffer)
    return Response(buffer.getvalue(), mimetype="image/svg+xml")


@bp.get("/host/sessions/<int:session_id>/live")
@host_required
def host_console(session_id: int):
    vtt_session = request_db().get(VttSession, session_id) or abort(404)
    # the stage's own link (its key is the credential: the join code alone opens no stage), as the join cards print it
    stage_path = url_for(
        "live.stage", code=vtt_session.join_code, key=stage_key(current_app.config["SECRET_KEY"], vtt_session.id)
    )
    return render_template(
        "live/host.html",
        s=vtt_session,
        agent_commands=ai_player_commands(vtt_session),
        auth={"code": vtt_session.join_code, "role": "host"},
        stage_url=stage_path,
        stage_link=join_base_url() + stage_path,
        import_url=url_for("live.agent_answer_import", session_id=session_id, player_id=0),
        clips_url=url_for("live.clip_status", session_id=session_id),
    )


def ai_player_commands(vtt_session: VttSession) -> dict[str, dict[str, object]]:
    """For each AI player (by id): the ``vtt agent`` line that plays it against this server, and whether it runs as
    it is (the demo's AI replays the answers the demo ships) or needs the host's own backend."""
    from ..sessions.demo import demo_ai_answers
    from ..sessions.links import console_agent_command

    predictions = demo_ai_answers(vtt_session.bank.name if vtt_session.bank else None)
    return {
        str(player.id): {
            "command": console_agent_command(request.host_url, player.token, predictions, vtt_session.join_code),
            "ready": bool(predictions),
        }
        for player in vtt_session.players
        if player.kind is PlayerKind.AI
    }


@bp.get("/host/sessions/<int:session_id>/clips")
@host_required
def clip_status(session_id: int):
    """Every question's clip checked as `vtt media check` does (found, decodes, long enough, plays in browsers),
    in the session's order, for the console's preflight; the probing runs beside the event loop."""
    from ..media.check import check_clips
    from ..media.preflight import session_refs

    vtt_session = request_db().get(VttSession, session_id) or abort(404)
    placed = session_refs(request_db(), vtt_session.id)
    verdicts = off_loop(check_clips, Path(current_app.config["MEDIA_DIR"]), [ref for _where, ref in placed])
    return jsonify(
        {
            "clips": [
                {"question": where.id, "round": where.round, "position": where.position, **verdict.as_dict()}
                for (where, _ref), verdict in zip(placed, verdicts)
            ]
        }
    )


# Why a predictions file gave no answer, in the host's language (``vtt.on_behalf.ai_players.ImportProblem`` codes).
IMPORT_PROBLEMS = {
    "not_ai": _l("%(player)s is not an AI player: only an AI player's answer can be entered."),
    "wrong_phase": _l(
        "No question is open for answers now: an AI player's answer can be entered while answering "
        "is open or closed, before the reveal."
    ),
    "bad_suffix": _l("%(file)s is not a predictions file: use CSV, JSON or JSONL (as vtt analyze reads them)."),
    "unreadable": _l("%(file)s could not be read: %(detail)s"),
    "qid_missing": _l("The question %(qid)s is not in %(file)s (%(count)s predictions read)."),
    "qid_twice": _l("%(file)s has different predictions for the question %(qid)s: %(answers)s."),
    "empty": _l("%(file)s predicts nothing for the question %(qid)s (the prediction is empty)."),
    "no_option": _l(
        "The prediction %(prediction)r names none of the %(options)s options of the question %(qid)s "
        "(give the option's text, letter or 0-based index)."
    ),
    "refused": _l("Not saved: %(message)s"),
}


@bp.post("/host/sessions/<int:session_id>/agents/<int:player_id>/answer")
@host_required
def agent_answer_import(session_id: int, player_id: int):
    """The current question's answer of an AI player, from an uploaded predictions file (``file``), through the
    live engine as the host's ``enter_answer``.  JSON for the console's script; else a message and back."""
    vtt_session = request_db().get(VttSession, session_id) or abort(404)
    player = request_db().get(Player, player_id)
    if player is None or player.session_id != vtt_session.id:
        abort(404, description=_("This session has no player %(player)s.", player=player_id))
    upload = request.files.get("file")
    if upload is None or not upload.filename:
        ok, status, message = False, 400, _("Choose a predictions file (CSV, JSON or JSONL).")
    else:
        try:
            done = answer_from_predictions(
                current_hub(),
                request_db(),
                vtt_session,
                player,
                upload.filename,
                upload.read(),
                request.form.get("entry") or secrets.token_hex(8),
            )
        except ImportProblem as problem:
            ok, status = False, 409 if problem.code in ("refused", "wrong_phase") else 422
            message = IMPORT_PROBLEMS[problem.code] % problem.values
        else:
            ok, status = True, 200
            message = _(
                "Saved %(player)s's answer to %(qid)s from the file: %(answer)s",
                player=done.player,
                qid=done.qid,
                answer=done.answer,
            )
    if request.accept_mimetypes.best_match(["application/json", "text/html"]) == "application/json":
        return jsonify({"ok": ok, "message": message}), status
    flash(message, "success" if ok else "error")
    return redirect(url_for("live.host_console", session_id=session_id))


# Named here, not guessed from the machine's /etc/mime.types (a server without it sends .webm as a download).
MEDIA_TYPES = {
    ".mp4": "video/mp4",
    ".m4v": "video/mp4",
    ".webm": "video/webm",
    ".m4a": "audio/mp4",
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".png": "image/png",
    ".vtt": "text/vtt",
}
# An hour, about a session: replays and a juror reopening a clip come from the browser's cache.  Not longer, as a
# clip rebuilt under the same name (vtt media prepare) reaches the browsers once this expires; after that the
# ETag makes each check of an unchanged clip a 304.
MEDIA_MAX_AGE = 3600


@bp.get("/media/<path:name>")
def media(name: str):
    """A clip from the media folder (VTT_MEDIA_DIR), with byte ranges (iOS plays nothing without them; the
    players seek to a span), ETag and Last-Modified, an hour's caching and its MIME type.  ``?rendition=phone``
    serves the clip's light rendition when there is one.  Nothing outside the folder is served."""
    folder = Path(current_app.config["MEDIA_DIR"]).resolve()
    if request.args.get("rendition") == "phone":
        phone = phone_rendition(name)
        if _inside(folder, phone) and (folder / phone).is_file():
            name = phone
    if not _inside(folder, name):
        abort(404)
    mimetype = MEDIA_TYPES.get(Path(name).suffix.lower(), "application/octet-stream")
    return send_from_directory(folder, name, conditional=True, max_age=MEDIA_MAX_AGE, mimetype=mimetype)


def _inside(folder: Path, name: str) -> bool:
    """Whether ``name`` is a file path inside ``folder`` (symbolic links followed: one pointing out is refused)."""
    joined = safe_join(str(folder), name) if "\x00" not in name else None
    return joined is not None and Path(joined).resolve().is_relative_to(folder)
