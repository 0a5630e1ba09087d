"""The judge that suggests grades (vtt.judge) against a local fake chat-completions server: one call per answer and
dimension, replies read as MovieCORE's judge gives them, suggestions stored apart and resumable, failures bounded,
and never a mark on its own."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from tests.judge_helpers import FakeJudge
from tests.review_helpers import host_client, name_grader, open_answers, play_session, post
from vtt.judge.rubric import DIMENSIONS, PROMPTS_FILE, UnreadReply, load_prompts
from vtt.judge.suggest import JudgeError, JudgeSettings, suggest
from vtt.models import RUBRIC_DIMENSIONS, Answer, Event, Grade, GraderMark, JudgeSuggestion
from vtt.results.session_data import export_tables, session_by_code

MODEL = "judge-7b"


@pytest.fixture
def played(app, db_factory):
    return play_session(app, db_factory)


def settings(judge: FakeJudge, **options) -> JudgeSettings:
    return JudgeSettings.from_spec(f"http:{judge.url}", MODEL, **options)


def stored(db_factory) -> dict[tuple[str, str], int | None]:
    """``{(player, dimension): score}`` of every suggestion."""
    from vtt.models import Player

    with db_factory() as db:
        rows = db.execute(
            select(Player.name, JudgeSuggestion.dimension, JudgeSuggestion.score)
            .join(Answer, Answer.id == JudgeSuggestion.answer_id)
            .join(Player, Player.id == Answer.player_id)
        ).all()
    return {(name, dimension): score for name, dimension, score in rows} if rows else {}


def marks_and_grades(db_factory) -> tuple[list, list]:
    with db_factory() as db:
        marks = [(m.answer_id, m.grader, m.correct) for m in db.scalars(select(GraderMark).order_by(GraderMark.id))]
        grades = [(g.answer_id, g.correct, g.accuracy) for g in db.scalars(select(Grade).order_by(Grade.id))]
    return marks, grades


# --- replies ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, score",
    [
        ("{'score': 4}", 4),  # MovieCORE's judge: a Python dictionary string
        ('{"score": 0}', 0),
        ("Here is my evaluation: {'score': 5}", 5),
        ('```json\n{"score": 2}\n```', 2),
        ("<think>{'score': 1} or so</think> {'score': 3}", 3),
        ("{'score': 3.0}", 3),
    ],
)
def test_a_reply_is_read_as_moviecore_judges_reply(reply, score):
    assert load_prompts()["accuracy"].read(reply) == score


@pytest.mark.parametrize(
    "reply, problem",
    [
        ("Four out of five.", "no {'score': N} in the reply"),
        ("{'score': 6}", "outside 0-5"),
        ("{'score': 3.5}", "not a whole number"),
        ("{'score': 'high'}", "not a whole number"),
        ("", "no {'score': N}"),
    ],
)
def test_a_reply_without_a_score_in_range_is_unread(reply, problem):
    with pytest.raises(UnreadReply, match=problem.replace("{", r"\{").replace("}", r"\}")):
        load_prompts()["accuracy"].read(reply)
    with pytest.raises(UnreadReply, match="outside 0-1"):
        load_prompts()["verdict"].read("{'score': 2}")


def test_the_prompts_carry_moviecores_rubric_and_the_three_texts():
    prompts = load_prompts()
    assert list(prompts) == list(DIMENSIONS) == ["verdict", *RUBRIC_DIMENSIONS]
    assert "MovieCORE" in PROMPTS_FILE.read_text()
    assert "- 3: Partially correct, capturing key elements" in prompts["accuracy"].task
    assert "- 0: No evidence or irrelevant support" in prompts["evidence"].task
    system, user = prompts["depth"].messages("Why?", "Because of the rain.", "  it  rained ")
    assert system["role"] == "system" and "{'score': 3}" in system["content"]
    assert "Question: Why?\nReference answer: Because of the rain.\nPlayer's answer: it rained\n" in user["content"]
    assert "Reply only with {'score': N}, N a whole number from 0 to 5." in user["content"]
    assert len({prompt.sha256 for prompt in prompts.values()}) == 6


# --- a run ------------------------------------------------------------------------------------------------------


def test_every_open_answer_is_scored_once_per_dimension_and_a_second_run_sends_nothing(played, db_factory):
    before = marks_and_grades(db_factory)
    with FakeJudge() as judge:
        summary = suggest(db_factory, played.session_id, settings(judge))
        first = judge.asked()
        again = suggest(db_factory, played.session_id, settings(judge))
        assert len(judge.requests) == len(first)  # the second run sent nothing
    players = ("Mina", "Grace", "Agent")
    # 3 players x 2 open questions x 6 dimensions, each asked once
    assert sorted(first) == sorted((p, d) for p in players for d in DIMENSIONS for _question in (1, 2))
    assert (summary.answers, summary.asked, summary.scored, summary.unread, summary.failed) == (6, 36, 36, 0, 0)
    assert (again.asked, again.already) == (0, 36)
    scores = stored(db_factory)
    assert scores[("Mina", "verdict")] == 1 and scores[("Mina", "accuracy")] == 4
    assert scores[("Grace", "verdict")] == 0 and scores[("Grace", "accuracy")] == 1  # from a ```json fence
    assert scores[("Agent", "accuracy")] == 2  # the score outside <think>
    assert scores[("Mina", "coherence")] == 3
    # every request: the model, temperature 0, the question, its reference answer and the player's answer
    body = judge.requests[0]
    assert body["model"] == MODEL and body["temperature"] == 0.0
    with db_factory() as db:
        row = db.scalars(select(JudgeSuggestion)).first()
        assert row.model == MODEL and row.endpoint == judge.url + "/chat/completions" and row.temperature == 0.0
        assert row.prompt_sha256 == load_prompts()[row.dimension].sha256 and row.reply and row.asked_at
        run = db.scalars(select(Event).where(Event.kind == "judge.run")).all()
        assert [event.payload["scored"] for event in run] == [36, 0]
    # nothing a grader or the reports read changed
    assert marks_and_grades(db_factory) == before


def test_a_new_model_or_prompt_asks_again_and_chosen_dimensions_only(played, db_factory, monkeypatch):
    with FakeJudge() as judge:
        suggest(db_factory, played.session_id, settings(judge), ["verdict"])
        assert len(judge.requests) == 6
        other = JudgeSettings.from_spec(f"http:{judge.url}", "another-model")
        suggest(db_factory, played.session_id, other, ["verdict"])
        assert len(judge.requests) == 12
        # an edited prompt is a new prompt: asked again
        from vtt.judge import rubric

        edited = {name: prompt for name, prompt in rubric.load_prompts().items()}
        edited["verdict"] = type(edited["verdict"])(**{**edited["verdict"].__dict__, "task": "Correct? 1 or 0."})
        monkeypatch.setattr("vtt.judge.suggest.load_prompts", lambda: edited)
        suggest(db_factory, played.session_id, settings(judge), ["verdict"])
        assert len(judge.requests) == 18
    with pytest.raises(JudgeError, match="--dimensions: depht"):
        suggest(db_factory, played.session_id, settings(judge), ["depht"])


def test_malformed_replies_are_kept_without_a_score_and_asked_again(played, db_factory):
    replies = {"Grace": {"depth": "Quite deep, I would say.", "evidence": "{'score': 9}"}}
    with FakeJudge(replies) as judge:
        summary = suggest(db_factory, played.session_id, settings(judge))
        assert (summary.scored, summary.unread, summary.failed) == (32, 4, 0)
        assert any("no {'score': N} in the reply" in problem for problem in summary.problems)
        assert stored(db_factory)[("Grace", "depth")] is None
        with db_factory() as db:
            kept = db.scalars(select(JudgeSuggestion).where(JudgeSuggestion.score.is_(None))).all()
            assert sorted(row.reply for row in kept) == ["Quite deep, I would say."] * 2 + ["{'score': 9}"] * 2
        judge.replies = {}  # the judge now answers well
        again = suggest(db_factory, played.session_id, settings(judge))
        assert (again.asked, again.scored) == (4, 4)
        assert stored(db_factory)[("Grace", "depth")] == 3


def test_a_slow_judge_times_out_per_call_and_the_rest_is_stored(played, db_factory):
    with FakeJudge({"Agent": {"verdict": ("sleep", 3)}}) as judge:
        summary = suggest(db_factory, played.session_id, settings(judge, timeout=1, concurrency=2))
    assert (summary.scored, summary.failed) == (34, 2)
    assert any("gave no reply within 1 s" in problem for problem in summary.problems)
    assert ("Agent", "verdict") not in stored(db_factory)


def test_a_failing_judge_stops_the_run_after_a_few_failures_and_stores_nothing(played, db_factory):
    down = {player: {d: ("status", 503) for d in DIMENSIONS} for player in ("Mina", "Grace", "Agent")}
    with FakeJudge(down) as judge:
        summary = suggest(db_factory, played.session_id, settings(judge, concurrency=1))
    assert summary.failed == summary.asked == 5 and summary.scored == 0
    assert "5 calls in a row failed" in summary.stopped and "HTTP 503" in summary.stopped
    assert stored(db_factory) == {}


def test_the_cli_runs_it_with_a_progress_bar_and_says_what_it_did(played, db_factory, database_url, monkeypatch):
    from vtt.cli.main import main

    monkeypatch.setenv("DATABASE_URL", database_url)
    runner = CliRunner()
    with FakeJudge() as judge:
        done = runner.invoke(main, ["grade", "suggest", played.code, "--judge", f"http:{judge.url}", "--model", MODEL])
        assert done.exit_code == 0, done.output
        assert "6 open answers: 36 calls made, 36 scored" in done.output
        assert f"{MODEL}: 36 calls" in done.stderr  # the progress bar's label
        again = runner.invoke(
            main, ["grade", "suggest", played.code, "--judge", f"http:{judge.url}", "--model", MODEL, "--json"]
        )
        assert json.loads(again.stdout)["already"] == 36 and len(judge.requests) == 36
    refused = runner.invoke(main, ["grade", "suggest", played.code, "--judge", "ftp://x", "--model", MODEL])
    assert refused.exit_code == 1 and "--judge: 'ftp://x' is not http:URL" in refused.stderr
    with FakeJudge({p: {d: ("status", 500) for d in DIMENSIONS} for p in ("Mina", "Grace", "Agent")}) as judge:
        down = runner.invoke(
            main,
            ["grade", "suggest", played.code, "--judge", f"http:{judge.url}", "--model", "m2", "--dimensions", "depth"],
        )
    assert down.exit_code == 1 and "the run stopped: 5 calls in a row failed" in down.stderr


# --- the grading page -------------------------------------------------------------------------------------------


def test_a_grader_takes_a_suggestion_as_their_own_mark_and_the_export_keeps_both(app, played, db_factory):
    with FakeJudge() as judge:
        suggest(db_factory, played.session_id, settings(judge))
    answers = open_answers(db_factory, played)
    base = f"/host/sessions/{played.session_id}/grading"
    ana = host_client(app)
    name_grader(ana, base, "Ana")
    page = ana.get(f"{base}/?order=doubt").get_data(as_text=True)
    assert MODEL in page and "Take the judge's mark" in page
    # Agent's verdict (correct) goes against its accuracy (2): the least sure, listed first
    first_answer = page.index(f'id="answer-{answers[("Agent", "q05")]}"')
    assert first_answer < page.index(f'id="answer-{answers[("Mina", "q05")]}"')
    response = post(ana, f"{base}/take", answer_id=answers[("Mina", "q05")], model=MODEL)
    assert response.status_code == 302
    with db_factory() as db:
        mark = db.scalar(select(GraderMark).where(GraderMark.answer_id == answers[("Mina", "q05")]))
        assert (mark.grader, mark.correct, mark.accuracy, mark.depth) == ("Ana", True, 4, 3)
        assert db.get(Answer, answers[("Mina", "q05")]).grade is None  # a grader's mark, not yet the final one
        event = db.scalars(select(Event).where(Event.kind == "grade.mark")).one()
        assert event.payload["source"] == f"judge:{MODEL}"
        tables = export_tables(db, session_by_code(db, played.code))
    suggestions = tables["judge_suggestions.csv"]
    assert len(suggestions) == 36 and set(suggestions["model"]) == {MODEL}
    assert {"answer_id", "dimension", "score", "prompt_sha256", "temperature", "asked_at", "reply"} <= set(suggestions)
    marks = tables["grader_marks.csv"]
    assert list(marks["grader"]) == ["Ana"] and list(marks["accuracy"]) == [4]


# --- agreement --------------------------------------------------------------------------------------------------

# Ana's and Ben's marks of tests/test_grading.py; the judge (WELL_FORMED) says Mina and Agent correct, Grace not:
# in the order Mina q05, Grace q05, Agent q05, Mina q11, Grace q11, Agent q11
#   judge 1 0 1 1 0 1 | Ana 1 0 1 1 1 0 | Ben 1 0 0 1 0 0
# Ana: p_o = 4/6, p_e = (4/6)(4/6) + (2/6)(2/6) = 5/9, kappa = (2/3 - 5/9) / (4/9) = 0.25
# Ben: p_o = 4/6, p_e = (2/6)(4/6) + (4/6)(2/6) = 4/9, kappa = (2/3 - 4/9) / (5/9) = 0.4
# Final marks where both agree (Mina q05 1, Grace q05 0, Mina q11 1, Agent q11 0), judge 1 0 1 1:
#   p_o = 3/4, p_e = (2/4)(3/4) + (2/4)(1/4) = 1/2, kappa = 0.5
ANA_AND_BEN = {
    "Ana": {("Mina", "q05"): 1, ("Grace", "q05"): 0, ("Agent", "q05"): 1, ("Mina", "q11"): 1, ("Grace", "q11"): 1},
    "Ben": {("Mina", "q05"): 1, ("Grace", "q05"): 0, ("Agent", "q05"): 0, ("Mina", "q11"): 1, ("Grace", "q11"): 0},
}


def test_the_judges_agreement_with_each_grader_and_the_final_marks(app, played, db_factory):
    from vtt.judge.agreement import FINAL, judge_agreement_of

    answers = open_answers(db_factory, played)
    base = f"/host/sessions/{played.session_id}/grading"
    for grader, marks in ANA_AND_BEN.items():
        client = host_client(app)
        name_grader(client, base, grader)
        for key, correct in {**marks, ("Agent", "q11"): 0}.items():
            accuracy = {"Ana": 4, "Ben": 3}[grader] if correct else 1  # the judge: 4, 1, 2 for Mina, Grace, Agent
            post(client, f"{base}/mark", answer_id=answers[key], correct=str(correct), accuracy=str(accuracy))
    post(client, f"{base}/settle")
    with FakeJudge() as judge:
        suggest(db_factory, played.session_id, settings(judge))
    with db_factory() as db:
        found = judge_agreement_of(db, session_by_code(db, played.code))
    rows = {(row.rater, row.measure): row for row in found.table.itertuples(index=False)}
    assert set(found.table["model"]) == {MODEL}
    assert list(dict.fromkeys(found.table["rater"])) == ["Ana", "Ben", FINAL]
    assert rows[("Ana", "correct")].items == 6 and rows[("Ana", "correct")].kappa == pytest.approx(0.25)
    assert rows[("Ben", "correct")].kappa == pytest.approx(0.4)
    assert rows[(FINAL, "correct")].items == 4 and rows[(FINAL, "correct")].kappa == pytest.approx(0.5)
    # accuracy, judge 4 1 2 4 1 2 against Ana 4 1 4 4 4 1: the ranks agree in part
    assert rows[("Ana", "accuracy")].items == 6 and -1 < rows[("Ana", "accuracy")].spearman < 1
    assert rows[("Ana", "depth")].items == 0 and rows[("Ana", "depth")].reason == "no_items"
    matrix = found.confusions[(MODEL, "Ana")]
    assert matrix.loc[True, True] == 3 and matrix.loc[True, False] == 1
    assert matrix.loc[False, True] == 1 and matrix.loc[False, False] == 1


def run_of(app, db_factory, people):
    """The grading page's judge run of the session, if one was started."""
    from vtt.models import VttSession
    from vtt.views.grading import judge_run

    with app.app_context(), db_factory() as db:
        return judge_run(db.get(VttSession, people.session_id))


def test_the_grading_pages_button_runs_the_judge_in_a_worker_process(app, played, db_factory):
    from tests.waiting import wait_until

    base = f"/host/sessions/{played.session_id}/grading"
    ana = host_client(app)
    name_grader(ana, base, "Ana")
    assert "judge-unset" in ana.get(f"{base}/").get_data(as_text=True)
    refused = post(ana, f"{base}/judge")
    assert refused.status_code == 302 and run_of(app, db_factory, played) is None
    with FakeJudge() as judge:
        app.config.update(JUDGE_URL=f"http:{judge.url}", JUDGE_MODEL=MODEL)
        page = ana.get(f"{base}/").get_data(as_text=True)
        assert 'id="ask-judge"' in page and MODEL in page
        assert post(ana, f"{base}/judge").status_code == 302
        run = run_of(app, db_factory, played)
        assert "judge-running" in ana.get(f"{base}/").get_data(as_text=True) or run.poll() is not None
        wait_until(lambda: run.poll() is not None, timeout=60, message="the judge's worker to finish")
    assert run.returncode == 0
    assert len(judge.requests) == 36 and len(stored(db_factory)) == 18  # (player, dimension) pairs
    page = ana.get(f"{base}/").get_data(as_text=True)
    assert 'id="judge-last-run"' in page and "36 scored" in page
    assert page.count('class="suggestion"') == 6  # a judge's row under each open answer


def test_a_judge_run_that_cannot_start_says_why_on_the_grading_page(app, played, db_factory):
    from tests.waiting import wait_until

    base = f"/host/sessions/{played.session_id}/grading"
    ana = host_client(app)
    name_grader(ana, base, "Ana")
    app.config.update(JUDGE_URL="ftp://judge.example", JUDGE_MODEL=MODEL)
    assert post(ana, f"{base}/judge").status_code == 302
    run = run_of(app, db_factory, played)
    wait_until(lambda: run.poll() is not None, timeout=60, message="the judge's worker to end")
    assert run.returncode == 1
    page = ana.get(f"{base}/").get_data(as_text=True)
    assert 'id="judge-failure"' in page and "is not http:URL" in page
