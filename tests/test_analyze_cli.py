"""`vtt analyze` on files: the JSON contract, text summary, PDFs/CSVs, and input errors."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.support.machine import require_poppler
from tests.support.paths import DATA
from vtt.cli import main

# Right on q1, q2, q4 and wrong on q3, q5: the CogME worked example (CogME 2022, Figure 2).
ANSWERS = """player,qid,answer,correct
Minjun,q1,0,
Minjun,q2,Kyungsu,
Minjun,q3,She is happy,0
Minjun,q4,He sits down,1
Minjun,q5,No idea,0
지수,q1,A,
지수,q2,1,
지수,q3,She is crying,1
지수,q4,He leaves,1
지수,q5,She is jealous of her,1
Agent,q1,A black dress,
Agent,q2,Kyungsu,
Agent,q3,Sad,1
Agent,q4,He leaves the room,1
Agent,q5,,
"""
# Round 1: 3 of 4 cast votes on the AI; round 2: 1 of 3 cast votes, one abstention.
VOTES = """round,juror,vote,confidence,group
1,J1,Agent,5,expert
1,J2,Agent,4,expert
1,J3,Agent,3,non-expert
1,J4,Minjun,2,non-expert
2,J1,지수,3,expert
2,J2,Agent,4,expert
2,J3,Minjun,2,non-expert
2,J4,,,non-expert
"""


@pytest.fixture
def files(tmp_path):
    answers, votes = tmp_path / "answers.csv", tmp_path / "votes.csv"
    answers.write_text(ANSWERS, encoding="utf-8")
    votes.write_text(VOTES, encoding="utf-8")
    return ["--questions", str(DATA / "spec_examples.csv"), "--answers", str(answers), "--votes", str(votes)]


def invoke(*args):
    return CliRunner().invoke(main, ["analyze", *args], catch_exceptions=False)


def test_json_follows_the_contract(files):
    result = invoke(*files, "--ai", "Agent", "--method", "cogsci2024", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"method", "pass_rule", "players", "rounds", "mean_detection_pct"}
    assert (data["method"], data["pass_rule"]) == ("cogsci2024", "human-tie")
    players = {p["name"]: p for p in data["players"]}
    assert list(players) == ["Minjun", "지수", "Agent"]
    minjun = players["Minjun"]
    assert (minjun["kind"], minjun["questions"], minjun["correct"], minjun["accuracy_pct"]) == ("human", 5, 3, 60.0)
    character = next(e for e in minjun["elements"] if e["element"] == "Character")
    assert character == {
        "module": "target",
        "element": "Character",
        "questions": 5,
        "correct": 3,
        "accuracy_pct": 60.0,
        "score_pct": pytest.approx(100 * 5 / 11),
    }
    assert players["Agent"]["kind"] == "ai" and players["Agent"]["correct"] == 3  # q1 wrong, q5 unanswered
    assert players["지수"]["correct"] == 4  # "A" is option 0 (right), index 1 is wrong
    round1, round2 = data["rounds"]
    assert round1 == {
        "round": 1,
        "votes": 4,
        "abstentions": 0,
        "tally": {"Minjun": 1, "지수": 0, "Agent": 3},
        "detection_pct": 75.0,
        "majority": True,
        "ai_passed": False,
        "p_value": pytest.approx(4 * (1 / 3) ** 3 * (2 / 3) + (1 / 3) ** 4),  # P(X >= 3), X ~ B(4, 1/3)
        "ci95": [pytest.approx(30.06, abs=0.01), pytest.approx(95.44, abs=0.01)],
    }
    assert (round2["votes"], round2["abstentions"], round2["ai_passed"]) == (3, 1, True)
    assert round2["detection_pct"] == pytest.approx(100 / 3)
    assert data["mean_detection_pct"] == pytest.approx((75 + 100 / 3) / 2)


def test_frontiers_and_text_summary(files):
    data = json.loads(invoke(*files, "--ai", "Agent", "--method", "frontiers2022", "--json").stdout)
    minjun = next(p for p in data["players"] if p["name"] == "Minjun")
    character = next(e for e in minjun["elements"] if e["element"] == "Character")
    assert character["score_pct"] == pytest.approx(100 * (2 / 3 + 2 + 1) / 6.5)
    text = invoke(*files, "--ai", "Agent").output
    assert "Minjun (human): 3/5 correct, accuracy 60.0%" in text
    assert "round 2: 3 votes, 1 abstentions, detection 33.3%, AI passed" in text


def test_without_votes_rounds_are_empty(files):
    data = json.loads(invoke(*files[:4], "--ai", "Agent", "--json").stdout)
    assert data["rounds"] == [] and data["pass_rule"] is None and data["mean_detection_pct"] is None


def test_out_writes_pdfs_and_csvs(files, tmp_path):
    out = tmp_path / "report"
    result = invoke(*files, "--ai", "Agent", "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    json.loads(result.stdout)  # stdout stays pure JSON; the file list goes to stderr
    names = {p.name for p in out.iterdir()}
    assert {"profiles.pdf", "tallies.pdf", "report.pdf"} <= names
    assert all((out / n).read_bytes().startswith(b"%PDF") for n in ("profiles.pdf", "tallies.pdf", "report.pdf"))
    assert any(n.endswith(".csv") for n in names)


def test_input_errors_name_file_row_and_field(files, tmp_path):
    bad = tmp_path / "bad_answers.csv"
    bad.write_text("player,qid,answer\nMinjun,q3,an open answer\nMinjun,q9,0\n", encoding="utf-8")
    result = invoke("--questions", str(DATA / "spec_examples.csv"), "--answers", str(bad))
    assert result.exit_code == 1
    assert "error: 2 problems; nothing was written" in result.output
    assert "row 3" in result.output and "q9" in result.output
    assert "row 2" in result.output and "correct" in result.output


def test_case_study_figures_from_files():
    """The 2021 VTT case study: 62.5, 75, 37.5, 55.6, 12.5 % detection, mean 48.6 %, a majority in 4 of 5 rounds."""
    result = invoke(
        "--questions",
        str(DATA / "spec_examples.csv"),
        "--answers",
        str(DATA / "case_study_answers.csv"),
        "--votes",
        str(DATA / "case_study_votes.csv"),
        "--ai",
        "AI",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    rounds = data["rounds"]
    assert [round(r["detection_pct"], 1) for r in rounds] == [62.5, 75.0, 37.5, 55.6, 12.5]
    assert round(data["mean_detection_pct"], 1) == 48.6
    assert [r["majority"] for r in rounds] == [True, True, False, True, True]
    assert [r["abstentions"] for r in rounds] == [0, 0, 0, 7, 0]
    # human-tie: the AI passes where a human drew at least as many votes (rounds 3 and 5).
    assert [r["ai_passed"] for r in rounds] == [False, False, True, False, True]
    assert max(rounds[2]["tally"], key=rounds[2]["tally"].get) == "Teen14"
    chance = json.loads(
        invoke(
            "--questions",
            str(DATA / "spec_examples.csv"),
            "--answers",
            str(DATA / "case_study_answers.csv"),
            "--votes",
            str(DATA / "case_study_votes.csv"),
            "--ai",
            "AI",
            "--pass-rule",
            "chance",
            "--json",
        ).stdout
    )
    assert [r["ai_passed"] for r in chance["rounds"]] == [False, False, True, False, True]


# ---------------------------------------------------------------------------------- review fixes


def test_votes_without_an_ai_player_fail_with_a_hint(files):
    result = invoke(*files, "--json")  # no --ai and no kind column: every player is human
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "no AI player in answers.csv" in result.stderr
    assert "name the AI with --ai NAME or a kind column" in result.stderr
    assert invoke(*files[:4], "--json").exit_code == 0  # profiles alone need no AI


def test_ai_option_against_the_kind_column_is_a_problem(tmp_path):
    answers = tmp_path / "answers.csv"
    answers.write_text("player,qid,answer,kind\nMinjun,q1,0,human\nAgent,q1,1,ai\n", encoding="utf-8")
    result = invoke("--questions", str(DATA / "spec_examples.csv"), "--answers", str(answers), "--ai", "Minjun")
    assert result.exit_code == 1
    assert f"{answers}: row 2, kind: player 'Minjun' is named as an AI player but marked human here" in result.stderr


def test_text_summary_counts_rounds_without_votes(files, tmp_path):
    votes = tmp_path / "votes.csv"
    votes.write_text(VOTES + "3,J1,,,expert\n3,J2,,,expert\n", encoding="utf-8")
    text = invoke(*files[:4], "--votes", str(votes), "--ai", "Agent").output
    assert "round 3: 0 votes, 2 abstentions, detection n/a, no votes" in text
    assert "AI passed 1 of 2 rounds (1 round without votes), mean detection 54.2%" in text


SHEET = """juror,qid,player,looks_like_ai
J1,q1,Agent,1
J1,q1,Minjun,0
J2,q1,minjun,true
J1,q3,Agent,1
J2,q3,지수,
"""


def test_sheet_adds_exposure(files, tmp_path):
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(SHEET, encoding="utf-8")
    out = tmp_path / "report"
    result = invoke(*files, "--ai", "Agent", "--sheet", str(sheet), "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    assert set(json.loads(result.stdout)) == {"method", "pass_rule", "players", "rounds", "mean_detection_pct"}
    exposure = (out / "exposure.csv").read_text(encoding="utf-8").splitlines()
    # q1: 2 marks, 1 on the AI; q3: 1 mark, on the AI; 1 AI answer of 3 on each question
    assert exposure == [
        "qid,marks,ai_marks,exposure_pct,chance_pct",
        "q1,2,1,50.0,33.333333333333336",
        "q3,1,1,100.0,33.333333333333336",
    ]
    assert "exposure.csv" in result.stderr
    plain = invoke(*files, "--ai", "Agent", "--out", str(tmp_path / "plain"))
    assert plain.exit_code == 0 and not (tmp_path / "plain" / "exposure.csv").exists()


def test_sheet_problems_are_listed(files, tmp_path):
    sheet = tmp_path / "sheet.csv"
    sheet.write_text("juror,qid,player,looks_like_ai\nJ1,q1,H2,1\nJ1,q7,Agent,maybe\n", encoding="utf-8")
    result = invoke(*files, "--ai", "Agent", "--sheet", str(sheet))
    assert result.exit_code == 1
    assert "error: 3 problems; nothing was written" in result.stderr
    assert (
        f"{sheet}: row 2, player: unknown player 'H2' (no row in the answers file; a player who answered "
        "nothing needs rows with an empty answer)"
    ) in result.stderr
    assert f"{sheet}: row 3, qid: unknown question 'q7'" in result.stderr
    assert f"{sheet}: row 3, looks_like_ai: must be 0/1/true/false (or empty: no mark), not 'maybe'" in result.stderr


def test_characters_the_font_cannot_show_are_a_warning(tmp_path):
    answers = tmp_path / "answers.csv"
    answers.write_text(ANSWERS.replace("Agent,", "Agent_😀,"), encoding="utf-8")
    votes = tmp_path / "votes.csv"
    votes.write_text(VOTES.replace(",Agent,", ",Agent_😀,"), encoding="utf-8")
    out = tmp_path / "report"
    result = invoke(
        "--questions",
        str(DATA / "spec_examples.csv"),
        "--answers",
        str(answers),
        "--votes",
        str(votes),
        "--ai",
        "Agent_😀",
        "--out",
        str(out),
        "--json",
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["players"][2]["name"] == "Agent_😀"
    assert "warning: the PDFs' font cannot show 1 character(s)" in result.stderr
    assert "U+1F600 😀" in result.stderr


def test_juror_facets_from_files_leave_the_json_as_it_is(tmp_path):
    """The case study's 16 jurors with expert (6 experts) and age_band columns instead of group."""
    common = [
        "--questions",
        str(DATA / "spec_examples.csv"),
        "--answers",
        str(DATA / "case_study_answers.csv"),
        "--ai",
        "AI",
        "--json",
    ]
    plain = invoke(*common, "--votes", str(DATA / "case_study_votes.csv"))
    out = tmp_path / "report"
    faceted = invoke(*common, "--votes", str(DATA / "case_study_votes_facets.csv"), "--out", str(out))
    assert faceted.exit_code == 0, faceted.output
    assert faceted.stdout == plain.stdout  # facets add tables, not JSON keys
    groups = (out / "groups.csv").read_text(encoding="utf-8").splitlines()
    # experts J01-J06 25 of 30 votes on the AI, the others 10 of 43; 20s 9 of 23, 30s 13 of 23, 40s 13 of 27
    assert [line.split(",")[:5] for line in groups] == [
        ["facet", "group", "jurors", "votes", "ai_votes"],
        ["expert", "expert", "6", "30", "25"],
        ["expert", "non-expert", "10", "43", "10"],
        ["age_band", "20s", "5", "23", "9"],
        ["age_band", "30s", "5", "23", "13"],
        ["age_band", "40s", "6", "27", "13"],
    ]
    jurors = (out / "jurors.csv").read_text(encoding="utf-8").splitlines()
    assert jurors[0] == "juror,expert,age_band,rounds,votes,hits,hit_rate_pct"
    assert jurors[1] == "J01,expert,20s,5,5,5,100.0"
    ai_rounds = (out / "ai_rounds.csv").read_text(encoding="utf-8").splitlines()
    assert ai_rounds[0] == "round,player,votes,share_pct,detection_pct,passed"
    assert ai_rounds[1:4] == ["1,AI,10,62.5,62.5,False", "2,AI,12,75.0,75.0,False", "3,AI,6,37.5,37.5,True"]


def test_out_in_korean(files, tmp_path):
    import subprocess

    require_poppler()
    result = invoke(*files, "--ai", "Agent", "--out", str(tmp_path / "ko"), "--lang", "ko")
    assert result.exit_code == 0, result.output
    text = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(tmp_path / "ko" / "report.pdf"), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "비디오 튜링 테스트 보고서" in text and "CogME 프로필" in text and "CogME profiles" not in text
    assert "답변" in text  # the cover's "Answers" file line
