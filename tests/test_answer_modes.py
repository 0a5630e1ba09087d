"""Players' answer modes (text, spoken, read_aloud): the design and the setup form, where they are stored and
exported, the player's and the host's snapshots, and the `notice` a read-aloud page sends when it has no voice.
Blinding: answer modes reveal a young child, so no juror or stage payload ever carries them (the browser side is
tests/test_read_aloud.py)."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from tests.support.apps import login, threaded_app
from tests.support.engine import AI, H1, H2, HOST, Run, assert_blind, make_state
from tests.support.live import Role, client_id, connect_all, identity_leaks, make_session
from tests.support.paths import DATA
from tests.support.session_setup import design
from vtt.banks import InputError, import_bank, read_bank
from vtt.engine import audiences
from vtt.engine.actions import Actor
from vtt.engine.state import SetSpeechNotice
from vtt.extensions import socketio
from vtt.models import Event, Player, VttSession
from vtt.results.export import export_tables
from vtt.sessions.create import SessionConfig, create_session, design_hash

CHILD = {"name": "Mina", "kind": "human", "age": 4, "stage": "pre-operational", "answer_modes": ["text", "read_aloud"]}
PLAYERS = [CHILD, {"name": "Grace", "kind": "human", "age": 31}, {"name": "Agent", "kind": "ai"}]


def problems(players) -> list[str]:
    with pytest.raises(InputError) as caught:
        SessionConfig.from_dict(design(players), source="session.json")
    return [str(p) for p in caught.value.problems]


# --- the design -------------------------------------------------------------------------------------------------


def test_answer_modes_in_the_design_default_to_text_and_keep_one_order():
    config = SessionConfig.from_dict(
        design(
            [
                {"name": "A", "kind": "human", "answer_modes": ["read_aloud", "text"]},
                {"name": "B", "kind": "human", "answer_modes": ["spoken"]},
                {"name": "C", "kind": "human", "answer_modes": ["spoken", "read_aloud", "text"]},
                {"name": "D", "kind": "human"},  # absent: ["text"], as every player had before
                {"name": "E", "kind": "ai", "answer_modes": ["text"]},
                {"name": "F", "kind": "ai"},
            ]
        )
    )
    assert [p.answer_modes for p in config.players] == [
        ["text", "read_aloud"],
        ["spoken"],
        ["text", "spoken", "read_aloud"],
        ["text"],
        ["text"],
        ["text"],
    ]


def test_every_bad_answer_mode_is_named():
    assert problems(
        [
            {"name": "A", "kind": "human", "answer_modes": ["read_aloud"]},
            {"name": "B", "kind": "human", "answer_modes": []},
            {"name": "C", "kind": "human", "answer_modes": ["text", "text"]},
            {"name": "D", "kind": "human", "answer_modes": ["typed", "read_aloud"]},
            {"name": "E", "kind": "human", "answer_modes": "text"},
            {"name": "F", "kind": "human", "answer_modes": ["text", 1]},
            {"name": "G", "kind": "ai", "answer_modes": ["text", "read_aloud"]},
            {"name": "H", "kind": "ai", "answer_modes": ["spoken"]},
        ]
    ) == [
        'session.json: field \'players[0].answer_modes\': needs "text" or "spoken" (how the player answers; '
        "\"read_aloud\" only reads aloud), not ['read_aloud']",
        'session.json: field \'players[1].answer_modes\': needs "text" or "spoken" (how the player answers; '
        '"read_aloud" only reads aloud), not []',
        "session.json: field 'players[2].answer_modes': names 'text' twice",
        "session.json: field 'players[3].answer_modes': has 'typed': the answer modes are \"text\", \"spoken\", "
        '"read_aloud"',
        'session.json: field \'players[4].answer_modes\': must be a list of answer modes ("text", "spoken", '
        "\"read_aloud\"), not 'text'",
        'session.json: field \'players[5].answer_modes\': must be a list of answer modes ("text", "spoken", '
        "\"read_aloud\"), not ['text', 1]",
        "session.json: field 'players[6].answer_modes': must be [\"text\"] for an AI player (it answers in text), "
        "not ['text', 'read_aloud']",
        "session.json: field 'players[7].answer_modes': must be [\"text\"] for an AI player (it answers in text), "
        "not ['spoken']",
    ]


def test_answer_modes_are_stored_on_the_player_and_hashed_with_the_design(db):
    import_bank(db, read_bank(DATA / "spec_examples.csv"), "Spec")
    with_modes = design(PLAYERS)
    created = create_session(db, SessionConfig.from_dict(with_modes))
    db.commit()
    assert {p.name: p.answer_modes for p in created.players} == {
        "Mina": ["text", "read_aloud"],
        "Grace": ["text"],
        "Agent": ["text"],
    }
    assert created.design_hash == design_hash(with_modes)
    without = json.loads(json.dumps(with_modes))
    del without["players"][0]["answer_modes"]
    assert design_hash(without) != created.design_hash  # the modes are part of the pre-registered design
    # a design without answer_modes is stored (and hashed) as given: older designs keep their hash
    plain = create_session(db, SessionConfig.from_dict({**without, "name": "T"}))
    assert "answer_modes" not in json.dumps(plain.design) and plain.design_hash == design_hash({**without, "name": "T"})
    # built in code: answer_modes written only when not the default
    config = SessionConfig.from_dict({**with_modes, "name": "U"})
    config.design = {}
    built = create_session(db, config)
    assert built.design["players"][0]["answer_modes"] == ["text", "read_aloud"]
    assert "answer_modes" not in built.design["players"][1]


def test_the_demo_s_four_year_old_hears_the_questions():
    from vtt.sessions.demo import __file__ as demo

    config = SessionConfig.from_file(__import__("pathlib").Path(demo).parent / "session.json")
    modes = {p.name: p.answer_modes for p in config.players}
    assert modes["김민준"] == ["text", "read_aloud"]
    assert {name: m for name, m in modes.items() if name != "김민준"} == dict.fromkeys(
        modes.keys() - {"김민준"}, ["text"]
    )


# --- the setup form ---------------------------------------------------------------------------------------------


def test_the_setup_form_ticks_answer_modes_per_human_player(host, db):
    from tests.support.session_setup import BANK, setup_form

    import_bank(db, read_bank(DATA / "spec_examples.csv"), BANK)
    db.commit()
    page = host.get("/host/sessions/new").get_data(as_text=True)
    assert page.count('name="players-0-mode_text" value="on" checked') == 1  # a new row answers by text
    assert 'name="players-0-mode_read_aloud" value="on">' in page
    form = setup_form(
        host,
        **{
            "players-0-modes": "1",
            "players-0-mode_text": "on",
            "players-0-mode_read_aloud": "on",
            "players-1-modes": "1",
            "players-1-mode_text": "on",
        },
    )
    assert host.post("/host/sessions/new", data=form).status_code == 302
    created = db.scalar(select(VttSession).where(VttSession.name == "Pilot"))
    assert [p.answer_modes for p in created.players] == [["text", "read_aloud"], ["text"], ["text"]]
    assert created.design["players"][0]["answer_modes"] == ["text", "read_aloud"]
    assert "answer_modes" not in created.design["players"][1]  # the default stays out of the design
    page = host.get(f"/host/sessions/{created.id}").get_data(as_text=True)
    modes = '<td data-label="Answers by" class="answer-modes"><span class="badge">text</span> <span class="badge">'
    assert modes + "read aloud</span>" in page

    # nothing ticked for a human: named next to the row's boxes; read aloud for an AI (no JavaScript): refused
    form = setup_form(
        host,
        name="Pilot 2",
        **{
            "players-0-modes": "1",
            "players-2-modes": "1",
            "players-2-mode_text": "on",
            "players-2-mode_read_aloud": "on",
        },
    )
    response = host.post("/host/sessions/new", data=form)
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert 'id="err-players-0-answer_modes-1">needs &#34;text&#34; or &#34;spoken&#34;' in page
    assert 'id="err-players-2-answer_modes-1">must be [&#34;text&#34;] for an AI player' in page
    assert '<a href="#f-players-0-answer_modes">' in page


# --- the live session -------------------------------------------------------------------------------------------


def test_the_engine_sends_answer_modes_to_the_player_and_the_host_only():
    run = Run(make_state())
    state = run.state
    assert audiences.player_snapshot(state, H1)["me"] == {
        "name": state.players[H1].name,
        "answer_modes": ["text", "read_aloud"],
    }
    assert audiences.player_snapshot(state, H2)["me"]["answer_modes"] == ["text"]
    host_players = {p["id"]: p["answer_modes"] for p in audiences.host_snapshot(state, [])["players"]}
    assert host_players == {H1: ["text", "read_aloud"], H2: ["text"], AI: ["text"]}

    run.do(HOST, "open_lobby")
    outcome = run.do(Actor("player", H1), "notice", notice="no_voice", language="ko")[-1]
    assert [(m.audience, m.event) for m in outcome.messages] == [("host", "notice")]
    assert outcome.messages[0].payload == {
        "player": H1,
        "notice": "no_voice",
        "language": "ko",
        "at": "2024-05-01T12:00:02Z",
    }
    assert any(isinstance(e, SetSpeechNotice) for e in outcome.effects)
    assert audiences.host_snapshot(state, [])["notices"] == {
        str(H1): {"notice": "no_voice", "language": "ko", "at": "2024-05-01T12:00:02Z"}
    }
    run.refuse(Actor("player", H2), "notice", "not_read_aloud", notice="no_voice", language="ko")
    run.refuse(Actor("player", H1), "notice", "invalid", notice="loud", language="ko")
    run.refuse(Actor("player", H1), "notice", "invalid", notice="no_voice", language="k o")
    run.refuse(HOST, "notice", "not_allowed", notice="no_voice", language="ko")

    run.do(HOST, "start_round")
    run.question({H1: {"choice": 1}, H2: {"choice": 2}, AI: {"choice": 0}})
    run.do(Actor("player", H1), "notice", notice="voice_ok", language="ko-KR")
    run.assert_all_blind()
    for snapshot, audience in (
        (audiences.stage_snapshot(state), "stage"),
        (audiences.juror_snapshot(state, "J1", [], []), "juror"),
    ):
        assert_blind(audience, "snapshot", snapshot, state.players, snapshot=True)
        assert "answer_modes" not in json.dumps(snapshot) and "read_aloud" not in json.dumps(snapshot)
    with pytest.raises(AssertionError):  # the checker itself catches an answer mode
        assert_blind("juror", "answers", {"answers": [{"alias": "A", "answer_modes": ["text"]}]}, state.players)
    with pytest.raises(AssertionError):
        assert_blind("stage", "answers", {"answers": [{"alias": "A", "text": "read_aloud"}]}, state.players)


@pytest.mark.each_database
def test_answer_modes_reach_the_player_and_the_host_and_never_a_juror_or_the_stage(
    app, client, db_factory, database_url
):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=2, players=PLAYERS)
    host, stage, players, jurors = connect_all(app, client, people)
    mina, grace = people.player_ids["Mina"], people.player_ids["Grace"]
    assert players["Mina"].last("snapshot")["me"] == {"name": "Mina", "answer_modes": ["text", "read_aloud"]}
    assert players["Grace"].last("snapshot")["me"]["answer_modes"] == ["text"]
    listed = {p["name"]: p["answer_modes"] for p in host.last("snapshot")["players"]}
    assert listed == {"Mina": ["text", "read_aloud"], "Grace": ["text"], "Agent": ["text"]}
    assert host.last("snapshot")["notices"] == {}

    # Mina's page has no voice for Korean: the host hears of it, and only the host
    reply = players["Mina"].send("notice", {"id": "voice-1", "notice": "no_voice", "language": "ko"})
    assert reply["ok"], reply
    assert players["Mina"].send("notice", {"id": "voice-1", "notice": "no_voice", "language": "ko"})["duplicate"]
    notice = host.last("notice")
    assert (notice["player"], notice["notice"], notice["language"]) == (mina, "no_voice", "ko")
    assert host.fresh_snapshot()["notices"][str(mina)]["notice"] == "no_voice"
    refused = players["Grace"].send("notice", {"id": client_id(), "notice": "no_voice", "language": "en"})
    assert refused["error"]["code"] == "not_read_aloud"
    for bad in (
        {"notice": "loud", "language": "ko"},
        {"notice": "no_voice", "language": "<script>"},
        {"notice": "no_voice"},
    ):
        assert players["Mina"].send("notice", {"id": client_id(), **bad})["error"]["code"] == "invalid"

    # a whole question: the jury and the stage see the answers, never how anyone answers
    for move in ("open_lobby", "start_round", "show_question", "open_answering"):
        host.host(move)
    question = players["Mina"].last("question")
    answer = {"choice": 1} if question["type"] == "mcq" else {"text": "the cat"}
    for name in ("Mina", "Grace", "Agent"):
        assert players[name].send("answer", {"id": client_id(), "question": question["id"], **answer})["ok"]
    for move in ("close_answering", "reveal"):
        host.host(move)
    assert players["Mina"].fresh_snapshot()["me"]["answer_modes"] == ["text", "read_aloud"]
    for role in (stage, *jurors.values()):
        role.received()
        role.seen.append({"name": "snapshot", "args": [role.fresh_snapshot()]})
        for message in role.seen:
            payload = message["args"][0] if message["args"] else None
            text = json.dumps(payload, ensure_ascii=False)
            assert "answer_modes" not in text and "read_aloud" not in text and "no_voice" not in text, message
            assert message["name"] != "notice"
            assert not identity_leaks(payload, people, allow_reveal=message["name"] == "identities"), message
    with db_factory() as db:
        logged = db.scalars(select(Event).where(Event.kind == "notice")).all()
        assert [(e.actor, e.payload) for e in logged] == [(f"player:{mina}", {"notice": "no_voice", "language": "ko"})]
        assert db.get(Player, mina).details["speech"]["notice"] == "no_voice"
        assert db.get(Player, grace).details == {}
    for role in [host, stage, *players.values(), *jurors.values()]:
        role.client.disconnect()
    app.extensions["vtt.hub"].stop()

    # a restarted server still shows the host the note, and the page's later "voice_ok" clears it
    restarted = threaded_app(database_url)
    try:
        host_client = restarted.test_client()
        login(host_client)
        again = Role(socketio, restarted, {"code": people.code, "role": "host"}, flask_client=host_client)
        assert again.last("snapshot")["notices"][str(mina)]["language"] == "ko"
        page = Role(socketio, restarted, {"token": people.players["Mina"]})
        assert page.send("notice", {"id": client_id(), "notice": "voice_ok", "language": "ko"})["ok"]
        assert again.last("notice")["notice"] == "voice_ok"
    finally:
        restarted.extensions["vtt.hub"].stop()


def test_the_export_lists_each_player_s_answer_modes(db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    with db_factory() as db:
        tables = export_tables(db, db.get(VttSession, people.session_id))
    players = {row["player"]: row["answer_modes"] for row in tables["players.csv"].to_dict("records")}
    assert {name: json.loads(modes) for name, modes in players.items()} == {
        "Mina": ["text", "read_aloud"],
        "Grace": ["text"],
        "Agent": ["text"],
    }
