"""Spoken answers: a spoken player's recording is uploaded (acknowledged once on disk and committed, stored once
however often it is resent), heard by the host, transcribed as a suggestion, confirmed into an answer with its
provenance and the recording's end as its time; the jury and the stage never get the recording (the browser side
is tests/test_spoken_browser.py)."""

from __future__ import annotations

import io
import json
from datetime import datetime, timedelta

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from tests.audio_helpers import PHRASE, decoded, encode, said_wav, tone
from tests.engine_helpers import AI, H1, H2, HOST, T0, Run, assert_blind, make_state
from tests.live_helpers import client_id, connect_all, identity_leaks, make_session
from vtt.cli.main import main as cli
from vtt.engine import audiences
from vtt.engine.rules import Actor
from vtt.engine.state import SaveAnswer, SaveRecording
from vtt.models import Answer, Event, Recording, SessionQuestion, VttSession
from vtt.results.session_data import export_tables

CHILD = {"name": "Mina", "kind": "human", "age": 4, "stage": "pre-operational", "answer_modes": ["spoken"]}
PLAYERS = [CHILD, {"name": "Grace", "kind": "human", "age": 31}, {"name": "Agent", "kind": "ai"}]
FILE = "1-{q}-9001-take-1.webm"


# --- the engine ---------------------------------------------------------------------------------------------------


def recorded(run: Run, question: int, *, key: str = "take-1", ended: float = 0.5, player: int = H1, **extra):
    args = {
        "question": question,
        "file": f"1-{question}-{player}-{key}.webm",
        "mime": "audio/webm",
        "size": 1234,
        "duration_ms": 2100,
        "ended_at": (run.now - timedelta(seconds=ended)).isoformat(),
        **extra,
    }
    return run.do(Actor("player", player), "recorded", key=key, advance=1, **args)


def test_a_recording_is_kept_for_the_host_and_a_confirmed_transcript_is_the_answer():
    run = Run(make_state())
    state = run.state
    state.players[H1].answer_modes = ["spoken"]
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.do(HOST, "show_question")
    item = state.current_question
    shown = item.shown_at
    spoken = Actor("player", H1)
    args = {"question": item.id, "file": FILE.format(q=item.id), "mime": "audio/webm", "size": 10}
    at = {"ended_at": T0.isoformat()}
    run.refuse(spoken, "recorded", "answering_closed", **args, **at)
    run.do(HOST, "open_answering")
    run.refuse(Actor("player", H2), "recorded", "not_spoken", **{**args, "file": f"1-{item.id}-{H2}-x.webm"}, **at)
    run.refuse(spoken, "recorded", "wrong_question", **{**args, "question": item.id + 1}, **at)
    run.refuse(spoken, "recorded", "bad_field", **{**args, "file": "../../etc/passwd"}, **at)
    run.refuse(spoken, "recorded", "bad_field", **{**args, "mime": "text/plain"}, **at)
    run.refuse(spoken, "recorded", "bad_field", **{**args, "size": 0}, **at)
    run.refuse(spoken, "recorded", "bad_field", **args, ended_at="yesterday")
    run.refuse(HOST, "recorded", "not_allowed", **args, **at)

    outcome = recorded(run, item.id, ended=0.4)[-1]
    assert [(m.audience, m.event) for m in outcome.messages] == [("host", "recording")]
    take = outcome.messages[0].payload
    assert take["player"] == H1 and take["file"] == f"1-{item.id}-{H1}-take-1.webm"
    assert (take["mime"], take["size"], take["duration_ms"]) == ("audio/webm", 1234, 2100)
    assert outcome.reply == {"question": item.id, "file": take["file"], "state_version": state.state_version}
    assert [type(e) for e in outcome.effects if not type(e).__name__ == "LogEvent"] == [SaveRecording]
    assert audiences.host_snapshot(state, [])["recordings"][str(item.id)] == [take]
    assert audiences.player_snapshot(state, H1)["recorded"] == {"question": item.id, "ended_at": take["ended_at"]}
    assert audiences.player_snapshot(state, H2)["recorded"] is None
    assert item.id not in state.answers  # a recording is not an answer

    # a second take replaces the first for the host; confirming the first is refused as stale
    first = take["file"]
    again = recorded(run, item.id, key="take-2", ended=0.2)[-1].messages[0].payload
    confirm = {"question": item.id, "player": H1, "choice": 2}
    run.refuse(HOST, "confirm_spoken", "stale_recording", **confirm, file=first)
    run.refuse(HOST, "confirm_spoken", "no_recording", **{**confirm, "player": H2}, file=again["file"])
    run.refuse(HOST, "confirm_spoken", "bad_field", **{**confirm, "choice": 9}, file=again["file"])
    run.refuse(HOST, "confirm_spoken", "bad_field", **confirm, file=again["file"], transcribed_by="x" * 201)
    run.refuse(spoken, "confirm_spoken", "not_allowed", **confirm, file=again["file"])
    run.do(HOST, "close_answering")
    run.refuse(spoken, "recorded", "answering_closed", **{**args, "file": FILE.format(q=item.id)}, **at)

    # confirmed after answering closed: answered when the recording ended, with where it came from
    outcome = run.do(HOST, "confirm_spoken", **confirm, file=again["file"], transcribed_by="pocketsphinx 5.0.4")[-1]
    saved = next(e for e in outcome.effects if isinstance(e, SaveAnswer))
    ended = run.now - timedelta(seconds=1)  # the second take ended 0.2 s before its upload, 1.2 s before now
    assert saved.at == datetime.fromisoformat(again["ended_at"])
    assert saved.at < ended and saved.latency_ms == int((saved.at - shown).total_seconds() * 1000)
    assert (saved.choice_index, saved.entered_by_host) == (2, True)
    assert saved.provenance == {
        "spoken": True,
        "recording": again["file"],
        "transcribed_by": "pocketsphinx 5.0.4",
        "recording_ended_at": again["ended_at"],
    }
    assert [(m.audience, m.event) for m in outcome.messages] == [("host", "answer")]

    run.do(HOST, "enter_answer", player=AI, choice=0)
    run.do(HOST, "reveal")
    run.assert_all_blind()
    jury = run.messages("juror", "answers")[-1].payload
    assert sorted(a["choice"] for a in jury["answers"] if a.get("choice") is not None) == [0, 2]
    for snapshot, audience in (
        (audiences.stage_snapshot(state), "stage"),
        (audiences.juror_snapshot(state, "J1", [], []), "juror"),
    ):
        assert_blind(audience, "snapshot", snapshot, state.players, snapshot=True)
        assert ".webm" not in json.dumps(snapshot)
    with pytest.raises(AssertionError):  # the checker itself catches a recording
        assert_blind("juror", "answers", {"answers": [{"alias": "A", "text": "x", "recording": "a"}]}, state.players)
    with pytest.raises(AssertionError):
        assert_blind("stage", "answers", {"answers": [{"alias": "A", "text": "see 1-2-3-x.webm"}]}, state.players)
    run.refuse(HOST, "confirm_spoken", "wrong_phase", **confirm, file=again["file"])


def test_a_page_s_end_time_is_kept_between_the_question_and_now():
    run = Run(make_state())
    run.state.players[H1].answer_modes = ["text", "spoken"]
    for move in ("open_lobby", "start_round", "show_question", "open_answering"):
        run.do(HOST, move)
    item = run.state.current_question
    recorded(run, item.id, key="early", ended=3600)  # a page's clock an hour behind: not before the question
    assert run.state.recordings[item.id][H1].ended_at == item.shown_at
    recorded(run, item.id, key="late", ended=-60)  # a clock ahead: not after the server had it
    assert run.state.recordings[item.id][H1].ended_at == run.now


# --- over HTTP, with the live server ------------------------------------------------------------------------------


def webm(tmp_path, seconds: float = 1.0) -> bytes:
    return encode(tone(seconds), tmp_path / "take.webm", "webm", "libopus").read_bytes()


def upload(client, token: str, question: int, data: bytes, *, action: str = "take-1", mime="audio/webm", **form):
    fields = {"id": action, "question": str(question), "duration_ms": "1000", "ended_ms_ago": "250", **form}
    fields["audio"] = (io.BytesIO(data), "answer.webm", mime)
    return client.post(f"/play/{token}/recording", data=fields, content_type="multipart/form-data")


@pytest.fixture
def spoken_session(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=2, players=PLAYERS)
    roles = connect_all(app, client, people)
    host = roles[0]
    for move in ("open_lobby", "start_round", "show_question", "open_answering"):
        host.host(move)
    yield people, roles
    for role in [roles[0], roles[1], *roles[2].values(), *roles[3].values()]:
        role.client.disconnect()


def test_an_upload_is_acknowledged_once_on_disk_and_a_resend_is_stored_once(
    app, client, db_factory, tmp_path, spoken_session
):
    people, (host, stage, players, jurors) = spoken_session
    question = players["Mina"].last("question")["id"]
    mina, token = people.player_ids["Mina"], people.players["Mina"]
    folder = tmp_path / "instance" / "recordings"
    data = webm(tmp_path)
    page = app.test_client()  # the child's page: no host cookie

    reply = upload(page, token, question, data)
    assert reply.status_code == 200, reply.get_json()
    body = reply.get_json()
    name = f"{people.session_id}-{question}-{mina}-take-1.webm"
    assert body["ok"] and body["file"] == name and "duplicate" not in body
    assert (folder / name).read_bytes() == data
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no partial file left behind
    take = host.last("recording")
    assert (take["player"], take["file"], take["size"], take["duration_ms"]) == (mina, name, len(data), 1000)

    # the connection dropped before the reply: the page sends the same take again, which is stored once
    again = upload(page, token, question, data, ended_ms_ago="4250")
    assert again.status_code == 200 and again.get_json()["duplicate"] is True
    with db_factory() as db:
        rows = db.scalars(select(Recording)).all()
        assert [(r.file, r.size, r.mime, r.player_id) for r in rows] == [(name, len(data), "audio/webm", mina)]
        assert len(db.scalars(select(Event).where(Event.kind == "recorded")).all()) == 1
    assert sorted(p.name for p in folder.iterdir()) == [name]
    assert players["Mina"].fresh_snapshot()["recorded"]["question"] == question

    # what is refused, and leaves nothing on disk
    def refused(response, status, code):
        assert response.status_code == status, response.get_json()
        assert response.get_json()["error"]["code"] == code, response.get_json()

    refused(upload(page, "nobody", question, data), 404, "bad_token")
    refused(upload(page, token, question, data, action="x", mime="text/plain"), 422, "bad_type")
    refused(upload(page, token, question, b"not audio at all", action="y"), 422, "not_audio")
    refused(upload(page, token, question, b"", action="z"), 422, "empty")
    refused(upload(page, token, question, data, action="../../x"), 422, "bad_field")
    refused(upload(page, token, question, data, action="w", duration_ms="long"), 422, "bad_field")
    refused(upload(page, people.players["Grace"], question, data, action="g"), 409, "not_spoken")
    refused(upload(page, token, question + 99, data, action="q"), 409, "wrong_question")
    big = data[:4] + b"\0" * (8 * 1024 * 1024)
    refused(upload(page, token, question, big, action="big"), 413, "too_large")
    assert sorted(p.name for p in folder.iterdir()) == [name]

    # the host hears it; nobody else may fetch it
    heard = client.get(f"/host/sessions/{people.session_id}/recordings/{name}")
    assert heard.status_code == 200 and heard.data == data and heard.mimetype == "audio/webm"
    assert heard.headers["Cache-Control"] == "private, no-store"
    assert page.get(f"/host/sessions/{people.session_id}/recordings/{name}").status_code == 302  # to the login
    assert client.get(f"/host/sessions/{people.session_id}/recordings/other.webm").status_code == 404

    # the host confirms it; the jury reads the transcript, never the recording
    item = host.last("question")
    confirm = {"player": mina, "question": question, "file": name, "transcribed_by": "host"}
    confirm |= {"choice": 1} if item["type"] == "mcq" else {"text": "the dog is happy"}
    host.host("confirm_spoken", **confirm)
    answer = host.last("answer")
    assert answer["player"]["id"] == mina and answer["provenance"]["recording"] == name
    said = {key: confirm[key] for key in ("choice", "text") if key in confirm}
    assert players["Grace"].send("answer", {"id": client_id(), "question": question, **said})["ok"]
    host.host("enter_answer", player=people.player_ids["Agent"], **said)
    for move in ("close_answering", "reveal"):
        host.host(move)
    with db_factory() as db:
        saved = db.scalar(select(Answer).where(Answer.player_id == mina))
        row = db.scalar(select(Recording))
        assert saved.submitted_at == row.ended_at and saved.provenance["spoken"] is True
        shown = db.get(SessionQuestion, question).shown_at
        assert saved.latency_ms == int((row.ended_at - shown).total_seconds() * 1000)
    for role in (stage, *jurors.values()):
        role.received()
        role.seen.append({"name": "snapshot", "args": [role.fresh_snapshot()]})
        assert any(m["name"] == "answers" for m in role.seen)
        for message in role.seen:
            payload = message["args"][0] if message["args"] else None
            text = json.dumps(payload, ensure_ascii=False)
            assert name not in text and ".webm" not in text and "recording" not in text, message
            assert not identity_leaks(payload, people, allow_reveal=message["name"] == "identities"), message

    # after answering closed, a new take is refused and its file removed
    refused(upload(page, token, question, data, action="take-3"), 409, "answering_closed")
    assert sorted(p.name for p in folder.iterdir()) == [name]


def test_the_export_carries_the_recordings_and_deleting_them_keeps_the_record(
    app, client, db_factory, tmp_path, spoken_session
):
    people, (host, *_rest) = spoken_session
    question = host.last("question")["id"]
    data = webm(tmp_path)
    for action in ("take-1", "take-2"):
        assert upload(app.test_client(), people.players["Mina"], question, data, action=action).status_code == 200
    folder = tmp_path / "instance" / "recordings"
    out = tmp_path / "export"
    runner = CliRunner()
    done = runner.invoke(cli, ["export", people.code, "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "2 recordings" in done.output
    assert sorted(p.name for p in (out / "recordings").iterdir()) == sorted(p.name for p in folder.iterdir())
    with db_factory() as db:
        table = export_tables(db, db.get(VttSession, people.session_id))["recordings.csv"]
    assert list(table["file"]) == sorted(p.name for p in folder.iterdir())
    assert list(table["player"]) == ["Mina", "Mina"] and table["deleted_at"].isna().all()
    assert list(table.columns[:2]) == ["session", "design_hash"]

    import zipfile

    zipped = client.get(f"/host/sessions/{people.session_id}/results/export.zip")
    assert zipped.status_code == 200
    names = zipfile.ZipFile(io.BytesIO(zipped.data)).namelist()
    assert "recordings.csv" in names and sum(n.startswith("recordings/") for n in names) == 2

    # consent withdrawn: not while the session runs; then every file goes and the rows say when
    refused = runner.invoke(cli, ["session", "delete-recordings", people.code, "--yes"])
    assert refused.exit_code != 0 and "finish it first" in refused.output
    host.host("finish", force=True)
    page = client.get(f"/host/sessions/{people.session_id}")
    assert b"2 recordings kept" in page.data
    form = {"csrf_token": _token(page.data)}
    assert client.post(f"/host/sessions/{people.session_id}/recordings/delete", data=form).status_code == 302
    assert len(list(folder.iterdir())) == 2  # not without the tick
    done = client.post(f"/host/sessions/{people.session_id}/recordings/delete", data={**form, "sure": "yes"})
    assert done.status_code == 302 and list(folder.iterdir()) == []
    with db_factory() as db:
        assert all(r.deleted_at is not None for r in db.scalars(select(Recording)))
        logged = db.scalars(select(Event).where(Event.kind == "recordings.deleted")).all()
        assert [(e.actor, e.payload) for e in logged] == [("host", {"files": 2})]
    assert client.get(f"/host/sessions/{people.session_id}/recordings/{table['file'][0]}").status_code == 404
    assert runner.invoke(cli, ["session", "delete-recordings", people.code, "--yes"]).output.startswith("deleted 0")
    again = runner.invoke(cli, ["export", people.code, "--out", str(tmp_path / "again")])
    assert again.exit_code == 0 and not (tmp_path / "again" / "recordings").exists()


def _token(page: bytes) -> str:
    import re

    return re.search(rb'name="csrf_token" value="([^"]+)"', page).group(1).decode()


def test_the_host_gets_a_transcript_suggestion_from_pocketsphinx(app, client, db_factory, tmp_path, spoken_session):
    people, (host, *_rest) = spoken_session
    question = host.last("question")["id"]
    wav = said_wav(tmp_path)
    speech = encode(list(decoded(wav)), tmp_path / "speech.webm", "webm", "libopus").read_bytes()
    reply = upload(app.test_client(), people.players["Mina"], question, speech)
    name = reply.get_json()["file"]
    suggested = client.post(
        f"/host/sessions/{people.session_id}/recordings/{name}/transcribe",
        headers={"X-CSRFToken": _token(client.get(f"/host/sessions/{people.session_id}").data)},
    )
    assert suggested.status_code == 200, suggested.get_json()
    body = suggested.get_json()
    assert body["ok"] and body["backend"].startswith("pocketsphinx")
    heard = set(body["text"].split())
    assert len(heard & set(PHRASE.split())) >= 4, body["text"]
    with db_factory() as db:
        row = db.scalar(select(Recording))
        assert (row.transcript, row.transcribed_by) == (body["text"], body["backend"])
    assert not host.last("answer")  # a suggestion is never an answer by itself

    app.config["TRANSCRIBE"] = None  # VTT_TRANSCRIBE=off: the host types
    off = client.post(
        f"/host/sessions/{people.session_id}/recordings/{name}/transcribe",
        headers={"X-CSRFToken": _token(client.get(f"/host/sessions/{people.session_id}").data)},
    )
    assert off.status_code == 409 and "VTT_TRANSCRIBE" in off.get_json()["message"]


# --- the questions' language --------------------------------------------------------------------------------------


def test_the_session_s_language_is_a_design_field_the_players_pages_speak(app, client, host, db, db_factory):
    from tests.test_answer_modes import design as answer_modes_design
    from tests.test_host_setup import BANK, setup_form
    from vtt.banks import InputError
    from vtt.sessions.create import SessionConfig

    def language_of(value):
        return SessionConfig.from_dict({**answer_modes_design(PLAYERS), "language": value}).language

    assert language_of("ko") == "ko" and language_of("en-GB") == "en-GB" and language_of(None) is None
    for bad in ("korean!", "k", 7, "x" * 40):
        with pytest.raises(InputError) as caught:
            language_of(bad)
        assert [str(p) for p in caught.value.problems] == [
            f"session: field 'language': must be a language tag such as ko or en-GB, not {bad!r}"
        ]
    without = SessionConfig.from_dict(answer_modes_design(PLAYERS))
    assert without.language is None and "language" not in without.design  # older designs keep their hash

    # the setup form: not set by default; ko chosen is in the design and on the session's page
    from tests.conftest import DATA
    from vtt.banks import import_bank, read_bank

    import_bank(db, read_bank(DATA / "spec_examples.csv"), BANK)
    db.commit()
    assert '<option value="" selected>not set' in host.get("/host/sessions/new").get_data(as_text=True)
    assert host.post("/host/sessions/new", data=setup_form(host, language="ko")).status_code == 302
    created = db.scalar(select(VttSession).where(VttSession.name == "Pilot"))
    assert created.design["language"] == "ko"
    assert "<dt>Language of the questions</dt><dd><code>ko</code>" in host.get(f"/host/sessions/{created.id}").get_data(
        as_text=True
    )

    # a player's page is shown (and reads aloud) in it, unless the link asks for another; a juror's is not
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    with db_factory() as session:
        row = session.get(VttSession, people.session_id)
        row.design = {**row.design, "language": "ko"}
        session.commit()
    page = app.test_client()
    assert '<html lang="ko"' in page.get(f"/play/{people.players['Mina']}").get_data(as_text=True)
    assert '<html lang="en"' in app.test_client().get(f"/play/{people.players['Mina']}?lang=en").get_data(as_text=True)
    juror = list(people.jurors.values())[0]
    assert '<html lang="en"' in app.test_client().get(f"/jury/{juror}").get_data(as_text=True)
    _host, _stage, players, _jurors = connect_all(app, client, people)
    assert players["Mina"].last("snapshot")["session"]["language"] == "ko"
    for role in [_host, _stage, *players.values(), *_jurors.values()]:
        role.client.disconnect()


def test_a_korean_session_s_recording_is_not_given_to_the_english_only_recogniser(
    app, client, db_factory, tmp_path, spoken_session
):
    people, (host, *_rest) = spoken_session
    with db_factory() as session:
        row = session.get(VttSession, people.session_id)
        row.design = {**row.design, "language": "ko"}
        session.commit()
    question = host.last("question")["id"]
    name = upload(app.test_client(), people.players["Mina"], question, webm(tmp_path)).get_json()["file"]
    token = _token(client.get(f"/host/sessions/{people.session_id}").data)
    refused = client.post(
        f"/host/sessions/{people.session_id}/recordings/{name}/transcribe", headers={"X-CSRFToken": token}
    )
    assert refused.status_code == 502
    assert "English" in refused.get_json()["message"] and "ko" in refused.get_json()["message"]
