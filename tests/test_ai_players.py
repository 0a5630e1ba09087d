"""AI players over the live protocol (the server's side): the question's qid for players, an answer's
provenance, agents' status reports, the host entering an AI player's answer (typed, or from a predictions file),
and all of it kept from the jury."""

from __future__ import annotations

import io
import json
import re

import pytest
from sqlalchemy import func, select

from tests.support.apps import login, threaded_app
from tests.support.live import Role, client_id, connect_all, identity_leaks, make_session
from vtt.extensions import socketio
from vtt.models import Answer, Event, Player

FOUR = [
    {"name": "Mina", "kind": "human", "age": 10, "stage": "concrete"},
    {"name": "Grace", "kind": "human", "age": 31},
    {"name": "Agent", "kind": "ai"},
    {"name": "Bot", "kind": "ai"},
]
PROVENANCE = {"backend": "replay", "model": "qwen2-vl-7b", "settings": {"file": "preds.csv", "max_tokens": 64}}


def answer_args(question: dict, n: int = 1) -> dict:
    return {"choice": n} if question["type"] == "mcq" else {"text": f"she looks worried ({n})"}


def refused(role: Role, event: str, payload: dict) -> dict:
    reply = role.send(event, {"id": client_id(), **payload})
    assert reply["ok"] is False, reply
    return reply["error"]


def assert_blind(people, *roles: Role) -> None:
    """Nothing any juror or stage screen received names a player, a provenance, an agent's report or a qid."""
    for role in roles:
        role.received()
        assert role.seen
        for message in role.seen:
            payload = message["args"][0] if message["args"] else None
            assert not identity_leaks(payload, people, allow_reveal=message["name"] == "identities"), message
            assert message["name"] != "agent", message


def to_answering(host: Role) -> dict:
    for move in ("open_lobby", "start_round", "show_question", "open_answering"):
        host.host(move)
    return host.last("question")


def test_players_get_the_question_s_qid_and_the_jury_does_not(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=2)
    host, stage, players, jurors = connect_all(app, client, people)
    for move in ("open_lobby", "start_round", "show_question"):
        host.host(move)
    qid = host.last("question")["qid"]
    assert qid and isinstance(qid, str)
    for player in players.values():
        assert player.last("question")["qid"] == qid  # the event
    assert players["Agent"].fresh_snapshot()["question"]["qid"] == qid  # and the snapshot
    assert "qid" not in jurors["J1"].last("question") and "qid" not in stage.last("question")
    assert "qid" not in jurors["J1"].fresh_snapshot()["question"]
    assert "qid" not in stage.fresh_snapshot()["question"]
    reconnected = Role(socketio, app, {"token": people.jurors["J2"]})
    assert "qid" not in reconnected.last("snapshot")["question"]
    assert_blind(people, stage, *jurors.values(), reconnected)


def test_an_ai_answer_s_provenance_reaches_the_host_the_export_and_the_report_never_the_jury(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=2, jurors=2)
    host, stage, players, jurors = connect_all(app, client, people)
    question = to_answering(host)
    agent, mina = players["Agent"], players["Mina"]

    too_big = {"backend": "replay", "model": None, "settings": {"prompt": "x" * 4000}}
    error = refused(agent, "answer", {"question": question["id"], **answer_args(question), "provenance": too_big})
    assert error["code"] == "invalid" and "provenance" in error["message"] and "4000" in error["message"]
    error = refused(
        agent, "answer", {"question": question["id"], **answer_args(question), "provenance": {"model": "m"}}
    )
    assert error["code"] == "invalid" and "provenance.backend" in error["message"]
    error = refused(mina, "answer", {"question": question["id"], **answer_args(question), "provenance": PROVENANCE})
    assert error["code"] == "not_ai"
    with db_factory() as db:
        assert db.scalar(select(func.count()).select_from(Answer)) == 0  # nothing written by a refusal

    reply = agent.send(
        "answer", {"id": client_id(), "question": question["id"], **answer_args(question), "provenance": PROVENANCE}
    )
    assert reply["ok"], reply
    assert mina.send("answer", {"id": client_id(), "question": question["id"], **answer_args(question, 0)})["ok"]
    shown = host.last("answer")  # the latest: Mina's, without provenance
    assert shown["player"]["name"] == "Mina" and shown["provenance"] is None and shown["entered_by_host"] is False
    agent_rows = [
        m["args"][0] for m in host.seen if m["name"] == "answer" and m["args"][0]["player"]["name"] == "Agent"
    ]
    assert agent_rows[-1]["provenance"] == PROVENANCE and agent_rows[-1]["entered_by_host"] is False
    snapshot_rows = host.fresh_snapshot()["answers"][str(question["id"])]
    assert {row["player"]["name"]: row["provenance"] for row in snapshot_rows} == {"Agent": PROVENANCE, "Mina": None}

    host.host("close_answering")
    host.host("reveal")
    host.host("show_question")
    second = host.last("question")
    host.host("open_answering")
    typed = host.send(
        "host",
        {
            "id": client_id("h"),
            "action": "enter_answer",
            "player": people.player_ids["Agent"],
            **answer_args(second, 2),
        },
    )
    assert typed["ok"], typed
    host.host("close_answering")
    host.host("reveal")
    assert_blind(people, stage, *jurors.values())

    with db_factory() as db:
        rows = {(a.session_question_id, a.player_id): a for a in db.scalars(select(Answer))}
        first = rows[question["id"], people.player_ids["Agent"]]
        assert (first.provenance, first.entered_by_host) == (PROVENANCE, False)
        assert rows[question["id"], people.player_ids["Mina"]].provenance is None

        from vtt.models import VttSession
        from vtt.reports.session_info import ai_programs_info
        from vtt.results.export import export_tables

        session = db.get(VttSession, people.session_id)
        info = ai_programs_info(db, session)
        assert info == {"AI players' programs": "Agent: replay (model qwen2-vl-7b): 1 answer; entered by the host: 1"}
        from analysis.words import report_language

        with report_language("ko"):  # the Korean PDFs' cover
            assert ai_programs_info(db, session) == {
                "AI 참가자의 프로그램": "Agent: replay (모델 qwen2-vl-7b): 답변 1개; 진행자가 입력: 1개"
            }
        answers = export_tables(db, session)["answers.csv"]
    by_player = {(row["player"], row["qid"]): row for row in answers.to_dict("records")}
    exported = by_player["Agent", question["qid"]]
    assert json.loads(exported["provenance"]) == PROVENANCE and exported["entered_by_host"] is False
    entered = by_player["Agent", second["qid"]]
    assert entered["entered_by_host"] is True
    assert json.loads(entered["provenance"]) == {
        "backend": "host",
        "model": None,
        "settings": {"file": None, "source": "typed"},
    }
    assert by_player["Mina", question["qid"]]["provenance"] is None


def test_an_agent_reports_its_status_to_the_host_only_and_a_restart_keeps_it(app, client, db_factory, database_url):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=2)
    host, stage, players, jurors = connect_all(app, client, people)
    agent_id = people.player_ids["Agent"]
    # every AI player is listed, with what its agent and the host answered for it: nothing yet, and no report
    assert host.last("snapshot")["agents"] == {str(agent_id): {"answered": 0, "entered": 0}}

    ready = players["Agent"].send("agent", {"id": client_id("a"), "status": "ready"})
    assert ready["ok"], ready
    report = host.last("agent")
    assert (report["player"], report["status"], report["message"]) == (agent_id, "ready", "")
    assert report["at"].endswith("Z")
    error = refused(players["Mina"], "agent", {"status": "ready"})
    assert error["code"] == "not_ai"
    assert refused(players["Agent"], "agent", {"status": "asleep"})["code"] == "invalid"
    error = refused(players["Agent"], "agent", {"status": "error", "message": "x" * 1001})
    assert error["code"] == "invalid" and "message" in error["message"]

    question = to_answering(host)  # any phase takes a report
    failed = players["Agent"].send(
        "agent", {"id": "report-1", "status": "error", "message": "http backend: connection refused (127.0.0.1:8000)"}
    )
    assert failed["ok"], failed
    assert (
        players["Agent"].send(
            "agent",
            {"id": "report-1", "status": "error", "message": "http backend: connection refused (127.0.0.1:8000)"},
        )["duplicate"]
        is True
    )
    assert host.last("agent")["status"] == "error"
    assert host.fresh_snapshot()["agents"][str(agent_id)]["message"].startswith("http backend")
    assert players["Agent"].last("agent") is None  # a player's own page gets nothing back but the ack
    assert_blind(people, stage, *jurors.values())
    with db_factory() as db:
        logged = db.scalars(select(Event).where(Event.kind == "agent").order_by(Event.id)).all()
        assert [(e.actor, e.payload["status"]) for e in logged] == [
            (f"player:{agent_id}", "ready"),
            (f"player:{agent_id}", "error"),
        ]
        assert db.get(Player, agent_id).details["agent"]["status"] == "error"
    for role in [host, stage, *players.values(), *jurors.values()]:
        role.client.disconnect()
    app.extensions["vtt.hub"].stop()  # the process goes away

    restarted = threaded_app(database_url)
    try:
        host_client = restarted.test_client()
        login(host_client)
        again = Role(socketio, restarted, {"code": people.code, "role": "host"}, flask_client=host_client)
        kept = again.last("snapshot")["agents"]
        assert list(kept) == [str(agent_id)]
        assert kept[str(agent_id)]["status"] == "error"
        assert kept[str(agent_id)]["message"] == "http backend: connection refused (127.0.0.1:8000)"
        agent = Role(socketio, restarted, {"token": people.players["Agent"]})
        assert agent.send("agent", {"id": client_id("a"), "status": "working"})["ok"]
        assert again.last("agent")["status"] == "working"
        assert agent.last("snapshot")["question"]["id"] == question["id"]
    finally:
        restarted.extensions["vtt.hub"].stop()


def test_the_host_enters_an_ai_player_s_answer_only_when_it_fits(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=2, players=FOUR)
    host, stage, players, jurors = connect_all(app, client, people)
    ids = people.player_ids
    host.host("open_lobby")
    host.host("set_participants", round=1, players=[ids["Mina"], ids["Grace"], ids["Agent"]])  # Bot sits out
    host.host("start_round")
    host.host("show_question")
    question = host.last("question")

    def enter(**args) -> dict:
        return host.send("host", {"id": client_id("h"), "action": "enter_answer", **args})

    assert enter(player=ids["Agent"], **answer_args(question))["error"]["code"] == "wrong_phase"  # the clip
    host.host("open_answering")
    assert enter(player=ids["Mina"], **answer_args(question))["error"]["code"] == "not_ai"
    assert enter(player=ids["Bot"], **answer_args(question))["error"]["code"] == "not_playing"
    assert enter(player=999_999, **answer_args(question))["error"]["code"] == "unknown_player"
    assert (
        enter(player=ids["Agent"], question=question["id"] + 1000, **answer_args(question))["error"]["code"]
        == "wrong_question"
    )
    assert enter(player=ids["Agent"], source="telepathy", **answer_args(question))["error"]["code"] == "invalid"
    wrong = {"text": "x"} if question["type"] == "mcq" else {"choice": 1}
    assert enter(player=ids["Agent"], **wrong)["ok"] is False

    key = client_id("h")
    payload = {
        "id": key,
        "action": "enter_answer",
        "player": ids["Agent"],
        "question": question["id"],
        **answer_args(question, 1),
    }
    reply = host.send("host", payload)
    assert reply["ok"] and reply["question"] == question["id"], reply
    assert host.send("host", payload)["duplicate"] is True
    shown = host.last("answer")
    assert shown["player"]["name"] == "Agent" and shown["entered_by_host"] is True
    assert shown["provenance"] == {"backend": "host", "model": None, "settings": {"source": "typed", "file": None}}
    late = players["Agent"].send(
        "answer", {"id": client_id("a"), "question": question["id"], **answer_args(question, 0)}
    )
    assert late["error"]["code"] == "host_answered"  # the agent's late answer does not undo the host's

    host.host("close_answering")  # answers closed, not yet revealed: the host may still enter it
    later = enter(player=ids["Agent"], source="import", file="preds.jsonl", **answer_args(question, 2))
    assert later["ok"], later
    assert host.last("answer")["provenance"]["settings"] == {"source": "import", "file": "preds.jsonl"}
    host.host("reveal")
    assert enter(player=ids["Agent"], **answer_args(question, 3))["error"]["code"] == "wrong_phase"
    revealed = jurors["J1"].last("answers")["answers"]
    assert len(revealed) == 3 and all(set(row) == {"alias", "text", "choice", "answered"} for row in revealed)
    assert_blind(people, stage, *jurors.values())

    with db_factory() as db:
        answer = db.scalar(select(Answer).where(Answer.player_id == ids["Agent"]))
        assert answer.entered_by_host is True
        assert answer.provenance == {
            "backend": "host",
            "model": None,
            "settings": {"source": "import", "file": "preds.jsonl"},
        }
        assert answer.choice_index == (2 if question["type"] == "mcq" else None)
        logged = db.scalars(select(Event).where(Event.kind == "enter_answer").order_by(Event.id)).all()
        assert [(e.actor, e.payload["player"], e.payload["source"]) for e in logged] == [
            ("host", ids["Agent"], None),
            ("host", ids["Agent"], "import"),
        ]


# --- the console: the Agents panel and an answer from a predictions file ------------------------------------


def console_csrf(client, session_id: int) -> str:
    page = client.get(f"/host/sessions/{session_id}/live").get_data(as_text=True)
    return re.search(r'data-csrf="([^"]+)"', page).group(1)


def upload(client, session_id: int, player_id: int, name: str, content: str, token: str, *, as_json=True):
    headers = {"Accept": "application/json"} if as_json else {"Accept": "text/html"}
    return client.post(
        f"/host/sessions/{session_id}/agents/{player_id}/answer",
        headers=headers,
        data={"csrf_token": token, "entry": client_id("e"), "file": (io.BytesIO(content.encode("utf-8")), name)},
        content_type="multipart/form-data",
    )


def written(db_factory) -> tuple[int, int]:
    with db_factory() as db:
        return (db.scalar(select(func.count()).select_from(Answer)), db.scalar(select(func.count()).select_from(Event)))


@pytest.mark.each_database
def test_the_console_has_an_agents_panel_and_takes_an_answer_from_a_predictions_file(app, client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    host, stage, _players, jurors = connect_all(app, client, people)
    sid, agent = people.session_id, people.player_ids["Agent"]
    page = client.get(f"/host/sessions/{sid}/live").get_data(as_text=True)
    assert 'id="agents-card"' in page and f"/host/sessions/{sid}/agents/0/answer" in page
    token = console_csrf(client, sid)

    for move in ("open_lobby", "start_round", "show_question"):
        host.host(move)
    question = host.last("question")
    qid = question["qid"]
    mcq = question["type"] == "mcq"
    good = f"qid,prediction\nother-1,A\n{qid},{'B' if mcq else 'She is embarrassed.'}\n"

    before = written(db_factory)
    early = upload(client, sid, agent, "preds.csv", good, token)  # the clip is playing: not yet
    assert early.status_code == 409 and "answers" in early.json["message"], early.json
    assert written(db_factory) == before
    host.host("open_answering")
    before = written(db_factory)
    missing = upload(client, sid, agent, "preds.csv", "qid,prediction\nother-1,A\nother-2,B\n", token)
    assert missing.status_code == 422 and missing.json["ok"] is False
    assert qid in missing.json["message"] and "preds.csv" in missing.json["message"]
    broken = upload(client, sid, agent, "preds.json", '{"q01": ', token)
    assert broken.status_code == 422 and "preds.json" in broken.json["message"], broken.json
    assert "/tmp" not in broken.json["message"]
    assert upload(client, sid, agent, "preds.txt", good, token).status_code == 422
    human = upload(client, sid, people.player_ids["Mina"], "preds.csv", good, token)
    assert human.status_code == 422 and "Mina" in human.json["message"]
    if mcq:
        nowhere = upload(client, sid, agent, "preds.csv", f"qid,prediction\n{qid},Z\n", token)
        assert nowhere.status_code == 422 and qid in nowhere.json["message"]
    no_token = client.post(
        f"/host/sessions/{sid}/agents/{agent}/answer",
        data={"file": (io.BytesIO(good.encode()), "preds.csv")},
        content_type="multipart/form-data",
    )
    assert no_token.status_code == 400
    assert written(db_factory) == before  # nothing written on any of these

    done = upload(client, sid, agent, "preds.csv", good, token)
    assert done.status_code == 200 and done.json["ok"] is True, done.json
    assert qid in done.json["message"]
    shown = host.last("answer")
    assert shown["entered_by_host"] is True
    assert shown["provenance"] == {
        "backend": "host",
        "model": None,
        "settings": {"source": "import", "file": "preds.csv"},
    }
    with db_factory() as db:
        answer = db.scalar(select(Answer).where(Answer.player_id == agent))
        if mcq:
            assert answer.choice_index == 1
        else:
            assert answer.text == "She is embarrassed."
        event = db.scalars(select(Event).where(Event.kind == "enter_answer")).one()
        assert event.actor == "host" and event.payload["file"] == "preds.csv"

    # without the console's script: a message on the console after the redirect
    jsonl = f'{{"qid": "{qid}", "pred": {0 if mcq else json.dumps("Tired.")}}}\n'
    plain = upload(client, sid, agent, "agent.jsonl", jsonl, token, as_json=False)
    assert plain.status_code == 302 and plain.headers["Location"].endswith(f"/host/sessions/{sid}/live")
    assert "Saved Agent" in client.get(plain.headers["Location"]).get_data(as_text=True)
    assert_blind(people, stage, *jurors.values())


def test_a_predictions_file_gives_an_open_answer_or_an_option_as_vtt_analyze_reads_it():
    import pytest

    from vtt.models import Question, QuestionType
    from vtt.on_behalf.ai_players import ImportProblem, prediction_for

    open_question = Question(qid="q03", text="How is she feeling?", type=QuestionType.OPEN, choices=[])
    assert prediction_for("p.json", b'{"q03": "Mortified."}', open_question) == (None, "Mortified.")
    moviecore = {"ep01_s003.mp4": [{"qid": "q03", "question": "?", "answer": "", "pred": "Panicky."}]}
    assert prediction_for("m.json", json.dumps(moviecore).encode(), open_question) == (None, "Panicky.")
    mcq = Question(qid="7", text="Who?", type=QuestionType.MCQ, choices=["Heeran", "b", "Minho"])
    for given, index in (("Minho", 2), ("minho ", 2), ("A", 0), ("1", 1), ("B", 1)):  # "b" is an option's text
        assert prediction_for("p.csv", f"qid,pred\n7,{given}\n".encode(), mcq)[0] == index, given
    with pytest.raises(ImportProblem) as problem:
        prediction_for("p.jsonl", b'{"qid": "7", "prediction": "Z"}\n', mcq)
    assert problem.value.code == "no_option" and problem.value.values["qid"] == "7"
    with pytest.raises(ImportProblem) as problem:
        prediction_for("p.jsonl", b'{"qid": 7, "prediction": 0}\n{"qid": 7, "prediction": 2}\n', mcq)
    assert problem.value.code == "qid_twice"
    with pytest.raises(ImportProblem) as problem:
        prediction_for("p.csv", b"question,answer\n7,A\n", mcq)
    assert problem.value.code == "unreadable" and "p.csv" in problem.value.values["detail"]
    with pytest.raises(ImportProblem) as problem:
        prediction_for("p.csv", "qid,prediction\n7,A\n".encode("utf-16"), mcq)
    assert problem.value.code == "unreadable"


def test_provenance_entered_answers_and_reports_are_stored_on_both_databases(backend):
    app, db_factory = backend
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    host, _stage, players, _jurors = connect_all(app, app.test_client(), people)
    agent_id = people.player_ids["Agent"]
    assert players["Agent"].send("agent", {"id": client_id("a"), "status": "working", "message": "loading"})["ok"]
    question = to_answering(host)
    reply = players["Agent"].send(
        "answer", {"id": client_id(), "question": question["id"], **answer_args(question), "provenance": PROVENANCE}
    )
    assert reply["ok"], reply
    assert players["Mina"].send("answer", {"id": client_id(), "question": question["id"], **answer_args(question, 0)})[
        "ok"
    ]
    host.host("close_answering")
    assert host.send(
        "host", {"id": client_id("h"), "action": "enter_answer", "player": agent_id, **answer_args(question, 2)}
    )["ok"]
    with db_factory() as db:
        rows = {a.player_id: (a.provenance, a.entered_by_host) for a in db.scalars(select(Answer))}
        assert rows[people.player_ids["Mina"]] == (None, False)
        assert rows[agent_id] == (
            {"backend": "host", "model": None, "settings": {"source": "typed", "file": None}},
            True,
        )
        assert db.scalar(select(func.count()).select_from(Answer).where(Answer.provenance.is_(None))) == 1
        assert db.get(Player, agent_id).details["agent"]["message"] == "loading"
        first = db.scalars(select(Event).where(Event.kind == "answer", Event.actor == f"player:{agent_id}")).one()
        assert first.payload["provenance"] == PROVENANCE  # the event log keeps what the agent sent
