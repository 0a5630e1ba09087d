"""A whole live session over Flask-SocketIO's test client: every role, acks after commit, blinding."""

from __future__ import annotations

import gc
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Connection, func, select, text

from tests.support.apps import login, threaded_app
from tests.support.live import TO_JUDGING, Role, client_id, connect_all, identity_leaks, make_session
from tests.support.waiting import wait_until
from vtt.db import make_db_factory, make_engine, upgrade
from vtt.extensions import socketio
from vtt.models import Answer, Event, SessionQuestion, SheetEntry, Vote


def test_a_two_round_session_for_every_role(backend):
    app, db_factory = backend
    client = app.test_client()
    people = make_session(db_factory)
    host, stage, players, jurors = connect_all(app, client, people)
    assert host.connected and stage.connected and all(p.connected for p in players.values())
    assert host.last("snapshot")["status"]["phase"] == "draft"
    assert jurors["J1"].last("snapshot")["me"] == {"label": "J1"}
    assert players["Mina"].last("snapshot")["me"] == {"name": "Mina", "answer_modes": ["text"]}

    host.host("open_lobby")
    for number in (1, 2):
        started = host.host("start_round")
        assert started["round"] == number
        card = jurors["J1"].last("round")
        assert card["round"] == number and card["aliases"] == ["A", "B", "C"]
        for position in (1, 2):
            host.host("show_question")
            question = players["Mina"].last("question")
            assert question["position"] == position and "answer_index" not in question
            host.host("open_answering")
            for name, player in players.items():
                answer = {"choice": 1} if question["type"] == "mcq" else {"text": f"she looks sad ({len(name)})"}
                reply = player.send("answer", {"id": client_id(), "question": question["id"], **answer})
                assert reply["ok"], reply
            host.host("close_answering")
            late = players["Mina"].send(
                "answer", {"id": client_id(), "question": question["id"], "choice": 0, "text": "late"}
            )
            assert late["ok"] is False and late["error"]["code"] == "answering_closed"
            host.host("reveal")
            shown = jurors["J2"].last("answers")
            assert shown["question"] == question["id"] and len(shown["answers"]) == 3
            assert sorted(a["alias"] for a in shown["answers"]) == ["A", "B", "C"]
            for juror in jurors.values():
                reply = juror.send(
                    "sheet",
                    {
                        "id": client_id(),
                        "question": question["id"],
                        "alias": "A",
                        "note": "too fast",
                        "human_likeness": 2,
                        "looks_like_ai": True,
                    },
                )
                assert reply["ok"], reply
        host.host("open_vote")
        for index, juror in enumerate(jurors.values()):
            alias = None if index == 3 else ("B" if index == 0 else "A")
            reply = juror.send("vote", {"id": client_id(), "round": number, "alias": alias, "confidence": 4})
            assert reply["ok"], reply
        assert host.last("votes") == {**host.last("votes"), "round": number, "voted": 4, "jurors": 4}
        host.host("close_vote")
        tally = host.last("tally")
        assert tally["cast"] == 3 and tally["abstentions"] == 1
        assert {row["alias"]: row["votes"] for row in tally["players"]} == {"A": 2, "B": 1, "C": 0}
        host.host("show_tally")
        blind = jurors["J1"].last("tally")
        assert blind["votes"] == [{"alias": "A", "votes": 2}, {"alias": "B", "votes": 1}, {"alias": "C", "votes": 0}]
        host.host("reveal_identities")
        revealed = stage.last("identities")
        assert revealed["round"] == number and [r["alias"] for r in revealed["revealed"]] == ["A"]
    host.host("finish")
    assert stage.last("status")["phase"] == "finished"

    with db_factory() as db:
        assert db.scalar(select(func.count()).select_from(Answer)) == 3 * 4
        assert db.scalar(select(func.count()).select_from(SheetEntry)) == 4 * 4
        assert db.scalar(select(func.count()).select_from(Vote)) == 4 * 2
    for role in [stage, *jurors.values()]:
        role.received()
        for message in role.seen:
            payload = message["args"][0] if message["args"] else None
            assert not identity_leaks(payload, people, allow_reveal=message["name"] == "identities"), message


def test_a_replayed_vote_is_acknowledged_again_with_no_second_row(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1)
    host, _stage, players, jurors = connect_all(app, client, people)
    for move in (*TO_JUDGING, "open_vote"):
        host.host(move)
    vote = {"id": "vote-once", "round": 1, "alias": "B", "confidence": 3}
    first = jurors["J1"].send("vote", vote)
    again = jurors["J1"].send("vote", vote)
    assert first["ok"] and again == {"ok": True, "duplicate": True, "state_version": first["state_version"]}
    # the ack was "lost": the juror reconnects and resends
    jurors["J1"].client.disconnect()
    back = Role(socketio, app, {"token": people.jurors["J1"]})
    assert back.last("snapshot")["votes"] == [{"round": 1, "slot": 1, "alias": "B", "confidence": 3, "reason": ""}]
    assert back.send("vote", vote)["duplicate"] is True
    with db_factory() as db:
        assert db.scalar(select(func.count()).select_from(Vote)) == 1
        assert db.scalar(select(func.count()).select_from(Event).where(Event.client_key == "vote-once")) == 1


def test_bad_messages_get_clear_errors_and_the_connection_stays(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1)
    juror = Role(socketio, app, {"token": people.jurors["J1"]})
    reply = juror.send("vote", {"id": "x", "round": 1, "alias": "A", "confidence": 9})
    assert reply["ok"] is False and reply["error"]["code"] == "invalid" and "confidence" in reply["error"]["message"]
    assert juror.send("vote", ["not", "an", "object"])["error"]["message"].startswith("expected a JSON object")
    assert juror.send("vote", {"id": "y", "round": 1, "alias": "A", "extra": 1})["error"]["code"] == "invalid"
    assert juror.send("vote", {"id": "z", "round": 1, "alias": "A"})["error"]["code"] == "vote_closed"
    assert juror.send("host", {"id": "h", "action": "open_lobby"})["error"]["code"] == "not_allowed"
    assert juror.send("nonsense", {})["error"]["code"] == "unknown_event"
    assert juror.connected


def test_connections_without_valid_credentials_are_refused(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1)
    assert not Role(socketio, app, {"token": "nope"}).connected
    assert not Role(socketio, app, {"code": people.code, "role": "host"}).connected  # no login cookie
    assert not Role(socketio, app, {"code": "ZZZZZZ", "role": "stage"}).connected
    assert not Role(socketio, app, {"code": people.code, "role": "juror", "nickname": "Kim"}).connected  # closed


def test_open_join_gives_a_juror_a_token_to_come_back_with(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, open_join=True)
    guest = Role(socketio, app, {"code": people.code, "role": "juror", "nickname": "Kim"})
    me = guest.last("snapshot")["me"]
    assert me["label"] == "Kim" and me["token"]
    twin = Role(socketio, app, {"code": people.code.lower(), "role": "juror", "nickname": "Kim"})
    assert twin.last("snapshot")["me"]["label"] == "Kim (2)"
    back = Role(socketio, app, {"token": me["token"]})
    assert back.last("snapshot")["me"] == {"label": "Kim"}


def test_a_page_saves_several_sheet_lines_in_one_message_all_or_none(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1)
    host, _stage, _players, jurors = connect_all(app, client, people)
    for move in TO_JUDGING:
        host.host(move)
    juror = jurors["J1"]
    question = juror.last("answers")["question"]
    lines = [
        {"question": question, "alias": "A", "note": "too quick", "human_likeness": 2},
        {"question": question, "alias": "B", "looks_like_ai": True},
    ]
    refused = juror.send("sheet", {"id": "s1", "lines": [*lines, {"question": question, "alias": "Q"}]})
    assert refused["ok"] is False and refused["error"]["code"] == "unknown_alias"
    mixed = juror.send("sheet", {"id": "s2", "question": question, "alias": "A", "lines": lines})
    assert mixed["error"] == {
        "code": "invalid",
        "message": "field 'message': Value error, give either one line (question, alias, ...) or lines, not both",
    }
    typo = juror.send("sheet", {"id": "s3", "lines": [{"question": question, "alais": "A"}]})
    assert "field 'lines.0.alias': Field required" in typo["error"]["message"]
    assert juror.fresh_snapshot()["sheet"] == []  # nothing of the refused saves
    assert juror.send("sheet", {"id": "s4", "lines": lines})["ok"] is True
    assert juror.send("sheet", {"id": "s4", "lines": lines})["duplicate"] is True
    assert juror.fresh_snapshot()["sheet"] == [
        {"question": question, "alias": "A", "note": "too quick", "human_likeness": 2, "looks_like_ai": False},
        {"question": question, "alias": "B", "note": "", "human_likeness": None, "looks_like_ai": True},
    ]


def test_a_new_app_on_the_same_database_resumes_where_the_session_was(app, client, db_factory, database_url):
    people = make_session(db_factory, rounds=1, per_round=1)
    host, _stage, _players, jurors = connect_all(app, client, people)
    for move in TO_JUDGING:
        host.host(move)
    question = jurors["J1"].last("answers")["question"]
    assert jurors["J1"].send("sheet", {"id": "s1", "question": question, "alias": "C", "note": "odd"})["ok"]
    host.host("open_vote")
    assert jurors["J1"].send("vote", {"id": "v1", "round": 1, "alias": "C", "confidence": 5})["ok"]
    for role in [host, *jurors.values()]:
        role.client.disconnect()
    app.extensions["vtt.hub"].stop()  # the process goes away

    restarted = threaded_app(database_url)
    try:
        juror = Role(socketio, restarted, {"token": people.jurors["J1"]})
        snapshot = juror.last("snapshot")
        assert snapshot["status"]["phase"] == "voting" and snapshot["status"]["round"] == 1
        assert snapshot["votes"] == [{"round": 1, "slot": 1, "alias": "C", "confidence": 5, "reason": ""}]
        assert snapshot["sheet"] == [
            {"question": question, "alias": "C", "note": "odd", "human_likeness": None, "looks_like_ai": False}
        ]
        assert sorted(a["alias"] for a in snapshot["revealed"][0]["answers"]) == ["A", "B", "C"]
        assert juror.send("vote", {"id": "v1", "round": 1, "alias": "C", "confidence": 5})["duplicate"] is True
        host_client = restarted.test_client()
        login(host_client)
        host = Role(socketio, restarted, {"code": people.code, "role": "host"}, flask_client=host_client)
        assert host.last("snapshot")["votes"]["voted"] == 1
        host.host("close_vote")
        assert {row["alias"]: row["votes"] for row in host.last("tally")["players"]}["C"] == 1
    finally:
        restarted.extensions["vtt.hub"].stop()


def test_the_writer_leaves_nothing_in_reference_cycles(app, client, db_factory):
    """Objects in cycles wait for the garbage collector, and a collection holds every connection of a
    gevent server: the writer's batches must leave none (a Session per batch left ~40)."""
    people = make_session(db_factory, rounds=1, per_round=1)
    host, _stage, _players, jurors = connect_all(app, client, people)
    for move in (*TO_JUDGING, "open_vote"):
        host.host(move)
    question = jurors["J1"].last("answers")["question"]
    writer_engine = app.extensions["vtt.hub"].writer.database.engine
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for n, (label, juror) in enumerate(jurors.items()):
            assert juror.send("sheet", {"id": f"s{n}", "question": question, "alias": "A", "note": label})["ok"]
            assert juror.send("vote", {"id": f"v{n}", "round": 1, "alias": "B", "confidence": 3})["ok"]
        gc.collect()
        left = [thing for thing in gc.garbage if isinstance(thing, Connection) and thing.engine is writer_engine]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert left == []
    with db_factory() as db:
        assert db.scalar(select(func.count()).select_from(Vote)) == len(jurors)


@pytest.mark.postgres
def test_the_writer_carries_on_when_its_database_connection_is_lost(postgres_url):
    upgrade(postgres_url)
    app = threaded_app(postgres_url)
    engine = make_engine(postgres_url)
    try:
        people = make_session(make_db_factory(engine), rounds=1, per_round=1)
        host, _stage, _players, jurors = connect_all(app, app.test_client(), people)
        host.host("open_lobby")
        with engine.connect() as admin:  # the writer's connection is cut, as by a restarted server
            cut = admin.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            ).all()
        assert cut and all(ok for (ok,) in cut)
        assert host.host("start_round")["round"] == 1
        for move in TO_JUDGING[2:]:
            host.host(move)
        assert jurors["J1"].last("answers")["answers"]
    finally:
        app.extensions["vtt.hub"].stop()
        engine.dispose()


def test_an_expired_deadline_closes_answering_by_itself(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, answer_seconds=1)
    host, stage, players, _jurors = connect_all(app, client, people)
    for move in ("open_lobby", "start_round", "show_question", "open_answering"):
        host.host(move)
    assert stage.last("status")["phase"] == "answering" and stage.last("status")["deadline"]
    wait_until(
        lambda: stage.last("status")["phase"] == "answers_closed",
        timeout=15,
        message="the expired deadline to close answering",
    )
    question = players["Mina"].last("question")
    late = players["Mina"].send("answer", {"id": "late", "question": question["id"], "choice": 0, "text": "x"})
    assert late["error"]["code"] == "answering_closed"
    assert host.last("tells") == {**host.last("tells"), "question": question["id"]}


def test_several_ai_players_take_one_vote_per_slot(app, client, db_factory):
    people = make_session(
        db_factory,
        rounds=1,
        per_round=1,
        ai_votes=2,
        players=[
            {"name": "Mina", "kind": "human", "age": 10},
            {"name": "Grace", "kind": "human", "age": 31},
            {"name": "Agent", "kind": "ai"},
            {"name": "Bot", "kind": "ai"},
        ],
    )
    host, stage, _players, jurors = connect_all(app, client, people)
    for move in (
        "open_lobby",
        "start_round",
        "show_question",
        "open_answering",
        "close_answering",
        "reveal",
        "open_vote",
    ):
        host.host(move)
    assert stage.last("status")["vote_slots"] == 2
    juror = jurors["J1"]
    assert juror.send("vote", {"id": "a", "round": 1, "slot": 1, "alias": "A"})["ok"]
    twice = juror.send("vote", {"id": "b", "round": 1, "slot": 2, "alias": "A"})
    assert twice["error"]["code"] == "named_twice"
    assert juror.send("vote", {"id": "c", "round": 1, "slot": 2, "alias": "B"})["ok"]
    assert juror.send("vote", {"id": "d", "round": 1, "slot": 3, "alias": "C"})["error"]["code"] == "bad_field"
    assert jurors["J2"].send("vote", {"id": "e", "round": 1, "slot": 1, "alias": "D"})["ok"]
    assert stage.last("votes")["voted"] == 2
    host.host("close_vote")
    tally = host.last("tally")
    assert tally["cast"] == 3 and tally["voters"] == 2
    with db_factory() as db:
        rows = db.execute(select(Vote.juror_id, Vote.slot, Vote.alias).order_by(Vote.juror_id, Vote.slot)).all()
    assert [(slot, alias) for _juror, slot, alias in rows] == [(1, "A"), (2, "B"), (1, "D")]


def test_the_live_tallies_and_the_report_agree(app, client, db_factory, tmp_path):
    import pandas as pd
    from click.testing import CliRunner

    from vtt.cli import main

    people = make_session(db_factory, rounds=2, per_round=1, reveal="end")
    host, _stage, players, jurors = connect_all(app, client, people)
    host.host("open_lobby")
    picks = {1: ["A", "A", "B", None], 2: ["C", "B", "B", "B"]}
    live = {}
    for number in (1, 2):
        for move in ("start_round", "show_question", "open_answering"):
            host.host(move)
        question = players["Mina"].last("question")
        for player in players.values():
            answer = {"choice": 2} if question["type"] == "mcq" else {"text": "she is embarrassed"}
            assert player.send("answer", {"id": client_id(), "question": question["id"], **answer})["ok"]
        for move in ("close_answering", "reveal", "open_vote"):
            host.host(move)
        for juror, alias in zip(jurors.values(), picks[number]):
            assert juror.send("vote", {"id": client_id(), "round": number, "alias": alias, "confidence": 3})["ok"]
        host.host("close_vote")
        live[number] = host.last("tally")
        host.host("show_tally")
    host.host("finish")

    result = CliRunner().invoke(main, ["report", people.code, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    rounds = pd.read_csv(tmp_path / "rounds.csv").set_index("round")
    tally = pd.read_csv(tmp_path / "tally.csv")
    for number, figures in live.items():
        assert figures["cast"] == rounds.loc[number, "votes"]
        assert figures["abstentions"] == rounds.loc[number, "abstentions"]
        assert figures["detection_pct"] == pytest.approx(rounds.loc[number, "detection_pct"])
        assert figures["ai_passed"] == bool(rounds.loc[number, "ai_passed"])
        in_report = tally[tally["round"] == number].set_index("player")["votes"].to_dict()
        assert {row["name"]: row["votes"] for row in figures["players"]} == in_report


def test_a_question_whose_key_is_withheld_is_played_like_any_other(app, client, db_factory):
    from vtt.models import Question, SessionQuestion

    people = make_session(db_factory, rounds=1, per_round=1)
    with db_factory() as db:  # as imported from a test split with --allow-missing-keys
        question = db.scalar(
            select(Question).join(SessionQuestion).where(SessionQuestion.session_id == people.session_id)
        )
        question.answer_index, question.reference_answer = None, ""
        db.commit()
    host, _stage, players, jurors = connect_all(app, client, people)
    for move in ("open_lobby", "start_round", "show_question", "open_answering"):
        host.host(move)
    shown = host.last("question")
    assert shown["answer_index"] is None
    content = {"choice": 0} if shown["type"] == "mcq" else {"text": "Because she was sad."}
    for name, player in players.items():
        reply = player.send("answer", {"id": client_id("a"), "question": shown["id"], **content})
        assert reply["ok"], (name, reply)
    host.host("close_answering")
    host.host("reveal")
    revealed = jurors["J1"].last("answers")
    assert len(revealed["answers"]) == 3 and all(row["answered"] for row in revealed["answers"])
    with db_factory() as db:
        assert db.scalar(select(func.count()).select_from(Answer).where(Answer.session_id == people.session_id)) == 3


def test_the_plain_reading_of_votes_and_sheets_agrees_with_the_models():
    """Hot messages skip pydantic when plainly valid: whatever they are read as, the model reads the same;
    whatever is not plain goes through the model (its errors, its values)."""
    import json
    import random

    from vtt.protocol.messages import CLIENT_MESSAGES, PLAIN_READERS, Invalid, parse, parse_action

    rng = random.Random(5)
    odd = [None, True, False, 0, -1, 1, 5, 6, 2**70, 1.0, "", "A", "ABCDEFGHI", "x" * 4001, [], {}, "1"]

    def value(good):
        return rng.choice(odd) if rng.random() < 0.25 else good()

    def line(top=False):
        fields = {
            "question": lambda: rng.randint(1, 9),
            "alias": lambda: rng.choice("ABC"),
            "note": lambda: rng.choice(["", "hm", None, "n" * 4000]),
            "human_likeness": lambda: rng.randint(1, 5),
            "looks_like_ai": lambda: rng.random() < 0.5,
        }
        made = {key: value(make) for key, make in fields.items() if rng.random() < 0.85}
        if rng.random() < 0.05:
            made["extra"] = 1
        return made

    def vote():
        fields = {
            "id": lambda: rng.choice(["v1", "x" * 64, "x" * 65, ""]),
            "round": lambda: rng.randint(1, 3),
            "slot": lambda: rng.randint(1, 2),
            "alias": lambda: rng.choice(["A", "B", None]),
            "confidence": lambda: rng.randint(1, 5),
            "reason": lambda: rng.choice(["", "fluent", None]),
        }
        made = {key: value(make) for key, make in fields.items() if rng.random() < 0.9}
        if rng.random() < 0.05:
            made["extra"] = 1
        return made

    def sheet():
        made = line() if rng.random() < 0.4 else {}
        if rng.random() < 0.7:
            made["lines"] = value(lambda: [line() for _ in range(rng.choice([0, 1, 2, 5, 101]))])
        if rng.random() < 0.95:
            made["id"] = value(lambda: "s1")
        return made

    plain_seen = {"vote": 0, "sheet": 0}
    for _ in range(6000):
        event = rng.choice(["vote", "sheet"])
        data = vote() if event == "vote" else sheet()
        try:
            model = parse(CLIENT_MESSAGES[event], data)
        except Invalid as invalid:
            with pytest.raises(Invalid) as raised:
                parse_action(event, data)
            assert raised.value.message == invalid.message
            assert PLAIN_READERS[event](data) is None
            continue
        action, fields, key = parse_action(event, data)
        expected = model.model_dump(exclude={"id", "action"})
        assert (action, key) == (event, model.id)
        assert json.dumps(fields) == json.dumps(expected)  # the same values, in the same order
        plain_seen[event] += PLAIN_READERS[event](data) is not None
    assert plain_seen["vote"] > 100 and plain_seen["sheet"] > 50
    assert parse_action("host", {"id": "h1", "action": "open_vote"})[0] == "open_vote"


@pytest.mark.each_database
def test_the_host_s_screening_reaches_every_page_and_answering_opens_when_the_clip_has_played(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, answer_seconds=30)
    host, stage, players, jurors = connect_all(app, client, people)
    for move in ("open_lobby", "start_round", "show_question"):
        host.host(move)
    before = datetime.now(UTC)
    clock = stage.send("clock", None)
    assert clock["ok"] and abs(datetime.fromisoformat(clock["now"].replace("Z", "+00:00")) - before) < timedelta(
        seconds=1
    )
    played = host.host("play_clip", duration=0.4)
    starts = datetime.fromisoformat(played["starts_at"].replace("Z", "+00:00"))
    assert timedelta(seconds=1.4) <= starts - before <= timedelta(seconds=2)  # the lead before everyone starts
    question = players["Mina"].last("question")["id"]
    for role in (stage, players["Mina"], jurors["J1"]):
        assert role.last("status")["screening"] == {"question": question, "starts_at": played["starts_at"]}
    # a page that connects now learns the screening from its snapshot, and joins mid-clip
    late = Role(socketio, app, {"token": people.players["Grace"]})
    assert late.last("snapshot")["status"]["screening"]["starts_at"] == played["starts_at"]
    # the clip has played (1.5 s lead + 0.4 s): the writer's clock opens answering
    wait_until(
        lambda: stage.last("status")["phase"] == "answering", timeout=15, message="the writer's clock to open answering"
    )
    assert stage.last("status")["deadline"]
    with db_factory() as db:  # on disk: what a restarted server tells the pages
        stamped = db.scalar(select(SessionQuestion.clip_started_at).where(SessionQuestion.id == question))
    assert timedelta(0) <= stamped - starts < timedelta(milliseconds=1)


def test_in_device_mode_each_player_plays_the_clip_and_the_host_cannot(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, clip_playback="device")
    host, stage, _players, _jurors = connect_all(app, client, people)
    for move in ("open_lobby", "start_round", "show_question"):
        host.host(move)
    assert stage.last("status")["clip_playback"] == "device" and stage.last("status")["screening"] is None
    refused = host.send("host", {"id": client_id("h"), "action": "play_clip"})
    assert refused["error"]["code"] == "clip_playback"
