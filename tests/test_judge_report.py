"""The judge's agreement with the graders in the reports and on the results page: ``vtt report`` writes
judge_agreement.csv, judge_confusions.csv and a section of report.pdf, the results page a card; none of them
without a suggestion.

The session is tests/test_judge.py's agreement case: Ana and Ben mark the six open answers, the final marks are
set where they agree, and the fake judge says Mina and Agent correct, Grace not.  Hand-computed there:
kappa on correct/incorrect Ana 0.25, Ben 0.4, final marks 0.5.  Ana's verdicts against the judge's, in the order
Mina q05, Grace q05, Agent q05, Mina q11, Grace q11, Agent q11: Ana 1 0 1 1 1 0, judge 1 0 1 1 0 1, so both
correct 3 (Mina twice, Agent q05), Ana correct and the judge not 1 (Grace q11), the reverse 1 (Agent q11), both
incorrect 1 (Grace q05).

Accuracy (Ana 4 when correct, else 1; judge Mina 4, Grace 1, Agent 2): Ana 4 1 4 4 4 1, judge 4 1 2 4 1 2.
Quadratic weighted kappa, weights (i - j)^2 / 25: observed (0 + 0 + 4 + 0 + 9 + 1) / 25 / 6 = 14/150; expected,
Ana 4 (4/6) or 1 (2/6) against the judge's 4, 1, 2 (2/6 each): (4/6)(2/6)(0 + 9 + 4)/25 + (2/6)(2/6)(9 + 0 + 1)/25
= 0.16; kappa_w = 1 - (14/150) / 0.16 = 0.4167.  Spearman: ranks Ana 4.5 1.5 4.5 4.5 4.5 1.5, judge 5.5 1.5 3.5
5.5 1.5 3.5; deviations from 3.5 give 6 / sqrt(12 * 16) = 0.4330.
"""

from __future__ import annotations

import re
import subprocess

import pandas as pd
import pytest

from tests.support.judge import ANA_AND_BEN, MODEL, FakeJudge, settings
from tests.support.machine import require_poppler
from tests.support.review import host_client, name_grader, open_answers, play_session, post
from vtt.judge.agreement import FINAL
from vtt.judge.suggest import suggest

TITLE, TITLE_KO = "The judge beside the graders", "채점자와 심사 모델의 일치도"
KAPPAS = {"Ana": 0.25, "Ben": 0.4, FINAL: 0.5}
ANA_ACCURACY = {"weighted_kappa": 1 - (14 / 150) / 0.16, "spearman": 6 / (12 * 16) ** 0.5}
# (rater's verdict, judge's verdict) -> answers
CONFUSIONS = {
    "Ana": {(True, True): 3, (True, False): 1, (False, True): 1, (False, False): 1},
    "Ben": {(True, True): 2, (True, False): 0, (False, True): 2, (False, False): 2},
    FINAL: {(True, True): 2, (True, False): 0, (False, True): 1, (False, False): 1},
}


def graded(app, db_factory, judged: bool = True):
    """The session played, marked by Ana and Ben, final marks set where they agree; the judge asked if ``judged``."""
    played = play_session(app, db_factory)
    answers = open_answers(db_factory, played)
    base = f"/host/sessions/{played.session_id}/grading"
    for grader, marks in ANA_AND_BEN.items():
        client = host_client(app)
        name_grader(client, base, grader)
        for key, correct in {**marks, ("Agent", "q11"): 0}.items():
            accuracy = {"Ana": 4, "Ben": 3}[grader] if correct else 1
            post(client, f"{base}/mark", answer_id=answers[key], correct=str(correct), accuracy=str(accuracy))
    post(client, f"{base}/settle")
    if judged:
        with FakeJudge() as judge:
            suggest(db_factory, played.session_id, settings(judge))
    return played


def pdf_text(path) -> str:
    require_poppler()
    done = subprocess.run(["pdftotext", "-layout", "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def section(text: str, title: str, next_title: str) -> str:
    """The PDF text from the section's heading to the next section's (pdftotext puts a form feed between pages)."""
    start = text.index(title)
    return text[start : text.index(next_title, start)]


def test_the_report_sets_the_judge_beside_each_grader_and_the_final_marks(app, db_factory, run, tmp_path):
    played = graded(app, db_factory)
    out = tmp_path / "report"
    result = run("report", played.code, "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "judge_agreement.csv" in result.output and "judge_confusions.csv" in result.output

    agreement = pd.read_csv(out / "judge_agreement.csv")
    assert list(agreement.columns) == [
        "model",
        "rater",
        "measure",
        "items",
        "taken",
        "kappa",
        "weighted_kappa",
        "spearman",
        "reason",
    ]
    assert set(agreement["model"]) == {MODEL}
    assert set(agreement["taken"]) == {0}  # every mark by hand
    rows = agreement.set_index(["rater", "measure"])
    for rater, kappa in KAPPAS.items():
        assert rows.loc[(rater, "correct"), "kappa"] == pytest.approx(kappa)
    assert rows.loc[("Ana", "correct"), "items"] == 6 and rows.loc[(FINAL, "correct"), "items"] == 4
    for statistic, value in ANA_ACCURACY.items():
        assert rows.loc[("Ana", "accuracy"), statistic] == pytest.approx(value)
    assert rows.loc[("Ana", "depth"), "items"] == 0 and rows.loc[("Ana", "depth"), "reason"] == "no_items"

    confusions = pd.read_csv(out / "judge_confusions.csv")
    assert list(confusions.columns) == ["model", "rater", "rater_verdict", "judge_verdict", "answers"]
    counts = {
        (row.rater, row.rater_verdict, row.judge_verdict): row.answers for row in confusions.itertuples(index=False)
    }
    assert counts == {
        (rater, theirs, judges): answers
        for rater, matrix in CONFUSIONS.items()
        for (theirs, judges), answers in matrix.items()
    }

    text = section(pdf_text(out / "report.pdf"), TITLE, "Question set")
    assert f"Judge: {MODEL}" in text and "Final marks" in text
    for figure in ("0.25", "0.40", "0.50", "0.42", "0.43"):
        assert figure in text
    words = " ".join(text.split())  # a cell's text may wrap
    assert "undefined: no answer both marked" in words
    assert "Cohen, 1960" in words and "Cohen, 1968" in words and "never counted as marks" in words
    assert re.search(r"^Ana\s+0\s+Correct/incorrect\s+6\s+0\.25\s*$", text, re.M), text
    assert re.search(r"^\s+Accuracy\s+6\s+0\.42\s+0\.43\s*$", text, re.M), text
    # the 2x2 tables of Ana, Ben and the final marks side by side: rows the rater's verdict, columns the judge's
    assert re.search(r"^\s*correct\s+3\s+1\s+correct\s+2\s+0\s+correct\s+2\s+0\s*$", text, re.M), text
    assert re.search(r"^\s*incorrect\s+1\s+1\s+incorrect\s+2\s+2\s+incorrect\s+1\s+1\s*$", text, re.M), text


def test_marks_a_grader_took_from_the_judge_are_counted_per_grader(app, db_factory, run, tmp_path):
    played = graded(app, db_factory)
    answers = open_answers(db_factory, played)
    base = f"/host/sessions/{played.session_id}/grading"
    ana = host_client(app)
    name_grader(ana, base, "Ana")
    assert post(ana, f"{base}/take", answer_id=answers[("Mina", "q05")], model=MODEL).status_code == 302
    out = tmp_path / "report"
    assert run("report", played.code, "--out", str(out)).exit_code == 0

    agreement = pd.read_csv(out / "judge_agreement.csv")
    taken = agreement.groupby("rater")["taken"].agg(set).to_dict()
    assert taken == {"Ana": {1}, "Ben": {0}, FINAL: {0}}

    text = section(pdf_text(out / "report.pdf"), TITLE, "Question set")
    assert re.search(r"^Ana\s+1\s+Correct/incorrect\s+6\s", text, re.M), text
    assert re.search(r"^Ben\s+0\s+Correct/incorrect\s+6\s", text, re.M), text
    words = " ".join(text.split())
    assert re.search(r"Marks taken .*\n\s+from the judge", text), text  # the header wraps in its column
    assert "A grader's marks taken from the judge agree with it by construction: their count is shown per grader." in (
        words
    )

    page = host_client(app).get(f"/host/sessions/{played.session_id}/results/").get_data(as_text=True)
    card = re.search(r'<section class="card" id="judge-agreement">.*?</section>', page, re.S).group(0)
    assert "Marks taken from the judge" in card and "agree with it by construction" in card
    counts = dict(
        re.findall(r'<tr data-rater="([^"]+)" data-measure="correct".*?<td class="num taken">(\d*)</td>', card, re.S)
    )
    assert counts == {"Ana": "1", "Ben": "0", FINAL: ""}
    korean = host_client(app).get(f"/host/sessions/{played.session_id}/results/?lang=ko").get_data(as_text=True)
    assert "심사 모델에게서 받아들인 채점" in korean


def test_the_korean_report_names_the_section_in_korean(app, db_factory, run, tmp_path):
    played = graded(app, db_factory)
    out = tmp_path / "report"
    assert run("report", played.code, "--out", str(out), "--lang", "ko").exit_code == 0
    text = section(pdf_text(out / "report.pdf"), TITLE_KO, "문항 구성")
    assert f"심사 모델: {MODEL}" in text and "최종 채점" in text and "0.25" in text
    assert TITLE not in text
    assert pd.read_csv(out / "judge_agreement.csv")["rater"].tolist()[0] == "Ana"  # the CSVs stay as they are


def test_the_results_page_shows_the_judges_agreement_card(app, db_factory):
    played = graded(app, db_factory)
    page = host_client(app).get(f"/host/sessions/{played.session_id}/results/").get_data(as_text=True)
    card = re.search(r'<section class="card" id="judge-agreement">.*?</section>', page, re.S).group(0)
    assert TITLE in card and MODEL in card and "Final marks" in card
    kappas = {
        rater: float(kappa)
        for rater, kappa in re.findall(
            r'<tr data-rater="([^"]+)" data-measure="correct".*?<td class="num kappa">([\d.]+)</td>', card, re.S
        )
    }
    assert kappas == KAPPAS
    accuracy = re.search(r'data-rater="Ana" data-measure="accuracy".*?</tr>', card, re.S).group(0)
    assert '<td class="num kappa">0.42</td>' in accuracy and '<td class="num rho">0.43</td>' in accuracy
    assert "undefined: no answer graded by both" in card  # Ana scored no depth, ... beside the judge
    for rater, matrix in CONFUSIONS.items():
        table = re.search(rf'<table class="grid confusion" data-rater="{re.escape(rater)}">.*?</table>', card, re.S)
        cells = re.findall(r'<td class="num[^"]*" data-judge="\w+">(\d+)</td>', table.group(0))
        assert [int(n) for n in cells] == [
            matrix[key] for key in [(True, True), (True, False), (False, True), (False, False)]
        ]

    korean = host_client(app).get(f"/host/sessions/{played.session_id}/results/?lang=ko").get_data(as_text=True)
    assert TITLE_KO in korean and TITLE not in korean


def test_no_suggestion_no_section_no_csv_no_card(app, db_factory, run, tmp_path):
    played = graded(app, db_factory, judged=False)
    out = tmp_path / "report"
    out.mkdir()
    (out / "judge_agreement.csv").write_text("an earlier run's\n")  # would mislead: removed
    assert run("report", played.code, "--out", str(out)).exit_code == 0
    assert not (out / "judge_agreement.csv").exists() and not (out / "judge_confusions.csv").exists()
    assert TITLE not in pdf_text(out / "report.pdf")
    page = host_client(app).get(f"/host/sessions/{played.session_id}/results/").get_data(as_text=True)
    assert 'id="judge-agreement"' not in page and TITLE not in page


def test_suggestions_no_grader_marked_yet_get_a_card_but_no_section(app, db_factory, run, tmp_path):
    played = play_session(app, db_factory)
    with FakeJudge() as judge:
        suggest(db_factory, played.session_id, settings(judge))
    page = host_client(app).get(f"/host/sessions/{played.session_id}/results/").get_data(as_text=True)
    card = re.search(r'<section class="card" id="judge-agreement">.*?</section>', page, re.S).group(0)
    assert "No grader has marked an answer the judge scored yet" in card and "judge-table" not in card
    out = tmp_path / "report"
    assert run("report", played.code, "--out", str(out)).exit_code == 0  # the mcq answers are graded by their key
    assert not (out / "judge_agreement.csv").exists() and TITLE not in pdf_text(out / "report.pdf")
