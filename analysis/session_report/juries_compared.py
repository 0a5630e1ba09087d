"""Juries compared: when more than the live jury judged the session (a displaced jury, AI juries), each jury's
detection per round and pooled with its Wilson interval, the test across juries, and each jury's share of votes per
player against chance (:func:`analysis.juries.jury_stats`; definitions: docs/analysis.md, "Comparing juries").

A session only the live jury judged has no such section and no ``jury_*.csv``: the live jury's figures are the
tallies' own.
"""

from __future__ import annotations

import pandas as pd
from reportlab.platypus import Flowable, KeepTogether, Spacer

from ..juries import CHI_SQUARED, FISHER, JuryStats
from ..jury_charts import jury_detection_chart, jury_name, jury_shares_chart
from ..pdf.layout import frame_width
from ..pdf.look import Look
from ..pdf.numbers import interval_text, number_text, p_equation
from ..pdf.tables import Column, block_starts, ruled_table
from ..pdf.text import markup, user_texts
from ..words import t

JURY_CSVS = ("jury_detection.csv", "jury_tests.csv", "jury_shares.csv")
DETECTION_CSV_COLUMNS = (
    "scope",
    "round",
    "cut_short",
    "jury",
    "players",
    "rounds",
    "votes",
    "abstentions",
    "ai_votes",
    "detection_pct",
    "chance_pct",
    "ci_low",
    "ci_high",
)
TEST_CSV_COLUMNS = ("scope", "round", "juries", "test", "statistic", "dof", "p_value", "note")
TEST_NAMES = {FISHER: "Fisher's exact test", CHI_SQUARED: "chi-squared test"}


def jury_csv_tables(stats: JuryStats) -> dict[str, pd.DataFrame]:
    """``jury_detection.csv`` (a row per jury and round, ``scope`` round, then per jury pooled, ``scope`` pooled),
    ``jury_tests.csv`` (the test across juries per round, then pooled) and ``jury_shares.csv``."""
    detection = pd.concat(
        [
            stats.rounds.assign(scope="round", rounds=pd.NA),
            stats.pooled.assign(scope="pooled", round=pd.NA, cut_short=pd.NA, players=pd.NA),
        ],
        ignore_index=True,
    )[list(DETECTION_CSV_COLUMNS)]
    tests = pd.concat(
        [stats.round_tests.assign(scope="round"), stats.pooled_test.assign(scope="pooled", round=pd.NA)],
        ignore_index=True,
    )[list(TEST_CSV_COLUMNS)]
    return {"jury_detection.csv": detection, "jury_tests.csv": tests, "jury_shares.csv": stats.shares}


def juries_texts(stats: JuryStats | None) -> set[str]:
    if stats is None:
        return set()
    return user_texts([jury_name(jury) for jury in stats.juries], stats.shares["player"], stats.shares["alias"])


def juries_section(stats: JuryStats, look: Look) -> list[Flowable]:
    width = frame_width()
    names = ", ".join(markup(jury_name(jury)) for jury in stats.juries)
    story: list[Flowable] = [
        look.para(t("Juries compared"), "h1"),
        look.para(
            t(
                "Juries: {names}. Detection = share of a jury's cast votes naming an AI player, with its 95 % Wilson "
                "interval; the live tallies above count the live jury alone.",
                names=names,
            )
        ),
        look.para(t("Pooled over rounds"), "h2"),
        _pooled_table(stats, look, width),
        look.para(_test_sentence(stats.pooled_test.iloc[0]), "caption"),
        jury_detection_chart(stats.rounds, stats.pooled, stats.juries, width=width, height=210),
        look.para(
            t(
                "Bars: detection per jury, per round and pooled; whiskers: 95 % Wilson interval; dashed: chance "
                "(AI players / players; pooled: weighted by the jury's votes per round); a grey dash: no cast vote."
            ),
            "caption",
        ),
        KeepTogether([look.para(t("Per round"), "h2"), _rounds_table(stats, look, width)]),
        *_cut_short_note(stats, look),
        Spacer(1, 6),
        look.para(
            t(
                "Test across juries on (AI votes, other cast votes) x jury: Fisher's exact test (two-sided; statistic: "
                "the odds ratio, first jury over second) for two juries, the chi-squared test of independence for "
                "three or more. Votes are treated as independent."
            ),
            "caption",
        ),
        KeepTogether(
            [
                look.para(t("Share of votes per player"), "h2"),
                jury_shares_chart(stats.shares, stats.juries, width=width, height=200),
                look.para(
                    t(
                        "Each jury's share of its cast votes in the round per player (by alias; an AI player's "
                        "label in vermillion); dashed: chance (100 / players of the round)."
                    ),
                    "caption",
                ),
            ]
        ),
        _shares_table(stats, look, width),
    ]
    return story


def _pooled_table(stats: JuryStats, look: Look, width: float):
    rows = [
        [
            markup(jury_name(row.jury)),
            str(row.rounds),
            str(row.votes),
            str(row.abstentions),
            str(row.ai_votes),
            number_text(row.detection_pct),
            interval_text(row.ci_low, row.ci_high),
            number_text(row.chance_pct),
        ]
        for row in stats.pooled.itertuples(index=False)
    ]
    return ruled_table(
        look,
        [
            Column(t("Jury"), 0.24),
            Column(t("Rounds"), 0.09, True),
            Column(t("Votes"), 0.09, True),
            Column(t("Abstentions"), 0.12, True),
            Column(t("AI votes"), 0.1, True),
            Column(t("Detection %"), 0.13, True),
            Column(t("95 % CI"), 0.12, True),
            Column(t("Chance %"), 0.11, True),
        ],
        rows,
        width,
    )


def _rounds_table(stats: JuryStats, look: Look, width: float):
    tests = stats.round_tests.set_index("round")
    rank = {jury: position for position, jury in enumerate(stats.juries)}
    by_round = stats.rounds.assign(rank=stats.rounds["jury"].map(rank)).sort_values(["round", "rank"], kind="stable")
    starts = block_starts(list(by_round["round"]))
    rows = []
    for row, start in zip(by_round.itertuples(index=False), starts):
        test = tests.loc[row.round]
        rows.append(
            [
                (t("{round} (cut short)", round=row.round) if row.cut_short else str(row.round)) if start else "",
                markup(jury_name(row.jury)),
                str(row.votes),
                str(row.ai_votes),
                number_text(row.detection_pct),
                interval_text(row.ci_low, row.ci_high),
                number_text(row.chance_pct),
                _test_cell(test) if start else "",
            ]
        )
    return ruled_table(
        look,
        [
            Column(t("Round"), 0.11),
            Column(t("Jury"), 0.16),
            Column(t("Votes"), 0.07, True),
            Column(t("AI votes"), 0.09, True),
            Column(t("Detection %"), 0.12, True),
            Column(t("95 % CI"), 0.11, True),
            Column(t("Chance %"), 0.1, True),
            Column(t("Across juries"), 0.26),
        ],
        rows,
        width,
        block_starts=starts,
    )


def _cut_short_note(stats: JuryStats, look: Look) -> list[Flowable]:
    cut = sorted(set(stats.rounds.loc[stats.rounds["cut_short"], "round"]))
    if not cut:
        return []
    text = t(
        "Cut short: round {rounds} began in the live session but stopped before its vote opened, so the live jury "
        "never judged it; the host offered it to the other juries all the same. It is shown here alone and left out "
        "of every pooled figure.",
        rounds=", ".join(map(str, cut)),
    )
    return [look.para(text, "caption")]


def _shares_table(stats: JuryStats, look: Look, width: float):
    shares = stats.shares
    juries = list(stats.juries)
    share = 0.5 / max(len(juries), 1)
    rows, keys = [], []
    for (number, player), block in shares.groupby(["round", "player"], sort=False):
        first = block.iloc[0]
        by_jury = block.set_index("jury")
        name = look.player(player)
        rows.append(
            [
                str(number),
                markup(first["alias"]) if isinstance(first["alias"], str) else "–",
                name,
                *(
                    f"{number_text(by_jury.loc[jury, 'share_pct'])} ({int(by_jury.loc[jury, 'votes'])})"
                    for jury in juries
                ),
                number_text(first["chance_pct"]),
            ]
        )
        keys.append(number)
    starts = block_starts(keys)
    for row, start in zip(rows, starts):
        if not start:
            row[0] = ""
    return ruled_table(
        look,
        [
            Column(t("Round"), 0.08),
            Column(t("Alias"), 0.1),
            Column(t("Player"), 0.2),
            *(Column(markup(jury_name(jury)), share, True) for jury in juries),
            Column(t("Chance %"), 0.1, True),
        ],
        rows,
        width,
        block_starts=starts,
    )


def _test_cell(test) -> str:
    if pd.isna(test["p_value"]):
        return "–"
    return f"{t(TEST_NAMES[test['test']])}, {p_equation(test['p_value'])}"


def _test_sentence(test) -> str:
    if pd.isna(test["p_value"]):
        return t("Across juries: no test ({note}).", note=markup(test["note"] or ""))
    if test["test"] == FISHER:
        sentence = t(
            "Across juries, pooled: Fisher's exact test, odds ratio {statistic}, {p}.",
            statistic=number_text(test["statistic"], 2),
            p=p_equation(test["p_value"]),
        )
    else:
        sentence = t(
            "Across juries, pooled: chi-squared test, χ² = {statistic} (df {dof}), {p}.",
            statistic=number_text(test["statistic"], 2),
            dof=test["dof"],
            p=p_equation(test["p_value"]),
        )
    return sentence + (f" ({markup(test['note'])})" if isinstance(test["note"], str) else "")
