"""Reading answers and votes CSVs: grading, defaults, and every problem reported with file, row and field."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.inputs import SHEET_COLUMNS, AnalysisInputError, read_answers, read_sheet, read_votes
from analysis.options import chosen_options
from analysis.tables import ANSWER_COLUMNS, VOTE_COLUMNS
from analysis.votes import vote_stats
from tests.support.cogme_cases import WORKED_EXAMPLES, questions_table
from tests.support.paths import DATA

KOREAN = "김민지"


@pytest.fixture
def questions() -> pd.DataFrame:
    """Questions 1-5 of the worked examples; 1, 2, 4, 5 mcq (key: option 0 "alpha"), 3 open-ended."""
    table = questions_table(WORKED_EXAMPLES)
    open_row = table["qid"] == "3"
    table.loc[open_row, "type"] = "open"
    table.loc[open_row, "answer_index"] = pd.NA
    table["choices"] = [[] if q == "3" else ["Alpha", "beta", "gamma", "delta", "epsilon"] for q in table["qid"]]
    return table


def write(tmp_path, name: str, text: str, encoding: str = "utf-8"):
    path = tmp_path / name
    path.write_text(text, encoding=encoding)
    return path


def problems_of(excinfo) -> list[str]:
    return excinfo.value.problems


def test_answers_are_read_graded_and_kinded(tmp_path, questions):
    path = write(
        tmp_path,
        "answers.csv",
        "\n".join(
            [
                "Player,QID,Answer,correct,kind",
                f"{KOREAN},1,  alpha ,,",  # option text, case and space-insensitive -> right
                f"{KOREAN},2,B,,",  # letter B = option 1 -> wrong
                f"{KOREAN},3,she is sad,1,",  # open-ended, graded by hand
                "Bot,1,0,,",  # 0-based index 0 -> right
                "Bot,2,a,,",  # letter a -> right
                "Bot,4,I do not know,,",  # not an option -> wrong
                "Bot,5,gamma,true,",  # given correct wins over the key
                "Bot,3,,,",  # no answer -> wrong, no judgement needed
                "Kid,1,alpha,,ai",  # the file's kind wins over --ai ...
                "Kid,2,alpha,,",  # ... and holds for the player's other rows
            ]
        )
        + "\n",
    )
    answers = read_answers(path, questions, ai_names=["bot"])
    assert list(answers.columns) == list(ANSWER_COLUMNS)
    assert answers["player"].tolist() == [KOREAN] * 3 + ["Bot"] * 5 + ["Kid"] * 2
    assert answers["qid"].tolist() == ["1", "2", "3", "1", "2", "4", "5", "3", "1", "2"]
    assert answers["answer"].tolist()[:2] == ["alpha", "B"]
    assert answers["correct"].tolist() == [True, False, True, True, True, False, True, False, True, True]
    assert answers["correct"].dtype == bool
    assert answers["kind"].tolist() == ["human"] * 3 + ["ai"] * 7


def test_option_text_wins_over_letters_and_numbers(tmp_path, questions):
    questions["choices"] = [["b", "a", "0", "3", "4"] for _ in questions["qid"]]
    questions.loc[questions["qid"] == "3", "type"] = "mcq"
    questions["answer_index"] = pd.array([1, 1, 2, 0, 4], dtype="Int64")
    path = write(tmp_path, "answers.csv", "player,qid,answer\nP,1,a\nP,2,b\nP,3,0\nP,4,0\nP,5,e\n")
    answers = read_answers(path, questions)
    # "a" is option 1's text; "b" is option 0's text (not letter b); "0" is option 2's text; "0" on q4
    # is option 2 again, the key is 0; "e" is no option text, so letter e = option 4
    assert answers["correct"].tolist() == [True, False, True, False, True]


def test_open_answers_without_correct_are_listed(tmp_path, questions):
    path = write(tmp_path, "answers.csv", "player,qid,answer\nA,3,sad\nA,1,alpha\nB,3,angry\n")
    with pytest.raises(AnalysisInputError) as excinfo:
        read_answers(path, questions)
    assert problems_of(excinfo) == [
        f"{path}: rows 2, 4, correct: question '3' is open-ended or has no key: its answers need a correct value (0/1)",
    ]
    assert isinstance(excinfo.value, ValueError)
    assert "1 problem in" in str(excinfo.value)


def test_every_answer_problem_is_collected(tmp_path, questions):
    path = write(
        tmp_path,
        "answers.csv",
        "\n".join(
            [
                "player,qid,answer,correct,kind",
                "A,1,alpha,,",
                "A,99,alpha,,",  # row 3: unknown qid
                "B,1,alpha,,robot",  # row 4: bad kind
                "B,2,alpha,maybe,",  # row 5: bad correct
                "A,1,beta,,",  # row 6: duplicate of row 2
                ",2,alpha,,",  # row 7: no player
                "C,1,alpha,,human",  # row 8 and 9: C is human and ai
                "C,2,alpha,,ai",
            ]
        )
        + "\n",
    )
    with pytest.raises(AnalysisInputError) as excinfo:
        read_answers(path, questions, ai_names=["Ghost"])
    assert problems_of(excinfo) == [
        f"{path}: rows 2, 6, player/qid: answered twice: A / 1",
        f"{path}: row 3, qid: unknown question '99'",
        f"{path}: row 4, kind: must be human or ai, not 'robot'",
        f"{path}: row 5, correct: must be 0/1/true/false, not 'maybe'",
        f"{path}: row 7, player: is empty",
        f"{path}: rows 8, 9, kind: player 'C' is marked both human and ai",
        f"{path}: player: AI player 'Ghost' has no row",
    ]


def test_rows_are_counted_as_in_a_spreadsheet(tmp_path, questions):
    # a blank line and a line of empty cells are skipped but still counted; a BOM is not a column name
    path = write(tmp_path, "answers.csv", "player,qid,answer\nA,1,alpha\n\n,,\nA,42,x\n", encoding="utf-8-sig")
    with pytest.raises(AnalysisInputError) as excinfo:
        read_answers(path, questions)
    assert problems_of(excinfo) == [f"{path}: row 5, qid: unknown question '42'"]


def test_many_rows_are_abbreviated(tmp_path, questions):
    rows = "".join(f"P{n},3,text\n" for n in range(12))
    path = write(tmp_path, "answers.csv", "player,qid,answer\n" + rows)
    with pytest.raises(AnalysisInputError) as excinfo:
        read_answers(path, questions)
    assert problems_of(excinfo)[0].startswith(f"{path}: rows 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 2 more, correct:")


def test_missing_columns_and_empty_files(tmp_path, questions):
    path = write(tmp_path, "answers.csv", "player,answer\nA,alpha\n")
    with pytest.raises(AnalysisInputError) as excinfo:
        read_answers(path, questions)
    assert problems_of(excinfo) == [f"{path}: row 1, qid: required column is missing"]
    empty = write(tmp_path, "empty.csv", "")
    with pytest.raises(AnalysisInputError, match="empty"):
        read_answers(empty, questions)
    latin = write(tmp_path, "latin.csv", "player,qid,answer\nJos\xe9,1,alpha\n", encoding="latin-1")
    with pytest.raises(AnalysisInputError, match="UTF-8"):
        read_answers(latin, questions)


PLAYERS = pd.DataFrame({"name": [KOREAN, "Kid", "AI"], "kind": ["human", "human", "ai"]})


def test_votes_are_read(tmp_path):
    path = write(
        tmp_path,
        "votes.csv",
        "\n".join(
            [
                "round,juror,vote,confidence,group",
                f"1,j1,{KOREAN},3,expert",
                "1,j2,ai,5,",
                "1,j3,,,",
                "2,j1,AI,4.0,expert",
                "2,j2,Kid,,",
            ]
        )
        + "\n",
    )
    votes = read_votes(path, PLAYERS)
    assert list(votes.columns) == [*VOTE_COLUMNS, "group"]  # the facet columns the file has
    assert votes["round"].tolist() == [1, 1, 1, 2, 2]
    assert votes["juror"].tolist() == ["j1", "j2", "j3", "j1", "j2"]
    assert votes["vote"].tolist() == [KOREAN, "AI", None, "AI", "Kid"]
    assert votes["slot"].tolist() == [1] * 5
    assert votes["confidence"].tolist()[:2] == [3.0, 5.0] and np.isnan(votes["confidence"][2])
    assert votes["group"].tolist() == ["expert", None, None, "expert", None]
    stats = vote_stats(votes, PLAYERS)
    assert stats.rounds["detection_pct"].tolist() == [50.0, 50.0]
    assert read_votes(path, [KOREAN, "Kid", "AI"]).equals(votes)


def test_slots_let_a_juror_name_several_players(tmp_path):
    path = write(tmp_path, "votes.csv", "round,juror,vote,slot\n1,j1,AI,1\n1,j1,Kid,2\n")
    assert read_votes(path, PLAYERS)["slot"].tolist() == [1, 2]


def test_every_vote_problem_is_collected(tmp_path):
    path = write(
        tmp_path,
        "votes.csv",
        "\n".join(
            [
                "round,juror,vote,confidence,group,slot",
                "0,j1,AI,,,",  # row 2: round below 1
                ",j2,AI,,,",  # row 3: no round
                "1,,AI,,,",  # row 4: no juror
                "1,j3,Robot,,,",  # row 5: unknown player
                "1,j4,AI,6,,",  # row 6: confidence out of range
                "1,j5,AI,2.5,,",  # row 7: confidence not whole
                "1,j6,AI,,,x",  # row 8: bad slot
                "2,j7,AI,,,",  # rows 9, 10: same slot twice
                "2,j7,Kid,,,",
                "3,j8,AI,,a,1",  # rows 11, 12: AI named twice; j8 in groups a and b
                "3,j8,AI,,b,2",
            ]
        )
        + "\n",
    )
    with pytest.raises(AnalysisInputError) as excinfo:
        read_votes(path, PLAYERS)
    assert problems_of(excinfo) == [
        f"{path}: row 2, round: must be a whole number >= 1, not '0'",
        f"{path}: row 3, round: is empty",
        f"{path}: row 4, juror: is empty",
        (
            f"{path}: row 5, vote: unknown player 'Robot' (no row in the answers file; a player who answered nothing "
            "needs rows with an empty answer)"
        ),
        f"{path}: row 6, confidence: must be a whole number 1-5, not '6'",
        f"{path}: row 7, confidence: must be a whole number 1-5, not '2.5'",
        f"{path}: row 8, slot: must be a whole number >= 1, not 'x'",
        f"{path}: rows 9, 10, round/juror/slot: more than one row for j7 in round 2, slot 1",
        f"{path}: rows 11, 12, group: juror 'j8' is in more than one group",
        f"{path}: rows 11, 12, vote: j8 in round 3 names AI more than once",
    ]


# ------------------------------------------------------------------------------- review fixes


def test_ai_option_contradicting_the_files_kind_is_a_problem(tmp_path, questions):
    path = write(tmp_path, "answers.csv", "player,qid,answer,kind\nBot,1,alpha,human\nBot,2,alpha,\nKid,1,alpha,\n")
    with pytest.raises(AnalysisInputError) as excinfo:
        read_answers(path, questions, ai_names=["bot"])
    assert problems_of(excinfo) == [f"{path}: row 2, kind: player 'Bot' is named as an AI player but marked human here"]
    # a kind column that agrees with --ai, or --ai on a player without a stated kind, is fine
    agreeing = write(tmp_path, "agreeing.csv", "player,qid,answer,kind\nBot,1,alpha,ai\nKid,1,alpha,\n")
    assert read_answers(agreeing, questions, ai_names=["Bot", "kid"])["kind"].tolist() == ["ai", "ai"]


def test_names_that_differ_only_by_case_are_a_problem(tmp_path, questions):
    path = write(
        tmp_path, "answers.csv", "player,qid,answer\nMinjun,1,alpha\nJisu,1,alpha\nminjun,2,alpha\nMINJUN,4,alpha\n"
    )
    with pytest.raises(AnalysisInputError) as excinfo:
        read_answers(path, questions)
    assert problems_of(excinfo) == [
        (
            f"{path}: rows 2, 4, 5, player: 'Minjun' and 'minjun' and 'MINJUN' differ only by case (votes and sheets "
            "match names case-insensitively)"
        ),
    ]


def test_an_option_letter_or_index_beyond_the_options_is_a_problem(tmp_path, questions):
    path = write(tmp_path, "answers.csv", "player,qid,answer\nP,1,F\nP,2,7\nP,4,e\nP,5,4\nQ,1,f\n")
    with pytest.raises(AnalysisInputError) as excinfo:
        read_answers(path, questions)
    assert problems_of(excinfo) == [
        f"{path}: row 2, answer: 'F' names no option of question '1' (5 options: A-E or 0-4)",
        f"{path}: row 3, answer: '7' names no option of question '2' (5 options: A-E or 0-4)",
        f"{path}: row 6, answer: 'f' names no option of question '1' (5 options: A-E or 0-4)",
    ]
    # "e" and "4" are the last option; free text that matches no option stays a wrong answer
    fine = write(tmp_path, "fine.csv", "player,qid,answer\nP,1,e\nP,2,4\nP,4,Alpha\nP,5,zeta or so\n")
    assert read_answers(fine, questions)["correct"].tolist() == [False, False, True, False]


def test_a_blank_group_cell_takes_the_jurors_label(tmp_path):
    path = write(tmp_path, "votes.csv", "round,juror,vote,group\n1,j1,AI,expert\n2,j1,Kid,\n1,j2,AI,\n2,j2,AI,\n")
    votes = read_votes(path, PLAYERS)
    assert votes["group"].tolist() == ["expert", "expert", None, None]
    assert vote_stats(votes, PLAYERS).groups.set_index("group").loc["expert", "votes"] == 2


CASE_STUDY_PLAYERS = ["Kid4", "Kid10", "Teen14", "Adult20", "AI"]


def test_juror_facets_are_read_from_the_case_study_file():
    """expert (yes/no) on every row, age_band on the round-1 rows only: later rows take the juror's band."""
    votes = read_votes(DATA / "case_study_votes_facets.csv", CASE_STUDY_PLAYERS)
    assert list(votes.columns) == [*VOTE_COLUMNS, "expert", "age_band"]  # no group column in the file
    per_juror = votes.drop_duplicates("juror").set_index("juror")
    assert (per_juror["expert"] == "expert").sum() == 6 and per_juror.loc["J07", "expert"] == "non-expert"
    assert per_juror["age_band"].value_counts().to_dict() == {"40s": 6, "20s": 5, "30s": 5}
    assert votes.loc[votes["round"] == 5, "age_band"].tolist()[:2] == ["20s", "30s"]  # J01, J02 in round 5
    players = pd.DataFrame({"name": CASE_STUDY_PLAYERS, "kind": ["human"] * 4 + ["ai"]})
    groups = vote_stats(votes, players).groups
    # experts J01-J06 25 of 30 votes on the AI, the others 10 of 43; by age band see tests/analysis/test_votes.py
    assert groups[["facet", "group", "jurors", "votes", "ai_votes"]].values.tolist() == [
        ["expert", "expert", 6, 30, 25],
        ["expert", "non-expert", 10, 43, 10],
        ["age_band", "20s", 5, 23, 9],
        ["age_band", "30s", 5, 23, 13],
        ["age_band", "40s", 6, 27, 13],
    ]


def test_every_facet_column_is_read_and_checked(tmp_path):
    path = write(
        tmp_path,
        "votes.csv",
        "\n".join(
            [
                "round,juror,vote,Sex,Age_Band,expert,group",
                "1,j1,AI,F,20s,Yes,panel",
                "2,j1,Kid,,,TRUE,",  # blank cells take j1's labels; Yes and TRUE are one label
                "1,j2,AI,,30s,0,online",
                "2,j2,AI,,,non-expert,",
            ]
        )
        + "\n",
    )
    votes = read_votes(path, PLAYERS)
    assert list(votes.columns) == [*VOTE_COLUMNS, "group", "expert", "age_band", "sex"]  # the report order
    assert votes[["group", "expert", "age_band", "sex"]].values.tolist() == [
        ["panel", "expert", "20s", "F"],
        ["panel", "expert", "20s", "F"],
        ["online", "non-expert", "30s", None],
        ["online", "non-expert", "30s", None],
    ]
    bad = write(
        tmp_path,
        "bad.csv",
        "\n".join(
            [
                "round,juror,vote,expert,age_band",
                "1,j1,AI,maybe,20s",  # row 2: not a yes/no
                "2,j1,Kid,,30s",  # rows 2, 3: j1 in two age bands
                "1,j2,AI,yes,",  # rows 4, 5: j2 both expert and not
                "2,j2,AI,no,",
            ]
        )
        + "\n",
    )
    with pytest.raises(AnalysisInputError) as excinfo:
        read_votes(bad, PLAYERS)
    assert problems_of(excinfo) == [
        f"{bad}: rows 2, 3, age_band: juror 'j1' is in more than one age_band group",
        f"{bad}: row 2, expert: must be yes/no, true/false, 1/0 or expert/non-expert, not 'maybe'",
        f"{bad}: rows 4, 5, expert: juror 'j2' is in more than one expert group",
    ]


SHEET_PLAYERS = PLAYERS["name"].tolist()


def test_sheets_are_read(tmp_path, questions):
    path = write(
        tmp_path,
        "sheet.csv",
        "\n".join(
            [
                "Juror,QID,Player,looks_like_ai",
                "j1,1,ai,1",
                f"j1,1,{KOREAN},false",
                "j2,1,Kid,",  # no mark
                "j2,2,AI,TRUE",
            ]
        )
        + "\n",
    )
    sheet = read_sheet(path, questions, PLAYERS)
    assert list(sheet.columns) == list(SHEET_COLUMNS)
    assert sheet["player"].tolist() == ["AI", KOREAN, "Kid", "AI"]  # the players' spelling
    assert sheet["qid"].tolist() == ["1", "1", "1", "2"]
    assert sheet["looks_like_ai"].tolist() == [True, False, pd.NA, True]
    assert read_sheet(path, questions, SHEET_PLAYERS).equals(sheet)


def test_every_sheet_problem_is_collected(tmp_path, questions):
    path = write(
        tmp_path,
        "sheet.csv",
        "\n".join(
            [
                "juror,qid,player,looks_like_ai",
                ",1,AI,1",  # row 2: no juror
                "j1,99,AI,1",  # row 3: unknown question
                "j1,1,H2,1",  # row 4: unknown player
                "j1,1,AI,yes",  # row 5: bad mark
                "j2,2,AI,1",  # rows 6, 7: same juror, question and player
                "j2,2,ai,0",
            ]
        )
        + "\n",
    )
    with pytest.raises(AnalysisInputError) as excinfo:
        read_sheet(path, questions, PLAYERS)
    assert problems_of(excinfo) == [
        f"{path}: row 2, juror: is empty",
        f"{path}: row 3, qid: unknown question '99'",
        (
            f"{path}: row 4, player: unknown player 'H2' (no row in the answers file; a player who answered nothing "
            "needs rows with an empty answer)"
        ),
        f"{path}: row 5, looks_like_ai: must be 0/1/true/false (or empty: no mark), not 'yes'",
        f"{path}: rows 6, 7, juror/qid/player: more than one row for j2 on 2 / AI",
    ]
    missing = write(tmp_path, "missing.csv", "juror,qid,player\nj1,1,AI\n")
    with pytest.raises(AnalysisInputError) as excinfo:
        read_sheet(missing, questions, PLAYERS)
    assert problems_of(excinfo) == [f"{missing}: row 1, looks_like_ai: required column is missing"]


def test_chosen_options_text_letter_index_and_range():
    questions = pd.DataFrame(
        {"qid": ["m", "bare", "o"], "type": ["mcq", "mcq", "open"], "choices": [["Kyungsu", "Deogi", "b"], [], []]}
    )
    qids = pd.Series(["m", "m", "m", "m", "m", "m", "bare", "o"])
    answers = pd.Series(["deogi", "B", "2", "c", "3", "someone else", "D", "B"])
    chosen, out_of_range = chosen_options(qids, answers, questions)
    # "B" is option 2's text, so it wins over letter B; "c" = option 2; "3" is beyond three options;
    # an mcq that lists no options cannot be range-checked; open questions name no option
    assert chosen.tolist()[:3] == [1.0, 2.0, 2.0]
    assert chosen.tolist()[3] == 2.0 and np.isnan(chosen[4]) and np.isnan(chosen[5])
    assert chosen[6] == 3.0 and np.isnan(chosen[7])
    assert out_of_range.tolist() == [False, False, False, False, True, False, False, False]
