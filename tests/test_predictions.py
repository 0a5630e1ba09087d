"""`vtt analyze --answers` with predictions as benchmarks publish them: each shape gives the same profile as the
equivalent answers CSV; predictions outside the set are counted and named; a coverage line per player."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.support.paths import DATA
from vtt.cli import main

SPEC = str(DATA / "spec_examples.csv")  # q1, q2 multiple choice; q3-q5 open
NATIVE_MCQ = "player,qid,answer\nModel-X,q1,1\nModel-X,q2,Kyungsu\n"  # wrong on q1, right on q2
MOVIECORE_QUESTIONS = {
    "movies/v1.mp4": [
        {"question": "Why does she leave?", "answer": "She is hurt."},
        {"question": "What does he feel?", "answer": "Regret."},
    ],
    "movies/v2.mp4": [{"question": "Who calls?", "answer": "Her mother."}],
}


def analyze(*args: str):
    result = CliRunner().invoke(main, ["analyze", *args, "--json"], catch_exceptions=False)
    return result


def profile(result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["players"]


@pytest.fixture
def native(tmp_path):
    path = tmp_path / "answers.csv"
    path.write_text(NATIVE_MCQ, encoding="utf-8")
    return profile(analyze("--questions", SPEC, "--answers", str(path)))


@pytest.mark.parametrize(
    "name, content",
    [
        ("submission.json", json.dumps({"q1": 1, "q2": 0})),  # a leaderboard submission: qid -> option index
        ("preds.jsonl", '{"qid": "q1", "prediction": "B"}\n{"qid": "q2", "prediction": "A"}\n'),  # letters
        ("preds.csv", "qid,pred\nq1,A black dress\nq2,Kyungsu\n"),  # option text
    ],
)
def test_each_mcq_prediction_shape_gives_the_native_profile(tmp_path, native, name, content):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    result = analyze("--questions", SPEC, "--answers", str(path), "--player", "Model-X")
    assert profile(result) == native
    assert "Model-X answered 2 of 5 questions" in result.stderr


def test_the_players_name_defaults_to_the_files_stem(tmp_path):
    path = tmp_path / "llava-video-7b.json"
    path.write_text(json.dumps({"q1": 0, "q2": 0}), encoding="utf-8")
    result = analyze("--questions", SPEC, "--answers", str(path))
    assert [player["name"] for player in profile(result)] == ["llava-video-7b"]


def test_predictions_outside_the_set_are_counted_and_named(tmp_path):
    path = tmp_path / "submission.json"
    path.write_text(json.dumps({"q1": 1, "q2": 0, "q77": 3, "q78": 1}), encoding="utf-8")
    result = analyze("--questions", SPEC, "--answers", str(path), "--player", "Model-X")
    assert result.exit_code == 0, result.output
    assert (
        "warning: 2 predictions in submission.json name questions not in the 5-question set, left out: 'q77', 'q78'"
    ) in result.stderr


def test_moviecore_predictions_are_open_answers_graded_by_their_classification(tmp_path):
    questions = tmp_path / "moviecore_test.json"
    questions.write_text(json.dumps(MOVIECORE_QUESTIONS), encoding="utf-8")
    native = tmp_path / "answers.csv"
    native.write_text(
        "player,qid,answer,correct\nM,v1-01,She was hurt,1\nM,v1-02,Anger,0\nM,v2-01,Her mother,1\n", encoding="utf-8"
    )
    predictions = tmp_path / "moviecore_preds.json"
    predictions.write_text(
        json.dumps(
            {
                "movies/v1.mp4": [
                    {
                        "question": "Why does she leave?",
                        "answer": "She is hurt.",
                        "pred": "She was hurt",
                        "classification": "correct",
                    },
                    {
                        "question": "What does he feel?",
                        "answer": "Regret.",
                        "pred": "Anger",
                        "classification": "incorrect",
                    },
                ],
                "movies/v2.mp4": [
                    {"question": "Who calls?", "answer": "Her mother.", "pred": "Her mother", "classification": "yes"}
                ],
            }
        ),
        encoding="utf-8",
    )
    expected = profile(analyze("--questions", str(questions), "--answers", str(native)))
    result = analyze("--questions", str(questions), "--answers", str(predictions), "--player", "M")
    assert profile(result) == expected
    assert "M answered 3 of 3 questions" in result.stderr


def test_a_prediction_that_names_no_option_is_an_error_naming_it(tmp_path):
    path = tmp_path / "preds.jsonl"
    path.write_text('{"qid": "q1", "prediction": "F"}\n{"qid": "q2", "pred": 0}\n', encoding="utf-8")
    result = analyze("--questions", SPEC, "--answers", str(path))
    assert result.exit_code == 1
    assert "'F' names no option of question 'q1'" in result.output


def test_player_is_refused_for_an_answers_file_with_a_player_column(tmp_path):
    path = tmp_path / "answers.csv"
    path.write_text(NATIVE_MCQ, encoding="utf-8")
    result = analyze("--questions", SPEC, "--answers", str(path), "--player", "X")
    assert result.exit_code == 1 and "--player names the player of a predictions file" in result.output


def test_analyze_takes_a_split_without_keys_when_the_answers_say_what_is_correct(tmp_path):
    split = tmp_path / "tvqa_test.jsonl"
    split.write_text(
        "".join(
            json.dumps(
                {
                    "qid": n,
                    "q": f"Why ({n})?",
                    "a0": "x",
                    "a1": "y",
                    "a2": "z",
                    "a3": "w",
                    "a4": "v",
                    "vid_name": "c",
                    "ts": "1-4",
                }
            )
            + "\n"
            for n in range(3)
        ),
        encoding="utf-8",
    )
    graded = tmp_path / "graded.csv"
    graded.write_text("qid,pred,correct\n0,x,1\n1,y,0\n2,z,1\n", encoding="utf-8")
    out = tmp_path / "report"
    result = CliRunner().invoke(
        main,
        ["analyze", "--questions", str(split), "--answers", str(graded), "--player", "M", "--out", str(out)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    import subprocess

    import pandas as pd

    cover = subprocess.run(
        ["pdftotext", "-l", "1", str(out / "report.pdf"), "-"], capture_output=True, text=True, check=True
    ).stdout
    words = " ".join(cover.split())  # the cover's table wraps its cells
    assert "Questions without a key" in words and "3 (0, 1, 2)" in words
    players = pd.read_csv(out / "profile_players.csv").set_index("player")
    assert players.loc["M", ["questions", "correct"]].tolist() == [3, 2]
    ungraded = tmp_path / "ungraded.csv"
    ungraded.write_text("qid,pred\n0,x\n", encoding="utf-8")
    refused = analyze("--questions", str(split), "--answers", str(ungraded), "--player", "M")
    assert refused.exit_code == 1 and "question '0' is open-ended or has no key" in refused.output
