"""The grading view over HTTP: two graders' marks kept apart, their kappa, final marks, and what reports then read."""

from __future__ import annotations

import io
import re
import threading
import zipfile

import pandas as pd
import pytest
from sqlalchemy import func, select

from tests.support.apps import form_token, login
from tests.support.review import ANA, BEN, host_client, name_grader, open_answers, play_session, post
from vtt.models import Answer, Event, Grade, GraderMark, VttSession
from vtt.results.tables import session_tables


@pytest.fixture
def played(app, db_factory):
    return play_session(app, db_factory)


@pytest.mark.each_database
def test_two_graders_kappa_and_the_final_mark_the_reports_use(app, played, db_factory):
    answers = open_answers(db_factory, played)
    assert set(answers) == set(ANA)
    base = f"/host/sessions/{played.session_id}/grading"
    ana = host_client(app)
    ben = host_client(app)
    name_grader(ana, base, "Ana")
    name_grader(ben, base, "  Ben ")
    for client, marks in ((ana, ANA), (ben, BEN)):
        for key, correct in marks.items():
            extra = {"depth": "4", "coherence": "5"} if client is ana and key == ("Mina", "q05") else {}
            response = post(client, f"{base}/mark", answer_id=answers[key], correct=str(correct), **extra)
            assert response.status_code == 302 and response.headers["Location"].endswith(f"#answer-{answers[key]}")
    # each grader's marks are kept apart, under their own name
    with db_factory() as db:
        kept = {(m.grader, m.answer_id): m.correct for m in db.scalars(select(GraderMark))}
        assert kept == {
            **{("Ana", answers[k]): bool(v) for k, v in ANA.items()},
            **{("Ben", answers[k]): bool(v) for k, v in BEN.items()},
        }
        assert db.scalar(select(func.count()).select_from(Grade)) == 0  # nobody set a final mark yet
        assert db.scalar(select(func.count()).select_from(Event).where(Event.kind == "grade.mark")) == 12

    page = ana.get(f"{base}/").get_data(as_text=True)
    assert 'id="grader-name">Ana<' in page
    pair = re.search(r'<tr data-pair="Ana\|Ben">.*?</tr>', page, re.S).group(0)
    assert re.search(r'class="num items">6<', pair) and re.search(r'class="num kappa">0\.40<', pair)
    assert re.search(r'id="count-disagreements">2<', page)
    assert "Set final marks where all graders agree (4 answers)" in page
    assert "graders disagree" in re.search(rf'id="answer-{answers["Grace", "q11"]}".*?</blockquote>', page, re.S)[0]

    # one click: the four answers the graders agree on; the two disagreements stay open
    assert post(ana, f"{base}/settle").status_code == 302
    with db_factory() as db:
        finals = {g.answer_id: g for g in db.scalars(select(Grade))}
    assert set(finals) == {answers[k] for k in ANA if ANA[k] == BEN[k]}
    mina = finals[answers["Mina", "q05"]]
    assert (mina.correct, mina.grader, mina.depth, mina.coherence, mina.accuracy) == (True, "Ana", 4, 5, None)
    # the final mark settles the disagreements (Ben's view of Grace, Ana's of the AI)
    post(ben, f"{base}/final", answer_id=answers["Grace", "q11"], correct="0")
    post(ben, f"{base}/final", answer_id=answers["Agent", "q05"], correct="1", accuracy="3")
    page = ben.get(f"{base}/?show=unsettled").get_data(as_text=True)
    assert re.search(r'id="count-finals">6<', page) and "data-answer=" not in page

    # the reports read the final marks (mcq answers: option B, wrong against both keys)
    with db_factory() as db:
        frames = session_tables(db, db.get(VttSession, played.session_id))
    assert frames.ungraded.empty
    graded = frames.answers.set_index(["player", "qid"])["correct"]
    assert {key: bool(graded[key]) for key in ANA} == {
        ("Mina", "q05"): True,
        ("Grace", "q05"): False,
        ("Agent", "q05"): True,
        ("Mina", "q11"): True,
        ("Grace", "q11"): False,
        ("Agent", "q11"): False,
    }
    report = ana.get(f"/host/sessions/{played.session_id}/results/files/report-csv.zip")
    with zipfile.ZipFile(io.BytesIO(report.data)) as archive:
        profile = pd.read_csv(archive.open("profile_players.csv")).set_index("player")["correct"]
        assert "ungraded.csv" not in archive.namelist()
    assert profile.to_dict() == {"Mina": 2, "Grace": 0, "Agent": 1}


def test_a_graders_later_change_shows_against_the_final_mark(app, played, db_factory):
    answers = open_answers(db_factory, played)
    base = f"/host/sessions/{played.session_id}/grading"
    ana = host_client(app)
    name_grader(ana, base, "Ana")
    target = answers["Mina", "q05"]
    post(ana, f"{base}/mark", answer_id=target, correct="1")
    assert post(ana, f"{base}/settle", answer_id=target).status_code == 302
    post(ana, f"{base}/mark", answer_id=target, correct="0")  # Ana changes her mind: the final mark stays
    with db_factory() as db:
        assert db.scalar(select(Grade.correct).where(Grade.answer_id == target)) is True
    page = ana.get(f"{base}/?show=disagreements").get_data(as_text=True)
    assert f'id="answer-{target}"' in page and "differs from the graders" in page
    assert "Agreement needs a second grader." in page


@pytest.mark.parametrize(
    ("form", "field", "message"),
    [
        ({"answer_id": "999999", "correct": "1"}, "answer_id", "this session has no answer “999999”"),
        ({"answer_id": "{open}", "correct": "1", "depth": "6"}, "depth", "whole number from 0 to 5"),
        ({"answer_id": "{open}", "correct": "yes"}, "correct", "choose correct or incorrect"),
        ({"answer_id": "{mcq}", "correct": "1"}, "answer_id", "graded against the key"),
    ],
)
def test_bad_marks_are_refused_naming_the_field(app, played, db_factory, form, field, message):
    answers = open_answers(db_factory, played)
    with db_factory() as db:
        mcq = db.scalar(
            select(Answer.id).where(Answer.session_id == played.session_id, Answer.id.not_in(list(answers.values())))
        )
    ids = {"{open}": str(answers["Mina", "q05"]), "{mcq}": str(mcq)}
    base = f"/host/sessions/{played.session_id}/grading"
    client = host_client(app)
    name_grader(client, base, "Ana")
    for action in ("mark", "final"):
        response = post(client, f"{base}/{action}", **{key: ids.get(value, value) for key, value in form.items()})
        page = response.get_data(as_text=True)
        assert response.status_code == 400
        alert = re.search(r'<p class="problem" role="alert" id="error" data-field="(\w+)">(.*?)</p>', page, re.S)
        assert alert.group(1) == field and message in alert.group(2)
    with db_factory() as db:
        assert db.scalar(select(func.count()).select_from(GraderMark)) == 0
        assert db.scalar(select(func.count()).select_from(Grade)) == 0


def test_grading_needs_a_named_grader_and_the_host(app, client, played, db_factory):
    base = f"/host/sessions/{played.session_id}/grading"
    assert "/host/login" in client.get(f"{base}/").headers["Location"]
    login(client)
    page = client.get(f"{base}/").get_data(as_text=True)
    assert 'id="grader-input"' in page and "Save my mark" not in page
    answer = next(iter(open_answers(db_factory, played).values()))
    response = post(client, f"{base}/mark", answer_id=answer, correct="1")
    assert response.status_code == 400 and 'data-field="grader"' in response.get_data(as_text=True)
    assert post(client, f"{base}/grader", grader="   ").status_code == 400
    assert client.get("/host/sessions/999/grading/").status_code == 404


def test_an_answer_the_host_entered_for_an_ai_player_is_marked_for_the_graders(app, played, db_factory):
    answers = open_answers(db_factory, played)
    with db_factory() as db:
        db.get(Answer, answers[("Agent", "q05")]).entered_by_host = True
        db.commit()
    client = host_client(app)
    base = f"/host/sessions/{played.session_id}/grading"
    name_grader(client, base, "Ana")
    page = client.get(f"{base}/").get_data(as_text=True)
    entered = re.search(rf'id="answer-{answers[("Agent", "q05")]}".*?</li>', page, re.S).group(0)
    assert "entered by the host" in entered
    other = re.search(rf'id="answer-{answers[("Agent", "q11")]}".*?</li>', page, re.S).group(0)
    assert "entered by the host" not in other


def post_json(client, path: str, **data):
    """A row's form as the page's script sends it: the same fields, asking for JSON."""
    token = form_token(client, path.rsplit("/", 1)[0] + "/")
    return client.post(path, data={"csrf_token": token, **data}, headers={"Accept": "application/json"})


def test_a_mark_sent_by_the_pages_script_comes_back_as_its_row_not_a_redirect(app, played, db_factory):
    answers = open_answers(db_factory, played)
    base = f"/host/sessions/{played.session_id}/grading"
    ana = host_client(app)
    name_grader(ana, base, "Ana")
    target = answers["Grace", "q05"]
    response = post_json(ana, f"{base}/mark", answer_id=target, correct="0", accuracy="2")
    assert response.status_code == 200 and response.is_json
    reply = response.get_json()
    assert reply["ok"] and "Ana marked answer" in reply["message"]
    row = reply["row"]
    assert row.lstrip().startswith(f'<li class="answer" id="answer-{target}"') and row.rstrip().endswith("</li>")
    assert re.search(r'<tr data-grader="Ana">.*?incorrect.*?<td class="num">2</td>', row, re.S)
    assert 'name="csrf_token"' in row and "Save my mark" in row  # the row's forms, ready for the next change
    assert 'id="count-finals">0<' in reply["agreement"] and 'id="agreement"' in reply["agreement"]
    with db_factory() as db:
        mark = db.scalar(select(GraderMark).where(GraderMark.answer_id == target))
        assert (mark.grader, mark.correct, mark.accuracy) == ("Ana", False, 2)
    # the final mark and the graders' agreement come back as the row too
    settled = post_json(ana, f"{base}/settle", answer_id=target).get_json()
    assert settled["ok"] and 'id="count-finals">1<' in settled["agreement"]
    assert "not set" not in settled["row"].split("</div>")[0]
    # a refusal names the field, as JSON, and nothing is written
    refused = post_json(ana, f"{base}/mark", answer_id=target, correct="1", depth="9")
    assert refused.status_code == 400
    assert refused.get_json() == {
        "ok": False,
        "error": {
            "code": "refused",
            "field": "depth",
            "message": "a score is a whole number from 0 to 5 or blank, not “9”",
        },
    }
    forged = ana.post(
        f"{base}/mark", data={"answer_id": target, "correct": "1"}, headers={"Accept": "application/json"}
    )
    assert forged.status_code == 400 and forged.get_json()["error"]["code"] == "csrf_failed"
    with db_factory() as db:
        assert db.scalar(select(GraderMark.correct).where(GraderMark.answer_id == target)) is False


@pytest.mark.each_database
def test_marks_of_one_answer_sent_at_once_are_one_row_each_not_a_server_error(app, played, db_factory):
    """Ana's two tabs send her mark of one answer, and two graders set its final mark, at one moment: one mark row,
    one final mark, every request answered.  Found on PostgreSQL: both read "no row yet" and inserted one, and the
    second insert's unique key (``answer_id``; ``answer_id, grader``) made it a server error."""
    answer = open_answers(db_factory, played)["Mina", "q05"]
    base = f"/host/sessions/{played.session_id}/grading"
    clients = [host_client(app) for _ in range(6)]
    for number, client in enumerate(clients):
        name_grader(client, base, "Ana" if number < 3 else f"Grader {number}")
    forms = [
        (client, f"{base}/{'mark' if number < 3 else 'final'}", form_token(client, f"{base}/"))
        for number, client in enumerate(clients)
    ]
    start_line = threading.Barrier(len(forms))
    statuses: list[str] = []

    def send(client, path: str, csrf: str) -> None:
        start_line.wait()
        try:
            sent = client.post(path, data={"csrf_token": csrf, "answer_id": str(answer), "correct": "1"})
            statuses.append(str(sent.status_code))
        except Exception as error:  # a server error, raised through the test client
            statuses.append(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=send, args=form) for form in forms]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert statuses == ["302"] * len(forms), statuses
    with db_factory() as db:
        assert [(m.grader, m.correct) for m in db.scalars(select(GraderMark))] == [("Ana", True)]
        assert [(g.answer_id, g.correct) for g in db.scalars(select(Grade))] == [(answer, True)]
