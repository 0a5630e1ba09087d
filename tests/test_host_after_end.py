"""The host after the end: a finished session's open join is closed (the status says so and the
host cannot open it again), and the Agents panel learns what each AI player's agent did (the answers it sent and
those the host entered), so an agent that answered and left is not taken for one that never played."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from tests.support.engine import AI, GUEST, H1, H2, HOST, Run, make_state
from vtt.engine.actions import Actor
from vtt.engine.audiences import host_snapshot
from vtt.engine.rules import host_moves
from vtt.models import Phase

PROVENANCE = {"backend": "predictions", "model": None, "settings": {}}


def stopped_session() -> Run:
    """Open join on (with the door code), round 1's first question answered by the AI's agent, the second entered
    by the host, then "Stop the session now"."""
    run = Run(make_state(open_join=True))
    run.do(HOST, "set_open_join", open=True, door=True)
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.do(Actor("player", AI), "agent", status="ready", message="ready: predictions answers.csv")
    run.question({H1: {"choice": 1}, AI: {"choice": 2, "provenance": PROVENANCE}})
    run.do(Actor("player", AI), "agent", status="answered", message="question q11: a green bicycle")
    run.do(HOST, "show_question")
    run.do(HOST, "open_answering")
    run.do(HOST, "enter_answer", player=AI, text="a hat")  # the agent failed this one
    run.do(Actor("player", H2), "answer", question=run.state.current_question.id, text="a hat")
    run.do(HOST, "finish", force=True)
    assert run.state.phase is Phase.FINISHED
    return run


def test_a_finished_session_s_open_join_is_closed_and_stays_closed():
    """Found: after the finish the console kept "Open juror join" ticked with a door code shown, because every
    status said ``open_join: true`` although the engine refuses every join of a finished session."""
    run = stopped_session()
    statuses = [m for m in run.outcomes[-1].messages if m.event == "status"]
    assert {m.audience for m in statuses} == {"host", "player", "juror", "stage"}
    assert all(m.payload["open_join"] is False and m.payload["phase"] == "finished" for m in statuses)
    assert run.state.open_join is True  # the design's setting is kept (the exports report it); only the door shut
    run.refuse(HOST, "set_open_join", "finished", open=True)  # and the host cannot open it again
    run.refuse(HOST, "set_open_join", "finished", open=False, cap=5)
    run.refuse(GUEST, "join", "finished", nickname="late", door_ok=True)
    snapshot = host_snapshot(run.state, host_moves(run.state))
    assert snapshot["status"]["open_join"] is False and snapshot["status"]["moves"] == []


def test_before_the_finish_open_join_is_the_host_s_to_open_and_close():
    run = Run(make_state(open_join=False))
    run.do(HOST, "set_open_join", open=True)
    assert run.messages("juror", "status")[-1].payload["open_join"] is True
    run.do(HOST, "open_lobby")
    run.do(HOST, "set_open_join", open=False)
    assert run.messages("host", "status")[-1].payload["open_join"] is False


def test_the_agents_panel_counts_what_each_agent_answered_and_what_the_host_entered():
    """Found: after the end the Agents panel said "Nothing plays this AI player yet" and showed the command although
    the agent had answered 14 questions: the console knew the last report only, not what the agent had done."""
    run = stopped_session()
    snapshot = host_snapshot(run.state, host_moves(run.state))
    summary = snapshot["agents"][str(AI)]
    assert summary["answered"] == 1 and summary["entered"] == 1
    assert summary["status"] == "answered" and summary["message"] == "question q11: a green bicycle"
    # every AI player is listed, one whose agent never reported too; human players never are
    assert set(snapshot["agents"]) == {str(AI)}
    # each answer of the AI player tells the host's panel at once: the agent's, then the host's
    counts = [(m.payload["answered"], m.payload["entered"]) for m in run.messages("host", "agent")]
    assert counts == [(0, 0), (1, 0), (1, 0), (1, 1)]  # ready, its answer, answered, the host's entry
    assert all(m.payload["player"] == AI for m in run.messages("host", "agent"))
    assert not [m for m in run.messages() if m.event == "agent" and m.audience != "host"]


def test_an_ai_player_whose_agent_never_reported_is_listed_with_nothing_done():
    run = Run(make_state())
    summary = host_snapshot(run.state, host_moves(run.state))["agents"]
    assert summary == {str(AI): {"answered": 0, "entered": 0}}


# --- the web AI-jury form's messages ----------------------------------------------------------------------------

BAD_FORMS = [  # (url, model, frames): what the host may type in the results page's AI-jury form
    ("ftp://nowhere", "juror-7b", "0"),
    ("127.0.0.1:8000", "juror-7b", "0"),
    ("", "juror-7b", "0"),
    ("http://127.0.0.1:8000/v1", "", "0"),
    ("http://127.0.0.1:8000/v1", "m" * 201, "0"),
    ("http://127.0.0.1:8000/v1", "juror-7b", "33"),
    ("http://127.0.0.1:8000/v1", "juror-7b", "-1"),
    ("http://127.0.0.1:8000/v1", "juror-7b", "four"),
]
GOOD_FORMS = [
    ("http://127.0.0.1:8000/v1", "juror-7b", "0"),
    ("http:https://api.example/v1", "juror-7b", "32"),
    ("https://api.example", "m" * 200, ""),
]


def test_the_ai_jury_form_says_what_is_wrong_in_the_interface_s_language_naming_its_fields(app, db_factory):
    """Found: the form flashed the command line's messages in English in any language ("--frames: from 0 to 32",
    "--judge: 'ftp://nowhere' is not http:URL"), naming options the form does not have."""
    from tests.support.live import make_session
    from tests.support.review import host_client, post

    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    base = f"/host/sessions/{people.session_id}/results"
    host = host_client(app)
    host.get(f"{base}/?lang=ko")
    expected = {
        "ftp://nowhere": "Chat-completions 엔드포인트",
        "127.0.0.1:8000": "Chat-completions 엔드포인트",
        "": "Chat-completions 엔드포인트",
    }
    for url, model, frames in BAD_FORMS:
        assert post(host, f"{base}/ai-jury", url=url, model=model, frames=frames).status_code == 302
        page = host.get(f"{base}/").get_data(as_text=True)
        flashed = re.search(r'<p class="flash flash-error"[^>]*>(.*?)</p>', page, re.S)
        assert flashed, (url, model, frames)
        said = flashed.group(1)
        field = expected.get(url) or ("모델" if len(model) in (0, 201) else "클립당 프레임 수")
        assert "모델이 판정할 수 없습니다" in said and field in said, said
        assert "--" not in said and "http:URL" not in said, said
    english = host_client(app)
    english.get(f"{base}/?lang=en")
    post(english, f"{base}/ai-jury", url="http://127.0.0.1:8000/v1", model="juror-7b", frames="33")
    said = english.get(f"{base}/").get_data(as_text=True)
    assert "Frames per clip: a whole number from 0 to 32." in said and "--frames" not in said


def test_the_form_s_check_and_the_command_line_s_refuse_the_same_settings(app):
    """The form checks its fields in its own words; ``vtt jury ai`` (JurySettings.from_spec) in the options': the two
    must refuse exactly the same values, or a form could start a worker that fails at once."""
    from vtt.juries.ai import JuryError, JurySettings
    from vtt.views.results import ai_jury_form_problem

    with app.test_request_context():
        for url, model, frames in BAD_FORMS + GOOD_FORMS:
            count, problem = ai_jury_form_problem(url, model, frames)
            try:
                JurySettings.from_spec(url, model, frames=count)
                refused = False
            except JuryError:
                refused = True
            assert (problem is not None) == refused, (url, model, frames, problem)


# --- the docs -------------------------------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
NUMBER_WORDS = {2: "twice", 4: "four times", 10: "ten times"}


def test_the_live_session_doc_says_answering_opens_by_itself_when_the_clip_ends_as_the_engine_does():
    """Found: docs/live-session.md did not say that answering opens by itself when the clip has played. The doc's
    figures are the code's: the screening's lead, the ticker's rate, and the run below is the rule it states."""
    from vtt.engine.flow import SCREENING_LEAD
    from vtt.realtime.writer import TICK_SECONDS

    text = " ".join((ROOT / "docs" / "live-session.md").read_text(encoding="utf-8").split())
    assert "answering then opens by itself when the clip has played" in text
    assert f"{SCREENING_LEAD.total_seconds():g} s later in server time" in text
    assert f"{NUMBER_WORDS[round(1 / TICK_SECONDS)]} a second" in text
    assert "With `clip_playback` `device` answering never opens by itself" in text

    # the rule as stated: start (now + the lead) plus the length the console measured; a tick then opens answering
    run = Run(make_state(answer_seconds=30))
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.do(HOST, "show_question")
    run.do(HOST, "play_clip", duration=8, at=run.at(100))
    opens = run.at(100) + SCREENING_LEAD + timedelta(seconds=8)
    assert run.state.deadline == opens
    assert run.do(HOST, "tick", at=opens - timedelta(milliseconds=1)) == []
    run.do(HOST, "tick", at=opens)
    assert run.state.phase is Phase.ANSWERING and run.state.deadline == opens + timedelta(seconds=30)


JUDGE_VALUE = re.compile(r"(?:--judge[ =]+|VTT_JUDGE_URL=)([^\s`'\"]+)")


def test_every_judge_endpoint_written_in_the_docs_is_spelled_alike():
    """Found: docs/cli.md wrote ``--judge http:http://…`` where docs/juries.md wrote ``--judge http://…`` (the
    ``http:`` prefix is the agents' backend spelling; a judge takes the bare URL). Every doc, page and help text now
    writes the bare URL, or the placeholder URL (``--backend http:URL`` of an agent and ``VTT_TRANSCRIBE=http:URL``
    keep their prefix: there it names the backend)."""
    places = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md", *sorted((ROOT / "templates").rglob("*.html"))]
    places += [ROOT / "vtt" / "cli" / "grade.py", ROOT / "vtt" / "cli" / "jury.py"]
    found = []
    for path in places:
        text = path.read_text(encoding="utf-8")
        found += [(path.name, value) for value in JUDGE_VALUE.findall(text)]
    assert len(found) >= 6  # the examples are still there
    wrong = [(name, value) for name, value in found if value != "URL" and not value.startswith(("http://", "https://"))]
    assert wrong == []


def test_the_juries_doc_shows_the_request_the_ai_juror_sends_and_what_it_makes_of_replies():
    """Found: a lab putting its own model behind ``--judge`` had to read the AI juror's code to learn what it is
    sent and what to answer. docs/juries.md now shows one request and replies read and unread, generated by
    vtt.juries.request_example from the code that asks and reads; here a real call sends that request to a fake
    server and reads each reply as the doc says."""
    import asyncio

    import aiohttp

    from tests.support.judge import FakeJudge
    from vtt.juries import request_example as example
    from vtt.juries.ai import Ask, JurySettings, ask_one, load_prompt

    text = (ROOT / "docs" / "juries.md").read_text(encoding="utf-8")
    start, end = text.index(example.BEGIN), text.index(example.END) + len(example.END)
    assert text[start:end] == example.block(), "regenerate: python -m vtt.juries.request_example"
    assert text.index("## Putting your own model behind `--judge`") < start

    replies = iter(example.EXAMPLE_REPLIES)
    players = {"A": 11, "B": 12, "C": 13}

    async def ask_every_reply(url: str) -> list:
        settings = JurySettings.from_spec(url, example.MODEL)
        async with aiohttp.ClientSession() as http:
            return [
                await ask_one(http, None, settings, load_prompt(), Ask(2, example.EXAMPLE_ROUND, players))
                for _ in example.EXAMPLE_REPLIES
            ]

    with FakeJudge(respond=lambda body: next(replies)) as judge:
        said = asyncio.run(ask_every_reply(judge.url))
    assert judge.requests == [example.example_request()] * len(example.EXAMPLE_REPLIES)
    for reply, one in zip(example.EXAMPLE_REPLIES, said, strict=True):
        assert not one.failed and one.reply == reply
        shown = example.outcome(reply)
        if one.verdict is None:
            assert shown == f"unread (stored, no vote; asked again next run): {one.problem}"
        else:
            confidence = "none" if one.verdict.confidence is None else one.verdict.confidence
            assert shown.startswith(f"read: a vote for {one.verdict.alias}, confidence {confidence}")
    assert {one.verdict is None for one in said} == {True, False}  # the doc shows both


def test_the_example_round_has_the_shape_of_a_round_the_live_jury_saw():
    """The doc's round is written by hand in :func:`vtt.engine.audiences.judged_round`'s shape: it must stay that."""
    from vtt.engine.audiences import judged_round
    from vtt.juries.request_example import EXAMPLE_ROUND

    run = Run(make_state())
    run.do(HOST, "open_lobby")
    run.do(HOST, "start_round")
    run.question({H1: {"choice": 1}, AI: {"choice": 2}})
    run.question({H2: {"text": "no idea"}})
    seen = judged_round(run.state, 1)
    assert set(seen) == set(EXAMPLE_ROUND)
    for real, example in zip(seen["questions"], EXAMPLE_ROUND["questions"], strict=True):
        assert set(real) == set(example) and set(real["clip"]) == set(example["clip"])
        assert {frozenset(row) for row in real["answers"]} == {frozenset(row) for row in example["answers"]}
