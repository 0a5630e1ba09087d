"""A displaced jury judges a finished session online: its links, its snapshot, its sheet and votes.

A session is played to the end by its live jury (tests.support.review.play_session: Mina, Grace and the AI "Agent";
two rounds); displaced jurors then connect with their own links and judge the rounds at their own pace.
"""

from __future__ import annotations

import json
import threading

import pytest
from sqlalchemy import func, select

from tests.support.live import Role, client_id, identity_leaks, make_session
from tests.support.review import play_session
from vtt.engine.displaced import attention_value
from vtt.extensions import socketio
from vtt.juries.displaced import JuryError, arrive, create_jurors, open_link
from vtt.models import Event, Juror, Jury, SessionRound, SheetEntry, Vote, VttSession


@pytest.fixture
def played(backend):
    app, db_factory = backend
    return app, db_factory, play_session(app, db_factory)


def make_jurors(db_factory, session_id: int, count: int = 1, rounds=None, attention: bool = False):
    with db_factory() as db:
        made = create_jurors(db, db.get(VttSession, session_id), count, rounds, attention)
        db.commit()
    return made


def connect(app, token: str) -> Role:
    juror = Role(socketio, app, {"token": token})
    assert juror.connected
    return juror


def stored(db_factory, session_id: int):
    with db_factory() as db:
        tallies = {
            r.number: r.tally for r in db.scalars(select(SessionRound).where(SessionRound.session_id == session_id))
        }
        version = db.get(VttSession, session_id).state_version
    return tallies, version


def test_a_displaced_juror_sees_each_round_as_the_live_jury_did_and_nothing_more(played):
    app, db_factory, people = played
    (made,) = make_jurors(db_factory, people.session_id)
    assert made.label == "D001"
    juror = connect(app, made.token)
    snapshot = juror.last("snapshot")
    assert snapshot["role"] == "juror" and snapshot["jury"] == "displaced" and snapshot["me"]["label"] == "D001"
    assert [r["round"] for r in snapshot["rounds"]] == [1, 2]
    for card in snapshot["rounds"]:
        assert len(card["aliases"]) == 3 and len(card["questions"]) == 2
        for question in card["questions"]:
            assert [a["alias"] for a in question["answers"]] != []
            assert set(question) >= {"id", "text", "type", "choices", "clip", "answers"}
            assert sorted(a["alias"] for a in question["answers"]) == card["aliases"]
    # no name, kind, age, token or answer time (the answers' own words name their player in this test's data)
    words_aside = json.loads(json.dumps(snapshot))
    for card in words_aside["rounds"]:
        for question in card["questions"]:
            for answer in question["answers"]:
                answer["text"] = ""
    assert identity_leaks(words_aside, people) == []
    assert snapshot["me"]["completion_code"] is None and snapshot["attention"] is None
    # the recorded order of the answers: what the live jury's reveal said
    with db_factory() as db:
        from vtt.models import SessionQuestion

        orders = {
            q.id: q.reveal_order
            for q in db.scalars(select(SessionQuestion).where(SessionQuestion.session_id == people.session_id))
        }
    for card in snapshot["rounds"]:
        for question in card["questions"]:
            assert [a["alias"] for a in question["answers"]] == orders[question["id"]]


def test_sheet_and_votes_are_acknowledged_after_commit_and_never_reach_the_live_figures(played):
    app, db_factory, people = played
    tallies, version = stored(db_factory, people.session_id)
    d1, d2 = make_jurors(db_factory, people.session_id, 2)
    assert [d1.label, d2.label] == ["D001", "D002"]
    juror = connect(app, d1.token)
    snapshot = juror.last("snapshot")
    first = snapshot["rounds"][0]
    question = first["questions"][0]
    alias = first["aliases"][0]
    line = {"id": client_id(), "question": question["id"], "alias": alias, "human_likeness": 2, "looks_like_ai": True}
    assert juror.send("sheet", line)["ok"]
    vote = {"id": client_id(), "round": 1, "alias": alias, "confidence": 4, "reason": "too tidy"}
    reply = juror.send("vote", vote)
    assert reply["ok"] and "completion_code" not in reply
    assert juror.send("vote", vote) == {"ok": True, "duplicate": True}  # a resend is acknowledged, once stored
    with db_factory() as db:
        rows = db.execute(
            select(Vote.round, Vote.alias, Vote.confidence, Vote.reason, Juror.jury)
            .join(Juror, Juror.id == Vote.juror_id)
            .where(Juror.label == "D001", Juror.session_id == people.session_id)
        ).all()
        assert rows == [(1, alias, 4, "too tidy", Jury.DISPLACED)]
        sheet = db.scalars(
            select(SheetEntry).join(Juror, Juror.id == SheetEntry.juror_id).where(Juror.label == "D001")
        ).all()
        assert [(s.alias, s.human_likeness, s.looks_like_ai) for s in sheet] == [(alias, 2, True)]
        logged = db.scalar(select(func.count()).select_from(Event).where(Event.actor.like("displaced:%")))
        assert logged == 2  # the audit trail has the sheet line and the vote, once each
    assert stored(db_factory, people.session_id) == (tallies, version)  # the live tallies and version untouched
    # a reconnect gives back what was saved
    again = connect(app, d1.token).last("snapshot")
    assert again["votes"] == [{"round": 1, "slot": 1, "alias": alias, "confidence": 4, "reason": "too tidy"}]
    assert again["sheet"][0]["alias"] == alias and again["sheet"][0]["human_likeness"] == 2
    # the vote of round 2 completes the task: the completion code comes with its acknowledgement
    last = juror.send("vote", {"id": client_id(), "round": 2, "alias": None, "confidence": None})
    with db_factory() as db:
        code = db.scalar(
            select(Juror.completion_code).where(Juror.label == "D001", Juror.session_id == people.session_id)
        )
    assert last["ok"] and last["completion_code"] == code and len(code) == 8
    assert connect(app, d1.token).last("snapshot")["me"]["completion_code"] == code


def test_a_displaced_jurors_bad_actions_are_refused_alone(played):
    app, db_factory, people = played
    (made,) = make_jurors(db_factory, people.session_id, rounds="2")
    juror = connect(app, made.token)
    snapshot = juror.last("snapshot")
    assert [r["round"] for r in snapshot["rounds"]] == [2]
    two = snapshot["rounds"][0]

    def refused(event, payload):
        reply = juror.send(event, {"id": client_id(), **payload})
        assert not reply["ok"], reply
        return reply["error"]["code"]

    assert refused("vote", {"round": 1, "alias": "A"}) == "not_your_round"
    assert refused("vote", {"round": 2, "alias": "ZZ"}) == "unknown_alias"
    assert refused("sheet", {"question": 999999, "alias": two["aliases"][0]}) == "not_revealed"
    assert refused("attention", {"value": 3}) == "no_attention_check"
    assert refused("host", {"action": "open_lobby"}) == "not_allowed"
    assert refused("answer", {"question": two["questions"][0]["id"], "text": "hi"}) == "not_allowed"
    assert juror.send("vote", {"id": client_id(), "round": 2, "alias": two["aliases"][1], "confidence": 2})["ok"]


def test_an_attention_line_is_asked_once_and_recorded(played):
    app, db_factory, people = played
    made = make_jurors(db_factory, people.session_id, 2, attention=True)
    results = []
    for number, made_juror in enumerate(made):
        juror = connect(app, made_juror.token)
        snapshot = juror.last("snapshot")
        with db_factory() as db:
            juror_id = db.scalar(select(Juror.id).where(Juror.token == made_juror.token))
        asks = snapshot["attention"]["asks"]
        assert asks == attention_value(juror_id) and snapshot["attention"]["answered"] is False
        given = asks if number == 0 else (asks % 5) + 1
        assert juror.send("attention", {"id": client_id(), "value": given})["ok"]
        for card in snapshot["rounds"]:
            juror.send("vote", {"id": client_id(), "round": card["round"], "alias": None})
        done = connect(app, made_juror.token).last("snapshot")
        assert done["attention"]["answered"] is True and done["me"]["completion_code"]
        with db_factory() as db:
            results.append(db.scalar(select(Juror.attention_passed).where(Juror.id == juror_id)))
    assert results == [True, False]


def test_no_displaced_jury_before_the_session_has_finished(backend):
    app, db_factory = backend
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    with db_factory() as db:
        session = db.get(VttSession, people.session_id)
        with pytest.raises(JuryError, match="has not finished"):
            create_jurors(db, session, 3)
        with pytest.raises(JuryError, match="has not finished"):
            open_link(db, session, 10)
        assert db.scalar(select(func.count()).select_from(Juror).where(Juror.jury != Jury.LIVE)) == 0
        # a displaced juror's link (made by hand) is refused while the session runs
        db.add(Juror(session_id=session.id, label="D001", token="early-bird", jury=Jury.DISPLACED))
        db.commit()
    early = Role(socketio, app, {"token": "early-bird"})
    assert not early.connected


def test_an_open_link_gives_each_arrival_a_juror_up_to_its_cap(played):
    app, db_factory, people = played
    with db_factory() as db:
        link = open_link(db, db.get(VttSession, people.session_id), 2, "1")
        db.commit()
        token = link.token
    with db_factory() as db:
        first, second = arrive(db, token), arrive(db, token)
        db.commit()
    assert [first.label, second.label] == ["D001", "D002"] and first.token != second.token
    with db_factory() as db, pytest.raises(JuryError, match="full"):
        arrive(db, token)
    snapshot = connect(app, second.token).last("snapshot")
    assert [r["round"] for r in snapshot["rounds"]] == [1]
    with db_factory() as db, pytest.raises(JuryError, match="not valid"):
        arrive(db, "no-such-link")


def test_arrivals_pressed_at_once_get_distinct_labels_and_never_pass_the_cap(played):
    """Ten people press Start on a link capped at five at the same moment: five jurors, D001-D005, and five
    refusals that say the jury is full; no clash of labels, no server error (SQLite has no FOR UPDATE)."""
    app, db_factory, people = played
    with db_factory() as db:
        token = open_link(db, db.get(VttSession, people.session_id), 5, None).token
        db.commit()
    start = threading.Barrier(10)
    outcomes: list[str] = []

    def press() -> None:
        with db_factory() as db:
            start.wait()
            try:
                made = arrive(db, token)
                db.commit()
                outcomes.append(made.label)
            except JuryError as error:
                db.rollback()
                outcomes.append(error.code)
            except Exception as error:
                outcomes.append(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=press) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes) == ["D001", "D002", "D003", "D004", "D005"] + ["link_full"] * 5
    with db_factory() as db:
        labels = db.scalars(
            select(Juror.label).where(Juror.session_id == people.session_id, Juror.jury == Jury.DISPLACED)
        )
        assert sorted(labels) == ["D001", "D002", "D003", "D004", "D005"]


def test_bad_rounds_are_named_and_nothing_is_written(played):
    app, db_factory, people = played
    with db_factory() as db:
        with pytest.raises(JuryError, match=r"^7 cannot be judged; the judgeable rounds are 1, 2"):
            create_jurors(db, db.get(VttSession, people.session_id), 2, "1,7")
        with pytest.raises(JuryError, match="round numbers separated by commas"):
            create_jurors(db, db.get(VttSession, people.session_id), 2, "one")
        db.rollback()
        assert db.scalar(select(func.count()).select_from(Juror).where(Juror.jury == Jury.DISPLACED)) == 0


def test_the_command_line_makes_the_jurors_and_their_links(app, db_factory, run, tmp_path):
    people = play_session(app, db_factory)
    out = run(
        "jury",
        "displaced",
        people.code,
        "--jurors",
        "3",
        "--rounds",
        "1,2",
        "--json",
        "--csv",
        str(tmp_path / "links.csv"),
        "--base-url",
        "https://vtt.example.org",
    )
    assert out.exit_code == 0, out.output
    made = json.loads(out.output)
    assert [j["label"] for j in made["jurors"]] == ["D001", "D002", "D003"]
    assert all(j["url"] == f"https://vtt.example.org/jury/{j['token']}" for j in made["jurors"])
    lines = (tmp_path / "links.csv").read_text().splitlines()
    assert lines[0] == "label,url" and lines[1] == f"D001,https://vtt.example.org/jury/{made['jurors'][0]['token']}"
    opened = run("jury", "displaced", people.code, "--open", "500", "--json", "--base-url", "https://vtt.example.org")
    assert json.loads(opened.output)["cap"] == 500
    assert json.loads(opened.output)["open_url"].startswith("https://vtt.example.org/jury/open/")
    bad = run("jury", "displaced", people.code, "--jurors", "2", "--rounds", "9")
    assert bad.exit_code == 1 and "--rounds: 9 cannot be judged" in bad.output
    assert run("jury", "displaced", "NOPE", "--jurors", "2").exit_code == 1


def test_nothing_sent_to_a_displaced_juror_names_a_player(app, db_factory, database_url, tmp_path):
    """The payload audit (VTT_AUDIT_LOG) of a served app: every message a displaced juror gets (snapshots, the acks
    of their sheet, attention line and votes, a refusal) carries no name, kind, age, token or answer time."""
    import socketio as socketio_client

    from tests.support.served import ServedApp

    people = play_session(app, db_factory)
    (made,) = make_jurors(db_factory, people.session_id, attention=True)
    audit = tmp_path / "audit.jsonl"
    with ServedApp({"DATABASE_URL": database_url, "VTT_AUDIT_LOG": str(audit)}) as served:
        for visit in range(2):  # the task, then a reconnect that gets it back
            juror = socketio_client.Client()
            seen: list[dict] = []
            juror.on("snapshot", seen.append)
            juror.connect(served.url, auth={"token": made.token}, transports=["websocket"])
            juror.sleep(0.3)
            snapshot = seen[-1] if seen else juror.call("snapshot", None)["snapshot"]
            if visit == 0:
                first = snapshot["rounds"][0]
                line = {"question": first["questions"][0]["id"], "alias": first["aliases"][0], "human_likeness": 3}
                assert juror.call("sheet", {"id": client_id(), **line})["ok"]
                assert juror.call("attention", {"id": client_id(), "value": snapshot["attention"]["asks"]})["ok"]
                assert juror.call("vote", {"id": client_id(), "round": 9, "alias": None})["error"]["code"] == (
                    "not_your_round"
                )
                replies = [
                    juror.call("vote", {"id": client_id(), "round": card["round"], "alias": card["aliases"][1]})
                    for card in snapshot["rounds"]
                ]
                assert all(reply["ok"] for reply in replies) and replies[-1]["completion_code"]
            else:
                assert snapshot["me"]["completion_code"] == replies[-1]["completion_code"]
                assert juror.call("snapshot", None)["ok"]
            juror.disconnect()
    lines = [json.loads(line) for line in audit.read_text(encoding="utf-8").splitlines()]
    theirs = [line for line in lines if line["audience"] == "displaced"]
    events = {line["event"] for line in theirs}
    assert {"snapshot", "ack:snapshot", "ack:sheet", "ack:attention", "ack:vote"} <= events
    assert any(line["payload"].get("completion_code") for line in theirs if line["event"] == "ack:vote")
    for line in theirs:
        payload = json.loads(json.dumps(line["payload"]))
        shown = payload.get("snapshot", payload)  # the ack of a snapshot holds one
        for card in shown.get("rounds", []):
            for question in card["questions"]:
                assert question["answers"] and "qid" not in question
                for answer in question["answers"]:
                    assert set(answer) == {"alias", "text", "choice", "answered"}
                    answer["text"] = ""  # the answers' own words name their player in this test's data
        assert identity_leaks(payload, people) == [], line


def test_the_jurors_export_shows_each_displaced_jurors_task(played):
    app, db_factory, people = played
    made = make_jurors(db_factory, people.session_id, 2, rounds="2", attention=True)
    first = connect(app, made[0].token)
    asks = first.last("snapshot")["attention"]["asks"]
    assert first.send("attention", {"id": client_id(), "value": asks})["ok"]
    from vtt.results.export import export_tables

    with db_factory() as db:
        jurors = export_tables(db, db.get(VttSession, people.session_id))["jurors.csv"]
        codes = dict(db.execute(select(Juror.label, Juror.completion_code).where(Juror.jury == Jury.DISPLACED)).all())
    shown = jurors[jurors["jury"] == "displaced"].set_index("juror")
    assert list(shown.index) == ["D001", "D002"]
    assert list(shown["rounds"]) == ["2", "2"]
    assert [shown.loc["D001", "attention_passed"], shown.loc["D002", "attention_passed"]] == [True, None]
    assert dict(shown["completion_code"]) == codes
    assert jurors[jurors["jury"] == "live"]["completion_code"].isna().all()


def test_the_writer_takes_live_actions_before_a_displaced_backlog():
    """Thousands of displaced jurors saving put no backlog ahead of a live vote: each batch takes every queued live
    action first, displaced ones fill what room is left, and the rest wait, in their order, for the next batches."""
    import queue

    from vtt.engine.actions import Action, Actor
    from vtt.persistence.batch import Submission
    from vtt.realtime.writer import MAX_BATCH_WEIGHT, ActionQueue

    actions = ActionQueue(queue.Queue())  # the writer's queue, its batches taken by hand

    def queued(role: str, number: int):
        return Submission(1, Action(Actor(role, number), "vote", {}, f"k{number}")), None

    backlog = [queued("displaced", n) for n in range(MAX_BATCH_WEIGHT + 50)]
    live = [queued("juror", 1000 + n) for n in range(3)]
    for item in backlog[:200] + live[:2] + backlog[200:] + live[2:]:
        actions.put(item)
    batch = actions.batch(actions.first())
    assert [s.action.actor.id for s, _ in batch] == [1000, 1001, 1002, *range(MAX_BATCH_WEIGHT - 3)]
    actions.put(queued("juror", 2000))
    after = actions.batch(actions.first())
    assert [s.action.actor.id for s, _ in after] == [2000, *range(MAX_BATCH_WEIGHT - 3, MAX_BATCH_WEIGHT + 50)]
    assert actions.empty()


def test_displaced_snapshots_beyond_a_burst_wait_their_turn():
    """A crowd arriving at once: the first ``burst`` snapshots go at once, the next ones at ``rate`` a second."""
    from vtt.realtime.snapshots import TokenBucket

    now = [0.0]
    bucket = TokenBucket(40, 40, clock=lambda: now[0])
    waits = [bucket.wait() for _ in range(42)]
    assert waits[:40] == [0.0] * 40
    assert waits[40:] == pytest.approx([1 / 40, 2 / 40])
    now[0] = 10.0  # a quiet while later the burst is whole again
    assert [bucket.wait() for _ in range(40)] == [0.0] * 40


def test_a_displaced_juror_beyond_the_burst_gets_the_snapshot_a_moment_later(played):
    import time

    app, db_factory, people = played
    hub = app.extensions["vtt.hub"]
    hub.displaced_arrivals.rate, hub.displaced_arrivals.burst = 2, 1  # one at once, then one each half second
    hub.displaced_arrivals.wait()  # the burst is spent
    (made,) = make_jurors(db_factory, people.session_id)
    juror = Role(socketio, app, {"token": made.token})
    assert juror.connected and juror.last("snapshot") is None  # connected, the snapshot on its way
    deadline = time.monotonic() + 5
    while juror.last("snapshot") is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert juror.last("snapshot")["jury"] == "displaced"
