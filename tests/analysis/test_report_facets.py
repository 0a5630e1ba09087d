"""The PDF reports' groups and jurors by every facet, and the verdict per AI player.

The PDFs are read back with poppler (pdftotext, pdfinfo, pdffonts), which ``make test`` installs.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from analysis.cogme import profiles
from analysis.session_report import write_reports
from analysis.votes import vote_stats
from tests.support.reports import (
    PLAYERS,
    pdf_text,
    read_csv,
)

pytestmark = pytest.mark.usefixtures("poppler")

# ------------------------------------------------------------------------------ facets, several AIs


def pdf_rows(path: Path) -> list[str]:
    """The PDF's lines as laid out (table rows stay rows), runs of whitespace folded to one space."""
    text = subprocess.run(
        ["pdftotext", "-layout", "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def test_groups_and_jurors_by_every_facet(session, tmp_path):
    """J1 1 of 2 votes on the AI, J2 2 of 2, J3 0 of 2, J4 0 of 1 (abstained in round 1)."""
    questions, answers, votes = session
    votes = votes.assign(
        expert=["yes", "1", "no", ""] + ["true", "yes", "0", "No"],  # J4 blank, then No
        age_band=["20s", "30s", "20s", None] * 2,
    )
    stats = vote_stats(votes, PLAYERS, "chance")
    written = write_reports(
        tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers), stats=stats
    )
    groups = read_csv(written, "groups.csv")
    assert list(groups.columns) == [
        "facet",
        "group",
        "jurors",
        "votes",
        "ai_votes",
        "detection_pct",
        "ci_low",
        "ci_high",
    ]
    assert groups[["facet", "group", "jurors", "votes", "ai_votes", "detection_pct"]].values.tolist() == [
        ["group", "expert", 2, 4, 3, 75.0],
        ["group", "non-expert", 2, 3, 0, 0.0],
        ["expert", "expert", 2, 4, 3, 75.0],
        ["expert", "non-expert", 2, 3, 0, 0.0],
        ["age_band", "20s", 2, 4, 1, 25.0],
        ["age_band", "30s", 1, 2, 2, 100.0],
    ]
    jurors = read_csv(written, "jurors.csv")
    assert list(jurors.columns) == ["juror", "group", "expert", "age_band", "rounds", "votes", "hits", "hit_rate_pct"]
    assert jurors["expert"].tolist() == ["expert", "expert", "non-expert", "non-expert"]
    rows = pdf_rows(written["tallies.pdf"])
    for row in (
        "Group expert 2 4 3 75.0 ",
        "non-expert 2 3 0 0.0 ",
        "Expertise expert 2 4 3 75.0 ",
        "Age band 20s 2 4 1 25.0 ",
        "30s 1 2 2 100.0 ",
    ):
        assert any(line.startswith(row) for line in rows), row
    assert "Juror Group Expertise Age band Rounds Votes Hits Hit rate %" in rows
    assert "J4 non-expert non-expert 1 1 0 0.0" in rows  # no age band


def test_verdict_per_ai_player_with_two_ai_players(session, tmp_path):
    """Adult and VTT agent are both AI; threshold 70 %.

    Round 1: VTT agent 2 of 3 cast votes (66.7 %, passed), Adult 0; round 2: Adult 3 of 4 (75 %,
    detected), VTT agent 1 (25 %).  Pooled, round 1 (66.7 %) passes and round 2 (100 %) does not.
    """
    questions, answers, votes = session
    answers = answers.assign(kind=np.where(answers["player"] == "Adult", "ai", answers["kind"]))
    players = PLAYERS.assign(kind=np.where(PLAYERS["name"] == "Adult", "ai", PLAYERS["kind"]))
    stats = vote_stats(votes, players, "threshold", threshold_pct=70)
    written = write_reports(
        tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers), stats=stats
    )
    ai_rounds = read_csv(written, "ai_rounds.csv")
    assert list(ai_rounds.columns) == ["round", "player", "votes", "share_pct", "detection_pct", "passed"]
    assert ai_rounds[["round", "player", "votes", "passed"]].values.tolist() == [
        [1, "Adult", 0, True],
        [1, "VTT agent", 2, True],
        [2, "Adult", 3, False],
        [2, "VTT agent", 1, True],
    ]
    assert ai_rounds["detection_pct"].tolist() == pytest.approx([0.0, 200 / 3, 75.0, 25.0])
    assert read_csv(written, "rounds.csv")["ai_passed"].tolist() == [True, False]
    rows = pdf_rows(written["tallies.pdf"])
    table = rows[rows.index("Verdict per AI player") :]
    assert table[1:6] == [
        "Round AI player Votes Share % Detection % Result",
        "1 Adult (AI) 0 0.0 0.0 passed",
        "VTT agent (AI) 2 66.7 66.7 passed",
        "2 Adult (AI) 3 75.0 75.0 detected",
        "VTT agent (AI) 1 25.0 25.0 passed",
    ]
    assert "it passes a round when its detection ≤ 70 %." in pdf_text(written["tallies.pdf"])


def test_one_ai_player_gets_ai_rounds_csv_but_no_verdict_table(written):
    assert read_csv(written, "ai_rounds.csv")[["round", "player", "votes"]].values.tolist() == [
        [1, "VTT agent", 2],
        [2, "VTT agent", 1],
    ]
    assert "Verdict per AI player" not in pdf_text(written["tallies.pdf"])
