"""The PDF reports of odd sessions (abstaining rounds, two AI players, large sessions), and the charts.

The PDFs are read back with poppler (pdftotext, pdfinfo, pdffonts), which ``make test`` installs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import charts
from analysis.cogme import profiles
from analysis.session_report import write_reports
from analysis.session_report.jurors import MAX_JUROR_ROWS
from analysis.votes import vote_stats
from tests.support.reports import (
    PLAYERS,
    pdf_text,
    read_csv,
)

pytestmark = pytest.mark.usefixtures("poppler")

# ----------------------------------------------------------------------------------- odd sessions


def test_reports_survive_abstaining_rounds_and_two_ai_players(session, tmp_path):
    questions, answers, votes = session
    answers = answers.assign(kind=np.where(answers["player"] == "Adult", "ai", answers["kind"]))
    players = PLAYERS.assign(kind=np.where(PLAYERS["name"] == "Adult", "ai", PLAYERS["kind"]))
    silent = pd.DataFrame(
        {"round": 3, "juror": ["J1", "J2"], "vote": [None, None], "slot": 1, "confidence": np.nan, "group": None}
    )
    stats = vote_stats(pd.concat([votes, silent], ignore_index=True), players, "threshold", threshold_pct=70)
    written = write_reports(
        tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers, "cogsci2024"), stats=stats
    )
    text = pdf_text(written["tallies.pdf"])
    assert "no votes" in text and "Adult (AI)" in text and "threshold 70 %" in text


def test_large_sessions_split_the_qa_sheet_and_cut_the_juror_list(session, tmp_path):
    questions, answers, votes = session
    clones = [answers[answers["player"] == "Adult"].assign(player=f"Clone {i}") for i in range(1, 5)]
    answers = pd.concat([answers, *clones], ignore_index=True)  # 8 players
    players = pd.concat([PLAYERS, pd.DataFrame({"name": [f"Clone {i}" for i in range(1, 5)], "kind": "human"})])
    crowd = pd.DataFrame(
        {
            "round": 1,
            "juror": [f"S{i:03d}" for i in range(MAX_JUROR_ROWS)],
            "vote": "VTT agent",
            "slot": 1,
            "confidence": np.nan,
            "group": "stream",
        }
    )
    stats = vote_stats(pd.concat([votes, crowd], ignore_index=True), players, "human-tie")
    written = write_reports(
        tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers, "uniform"), stats=stats
    )
    text = pdf_text(written["report.pdf"])
    assert "Players 1–4 of 8" in text and "Players 5–8 of 8" in text
    assert f"First {MAX_JUROR_ROWS} of {MAX_JUROR_ROWS + 4} jurors; all are in jurors.csv." in text
    assert len(read_csv(written, "jurors.csv")) == MAX_JUROR_ROWS + 4
    assert "top human" in text  # the human-tie statistic


# ----------------------------------------------------------------------------------------- charts


def test_player_styles_set_ai_players_apart():
    styles = charts.player_styles([("a", "human"), ("b", "human"), ("bot", "ai"), ("a", "human")])
    assert list(styles) == ["a", "b", "bot"]
    assert styles["bot"].is_ai and styles["bot"].colour == charts.VERMILLION and styles["bot"].dash
    assert styles["a"].colour != styles["b"].colour and not styles["a"].dash
    assert styles["bot"].width > styles["a"].width


@pytest.mark.parametrize("axes", [["Recall"], ["Recall", "Reasoning"], ["Recall", "Recognition", "Reasoning"]])
def test_radar_is_round_and_bounded_for_any_number_of_axes(axes):
    style = charts.player_styles([("p", "human")])["p"]
    drawing = charts.radar_chart(
        "THINKING",
        axes,
        [charts.RadarSeries("p", [50.0] * len(axes), style)],
        width=240,
        height=400,
        legend=False,
        axis_notes=["n = 1"] * len(axes),
    )
    assert drawing.height < 400  # shrinks to the plot instead of leaving an empty band
    x0, y0, x1, y1 = drawing.getBounds()
    assert x0 >= 0 and y0 >= 0 and x1 <= drawing.width + 1 and y1 <= drawing.height + 1
