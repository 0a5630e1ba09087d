"""No model reply can crash a run: the AI jury (``vtt jury ai``), the judge (``vtt grade suggest``) and the AI
players' chat-completions backend read what a model sends with one strict JSON reader (vtt.protocol.strict_json),
against a local fake chat-completions server.

Found before: a confidence or score of ``NaN``, ``Infinity`` or ``1e999`` raised ValueError or OverflowError out of
the reading (juries/ai.py ``_confidence``, judge/rubric.py ``Prompt.read``), and a reply or an HTTP body nested 5,000
deep raised RecursionError (juries/ai.py's ``raw_decode``, agents/backends.py's ``json.loads``): the run ended with a
traceback, the reply was not stored and no summary was written.  ``vtt jury ai`` said "2 asked, 0 read ... 2 failed"
and exited 0.  Two runs of one model on one session at once both asked every round.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from datetime import timedelta

import pytest
from sqlalchemy import select

from tests.support.judge import MODEL as JUDGE_MODEL
from tests.support.judge import FakeJudge
from tests.support.judge import settings as judge_settings
from tests.test_ai_jury import aliases, finished, naming, replies, round_of, settings_of
from vtt.agents.backends import Asked, BackendError, HttpBackend, Options, Services
from vtt.judge.rubric import load_prompts
from vtt.judge.suggest import suggest
from vtt.juries.ai import judge_session, read_reply
from vtt.model_calls.replies import UnreadReply
from vtt.models import Event, JudgeSuggestion, Juror, JurorClaim, JurorReply, utcnow
from vtt.protocol.strict_json import MAX_DEPTH, JsonRefused, decode_at, loads

DEEP = 5000
DEEP_LIST = "[" * DEEP + "]" * DEEP


def deep_body(content: str) -> str:
    """A chat completion whose body also carries a value nested DEEP levels deep."""
    return '{"choices": [{"message": {"content": ' + json.dumps(content) + '}}], "usage": ' + DEEP_LIST + "}"


def nan_body(content: str, constant: str = "NaN") -> str:
    return '{"choices": [{"message": {"content": ' + json.dumps(content) + '}}], "usage": {"x": ' + constant + "}}"


# --- the strict reader ----------------------------------------------------------------------------------------------

REFUSED = [
    ('{"a": NaN}', "NaN"),
    ('{"a": Infinity}', "Infinity"),
    ('{"a": -Infinity}', "-Infinity"),
    ('{"a": 1e999}', "1e999"),
    ('{"a": -1e999}', "-1e999"),
    ('{"a": ' + DEEP_LIST + "}", f"nested more than {MAX_DEPTH} levels deep"),
    ("{" * DEEP, f"nested more than {MAX_DEPTH} levels deep"),
    ('{"a": "' + "x" * 200 + '"}', "longer than 100 characters"),
]


@pytest.mark.parametrize("text, problem", REFUSED, ids=[problem.split()[0] for _text, problem in REFUSED])
def test_the_strict_reader_refuses_what_json_should_not_carry(text, problem):
    with pytest.raises(JsonRefused, match=problem.replace("+", r"\+")):
        loads(text, **({"max_chars": 100} if "longer than" in problem else {}))
    if "longer than" not in problem:
        with pytest.raises(JsonRefused, match=problem.replace("+", r"\+")):
            decode_at("well: " + text, 6)
    assert isinstance(JsonRefused("x"), ValueError)


def test_the_strict_reader_reads_json_as_json_does():
    text = '{"a": [1, 2.5, -3e2, {"b": null, "c": "NaN \\" [[["}], "d": true}'
    assert loads(text) == json.loads(text)
    assert decode_at("prose " + text + " tail", 6) == (json.loads(text), 6 + len(text))
    nested = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert loads(nested) == json.loads(nested)
    with pytest.raises(ValueError):
        loads('{"a": }')


# --- the AI jury ----------------------------------------------------------------------------------------------------

IN_THE_REPLY = {
    "NaN": ('{"alias": "A", "confidence": NaN, "reason": "x"}', "NaN"),
    "Infinity": ('{"alias": "A", "confidence": Infinity}', "Infinity"),
    "-Infinity": ('{"alias": "A", "confidence": -Infinity}', "-Infinity"),
    "1e999": ('{"alias": "A", "confidence": 1e999}', "1e999"),
    "deep": ('{"alias": "A", "reason": ' + DEEP_LIST + "}", "nested more than"),
}


@pytest.mark.parametrize("case", sorted(IN_THE_REPLY))
def test_a_jurors_reply_with_a_number_json_does_not_allow_or_nested_deep_is_unread_with_the_reason(case):
    reply, problem = IN_THE_REPLY[case]
    with pytest.raises(UnreadReply, match=problem.replace("+", r"\+")):
        read_reply(reply, ["A", "B", "C"])
    verdict = read_reply('{"alias": "A", "confidence": "NaN"}', ["A", "B", "C"])  # a text: no confidence
    assert (verdict.alias, verdict.confidence) == ("A", None)
    assert read_reply('{"alias": "B", "confidence": "1e999"}', ["A", "B"]).confidence is None


AI_JURY_REPLIES = {
    **{f"reply {name}": (reply, problem) for name, (reply, problem) in IN_THE_REPLY.items()},
    "body NaN": (("body", nan_body('{"alias": "A"}')), "NaN"),
    "body Infinity": (("body", nan_body('{"alias": "A"}', "Infinity")), "Infinity"),
    "body 1e999": (("body", nan_body('{"alias": "A"}', "1e999")), "1e999"),
    "body deep": (("body", deep_body('{"alias": "A"}')), "nested more than"),
}


@pytest.mark.parametrize("case", sorted(AI_JURY_REPLIES))
def test_an_ai_jury_run_stores_such_replies_unread_with_their_provenance(app, db_factory, case):
    said, problem = AI_JURY_REPLIES[case]
    people = finished(app, db_factory)
    with FakeJudge(respond=lambda body: said) as judge:
        summary = judge_session(db_factory, people.session_id, settings_of(judge))
    assert (summary.asked, summary.read, summary.unread, summary.failed) == (2, 0, 2, 0)
    assert len(summary.problems) == 2 and all(problem in line for line in summary.problems)
    rows = replies(db_factory, people.session_id)
    assert sorted((r.round, r.read) for r in rows) == [(1, False), (2, False)]
    assert all(r.reply and r.endpoint == judge.url + "/chat/completions" and r.prompt_sha256 for r in rows)
    with db_factory() as db:
        run = db.scalar(select(Event).where(Event.kind == "jury.ai.run"))
        assert run is not None and run.payload["unread"] == 2  # the summary was written
    # the next run asks them again, and a model that now answers well is read
    dealt = aliases(db_factory, people.session_id)
    with FakeJudge(respond=naming({n: dealt[n]["Quibbletron"] for n in dealt})) as judge:
        again = judge_session(db_factory, people.session_id, settings_of(judge))
    assert (again.asked, again.read) == (2, 2)


# --- the judge ------------------------------------------------------------------------------------------------------

JUDGE_REPLIES = {
    "json NaN": ('{"score": NaN}', "NaN"),
    "json Infinity": ('{"score": Infinity}', "Infinity"),
    "json -Infinity": ('{"score": -Infinity}', "-Infinity"),
    "json 1e999": ('{"score": 1e999}', "1e999"),
    "python 1e999": ("{'score': 1e999}", "inf"),
    "python -1e999": ("{'score': -1e999}", "-inf"),
    "deep": ('{"score": ' + DEEP_LIST + "}", "nested"),
    "body NaN": (("body", nan_body("{'score': 3}")), "NaN"),
    "body 1e999": (("body", nan_body("{'score': 3}", "-1e999")), "-1e999"),
    "body deep": (("body", deep_body("{'score': 3}")), "nested more than"),
}


@pytest.mark.parametrize("case", sorted(JUDGE_REPLIES))
def test_a_judge_run_stores_such_replies_unread_with_the_reason(played_for_judge, db_factory, case):
    said, problem = JUDGE_REPLIES[case]
    if not isinstance(said, tuple):
        with pytest.raises(UnreadReply, match=problem):
            load_prompts()["accuracy"].read(said)
    replies_by_player = {"Grace": {"accuracy": said}}
    with FakeJudge(replies_by_player) as judge:
        summary = suggest(db_factory, played_for_judge.session_id, judge_settings(judge), ["verdict", "accuracy"])
    assert (summary.asked, summary.scored, summary.unread, summary.failed) == (12, 10, 2, 0)
    assert len(summary.problems) == 2 and all(problem in line for line in summary.problems)
    with db_factory() as db:
        kept = db.scalars(select(JudgeSuggestion).where(JudgeSuggestion.score.is_(None))).all()
        assert [(row.dimension, row.model) for row in kept] == [("accuracy", JUDGE_MODEL)] * 2
        assert all(row.reply and row.endpoint == judge.url + "/chat/completions" for row in kept)
        assert db.scalar(select(Event).where(Event.kind == "judge.run")).payload["unread"] == 2


@pytest.fixture
def played_for_judge(app, db_factory):
    from tests.support.review import play_session

    return play_session(app, db_factory)


# --- the AI players' backend ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, problem",
    [
        (nan_body("B"), "NaN"),
        (nan_body("B", "Infinity"), "Infinity"),
        (nan_body("B", "-Infinity"), "-Infinity"),
        (nan_body("B", "1e999"), "1e999"),
        (deep_body("B"), "nested more than"),
    ],
    ids=["NaN", "Infinity", "-Infinity", "1e999", "deep"],
)
def test_the_agents_backend_says_why_it_cannot_read_such_a_body(body, problem):
    from tests.test_agent_backends import question

    async def ask(url: str):
        import aiohttp

        backend = HttpBackend("http:x", url, Options(model="m"))
        async with aiohttp.ClientSession() as http:
            backend.attach(Services(http=http))
            return await backend.answer(Asked(question(), "http://127.0.0.1:5000", timeout=10))

    with FakeJudge(respond=lambda _body: ("body", body)) as judge:
        with pytest.raises(BackendError, match=problem) as raised:
            asyncio.run(ask(judge.url))
        assert judge.url.split("/v1")[0] in str(raised.value)
        assert asyncio.run(ask_well(judge, ask)).choice == 1  # the same endpoint answering well is read


@pytest.mark.parametrize(
    "content",
    ['{"answer": NaN}', '{"answer": 1e999}', DEEP_LIST, '{"a": ' * DEEP],
    ids=["NaN", "1e999", "deep", "open"],
)
def test_the_agents_backend_reads_such_a_reply_as_text_without_crashing(content):
    """A player's reply is text: an mcq reply that names no option is an error for the host, an open one a text."""
    from tests.test_agent_backends import question

    async def ask(url: str, kind: str):
        import aiohttp

        backend = HttpBackend("http:x", url, Options(model="m"))
        async with aiohttp.ClientSession() as http:
            backend.attach(Services(http=http))
            return await backend.answer(Asked(question(kind), "http://127.0.0.1:5000", timeout=10))

    with FakeJudge(respond=lambda _body: content) as judge:
        with pytest.raises(BackendError, match="names no option"):
            asyncio.run(ask(judge.url, "mcq"))
        assert asyncio.run(ask(judge.url, "open")).text == content[:4000]


async def ask_well(judge, ask):
    judge.respond = lambda _body: "B"
    return await ask(judge.url)


# --- the exit status ------------------------------------------------------------------------------------------------


def test_vtt_jury_ai_exits_non_zero_when_calls_failed_and_no_round_was_read(app, db_factory, run):
    people = finished(app, db_factory)
    with FakeJudge(respond=lambda body: ("status", 503)) as judge:
        down = run("jury", "ai", people.code, "--judge", f"http:{judge.url}", "--model", "m")
    assert down.exit_code == 1, down.output
    assert "2 asked, 0 read, 0 unread" in down.output and "2 failed" in down.output
    assert "no round could be read: 2 calls failed" in down.output and "HTTP 503" in down.output
    with FakeJudge(respond=lambda body: "no alias at all") as judge:  # answered, but unread: the run did its work
        unread = run("jury", "ai", people.code, "--judge", f"http:{judge.url}", "--model", "m")
    assert unread.exit_code == 0 and "2 unread" in unread.output
    dealt = aliases(db_factory, people.session_id)
    half = {1: ("status", 503), 2: json.dumps({"alias": dealt[2]["Quibbletron"]})}
    with FakeJudge(respond=lambda body: half[round_of(body)["round"]]) as judge:  # one read: the run did something
        some = run("jury", "ai", people.code, "--judge", f"http:{judge.url}", "--model", "m2")
    assert some.exit_code == 0 and "1 read" in some.output and "1 failed" in some.output


def test_vtt_grade_suggest_exits_non_zero_when_calls_failed_and_nothing_was_scored(played_for_judge, run):
    down = {"Mina": {"verdict": ("status", 500)}, "Grace": {"verdict": "?"}, "Agent": {"verdict": "?"}}
    with FakeJudge(down) as judge:
        done = run(
            "grade", "suggest", played_for_judge.code, "--judge", f"http:{judge.url}", "--model", "m",
            "--dimensions", "verdict", "--concurrency", "1",
        )  # fmt: skip
    assert done.exit_code == 1, done.output
    assert "6 calls made, 0 scored, 4 replies without a score, 2 failed" in done.output
    assert "nothing could be scored: 2 calls failed" in done.output and "HTTP 500" in done.output


# --- two runs at once -----------------------------------------------------------------------------------------------


def slow_naming(db_factory, session_id: int, seconds: float = 0.6):
    dealt = aliases(db_factory, session_id)
    respond = naming({n: dealt[n]["Quibbletron"] for n in dealt})

    def slowly(body: dict) -> str:
        time.sleep(seconds)  # both runs are under way before either has stored a reply
        return respond(body)

    return slowly


def test_two_runs_of_one_model_at_once_never_ask_a_round_twice(backend):
    app, db_factory = backend
    people = finished(app, db_factory)
    summaries, errors = [], []
    with FakeJudge(respond=slow_naming(db_factory, people.session_id)) as judge:
        start = threading.Barrier(2)

        def one_run() -> None:
            start.wait()
            try:
                summaries.append(judge_session(db_factory, people.session_id, settings_of(judge, concurrency=2)))
            except Exception as error:
                errors.append(error)

        runs = [threading.Thread(target=one_run) for _ in range(2)]
        for thread in runs:
            thread.start()
        for thread in runs:
            thread.join(60)
    assert errors == []
    asked = sorted(round_of(body)["round"] for body in judge.requests)
    assert asked == [1, 2], f"the rounds asked: {asked}"
    assert sorted(s.asked for s in summaries) in ([0, 2], [1, 1])
    assert sum(s.asked + s.busy + s.skipped for s in summaries) == 4
    with db_factory() as db:
        jurors = db.scalars(select(Juror).where(Juror.session_id == people.session_id, Juror.model.is_not(None)))
        assert [juror.label for juror in jurors] == [f"AI {settings_of(judge).model}"]
        assert db.scalars(select(JurorClaim)).all() == []  # every claim let go
        assert sorted(db.scalars(select(JurorReply.round))) == [1, 2]


def test_a_round_another_run_is_asking_is_left_to_it_and_a_crashed_runs_claim_lapses(backend):
    from vtt.juries.ai import ai_juror

    app, db_factory = backend
    people = finished(app, db_factory)
    with FakeJudge(respond=slow_naming(db_factory, people.session_id, 0)) as judge:
        settings = settings_of(judge)
        with db_factory() as db:
            juror = ai_juror(db, people.session_id, settings.model, [1, 2])
            now = utcnow()
            db.add(JurorClaim(session_id=people.session_id, juror_id=juror.id, round=1, run="other", expires_at=now))
            db.add(
                JurorClaim(
                    session_id=people.session_id,
                    juror_id=juror.id,
                    round=2,
                    run="alive",
                    expires_at=now + timedelta(minutes=5),
                )
            )
            db.commit()
        summary = judge_session(db_factory, people.session_id, settings)
        assert [round_of(body)["round"] for body in judge.requests] == [1]  # round 1's claim had lapsed
        assert (summary.asked, summary.read, summary.busy) == (1, 1, 1)
        with db_factory() as db:
            assert [(c.round, c.run) for c in db.scalars(select(JurorClaim))] == [(2, "alive")]


def test_the_results_page_says_why_a_run_read_nothing(app, db_factory):
    """Found before: the AI jurors' card said "2 rounds asked, 0 read, 0 unread, 2 failed" and nothing of why."""
    from tests.support.review import host_client

    people = finished(app, db_factory)
    with FakeJudge(respond=lambda body: ("status", 503)) as judge:
        summary = judge_session(db_factory, people.session_id, settings_of(judge))
    assert summary.nothing_read and "HTTP 503" in summary.nothing_read
    page = host_client(app).get(f"/host/sessions/{people.session_id}/results/").get_data(as_text=True)
    assert "No round could be read:</strong> round 1: " in page or "No round could be read:</strong> round 2: " in page
    assert "answered HTTP 503" in page


def test_two_processes_of_one_model_at_once_never_ask_a_round_twice(backend, migrated_database_url):
    """The same as two threads, as two `vtt jury ai` commands started together (each its own engine)."""
    import os
    import subprocess
    import sys

    from tests.support.paths import ROOT

    app, db_factory = backend
    people = finished(app, db_factory)
    with FakeJudge(respond=slow_naming(db_factory, people.session_id, 1.0)) as judge:
        command = [sys.executable, "-m", "vtt.cli", "jury", "ai", people.code, "--judge", f"http:{judge.url}"]
        command += ["--model", "m", "--json"]
        environment = {**os.environ, "DATABASE_URL": migrated_database_url, "PYTHONPATH": str(ROOT)}
        runs = [
            subprocess.Popen(
                command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for _ in range(2)
        ]
        outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    summaries = [json.loads(out.strip().splitlines()[-1]) for out, _err in outputs]
    assert sorted(round_of(body)["round"] for body in judge.requests) == [1, 2]
    assert sum(s["asked"] for s in summaries) == 2 and sum(s["read"] for s in summaries) == 2
    with db_factory() as db:
        assert sorted(db.scalars(select(JurorReply.round))) == [1, 2] and db.scalars(select(JurorClaim)).all() == []


def test_a_run_ended_by_an_error_lets_go_of_its_claims(app, db_factory):
    people = finished(app, db_factory)

    def broken(_said) -> None:
        raise RuntimeError("the progress bar broke")

    with FakeJudge(respond=slow_naming(db_factory, people.session_id, 0)) as judge:
        with pytest.raises(RuntimeError, match="the progress bar broke"):
            judge_session(db_factory, people.session_id, settings_of(judge, concurrency=1), progress=broken)
        with db_factory() as db:
            assert db.scalars(select(JurorClaim)).all() == []
        again = judge_session(db_factory, people.session_id, settings_of(judge))
    assert again.busy == 0 and again.read + again.skipped == 2
