"""The jury's votes: detection per round against chance, the votes per player per round, the pass rule and its
statistic, the verdict per AI player; then the juror tables and the judgment sheet's exposure."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
from reportlab.platypus import Flowable, KeepTogether, Spacer, Table

from .. import charts
from ..pdf.layout import frame_width
from ..pdf.look import Look
from ..pdf.numbers import interval_text, number_text, p_equation, p_text
from ..pdf.tables import Column, block_starts, ruled_table
from ..pdf.text import markup, user_texts
from ..words import t
from .exposure import exposure_section
from .jurors import MAX_JUROR_ROWS, juror_tables

if TYPE_CHECKING:
    from ..votes import VoteStats


def jury_section(
    stats: VoteStats | None, tally: pd.DataFrame | None, exposure: pd.DataFrame | None, look: Look
) -> list[Flowable]:
    """The votes (with statistics), then the judgment sheet's exposure table (with one)."""
    story = _tally_section(stats, tally, look) if stats is not None else [look.para(t("Jury"), "h1")]
    if exposure is not None:
        story += exposure_section(exposure, look)
    return story


def jury_texts(stats: VoteStats | None, exposure: pd.DataFrame | None) -> set[str]:
    texts: set[str] = set()
    if stats is not None:
        jurors = stats.jurors.head(MAX_JUROR_ROWS)
        texts |= user_texts(
            stats.tally["player"], stats.groups["group"], *(jurors[c] for c in ("juror", *stats.facets))
        )
    if exposure is not None:
        texts |= user_texts(exposure["qid"])
    return texts


def _tally_section(stats: VoteStats, tally: pd.DataFrame, look: Look) -> list[Flowable]:
    width = frame_width()
    summary = stats.summary
    judged = summary["rounds_with_votes"]
    silent = summary["rounds_without_votes"]
    silent_text = (
        t(" ({silent} round without votes)" if silent == 1 else " ({silent} rounds without votes)", silent=silent)
        if silent
        else ""
    )
    several_slots = bool((stats.rounds["votes"] > stats.rounds["voters"]).any())
    story: list[Flowable] = [
        look.para(t("Jury votes"), "h1"),
        look.para(t("Pass rule: {rule}", rule=rule_text(stats))),
        look.para(
            t(
                "The AI passed <b>{passed} of {judged}</b> rounds{silent}. Overall detection <b>{detection} %</b> of "
                "{votes} cast votes (95 % Wilson CI {ci} %; one-sided exact binomial {p} against chance; both pool the "
                "rounds and treat the votes as independent, which one juror's votes are not, so read them as "
                "approximate); mean detection over rounds {mean} %. One player was named by more than half of the "
                "voting jurors in {majority} of {judged} rounds.",
                passed=summary["rounds_passed"],
                judged=judged,
                silent=silent_text,
                detection=number_text(summary["overall_detection_pct"]),
                votes=summary["overall_votes"],
                ci=interval_text(*summary["overall_ci"]),
                p=p_equation(summary["overall_p_value"]),
                mean=number_text(summary["mean_detection_pct"]),
                majority=summary["majority_rounds"],
            )
        ),
        charts.detection_chart(
            stats.rounds,
            width=width,
            height=210,
            threshold_pct=stats.threshold_pct if stats.pass_rule == "threshold" else None,
        ),
        look.para(
            t(
                "Detection = share of cast votes naming an AI player; whiskers: 95 % Wilson interval; "
                "dashed: chance level (number of AI players / players)."
            ),
            "caption",
        ),
    ]
    # The heading goes into the first round's block: keepWithNext cannot keep it with a KeepTogether.
    heading = [look.para(t("Votes per round"), "h2")]
    if several_slots:
        heading.append(
            look.para(
                t(
                    "Jurors named several players per round (one per AI player): a player's share and the majority are "
                    "counted out of the jurors who voted (each names a player at most once), detection out of all cast "
                    "votes."
                ),
                "caption",
            )
        )
    for row in stats.rounds.itertuples(index=False):
        votes = tally[tally["round"] == row.round]
        story.append(
            KeepTogether(
                [
                    *heading,
                    charts.round_votes_chart(
                        votes, look.players, title=t("Round {round}", round=row.round), width=width, height=150
                    ),
                    Spacer(1, 3),
                    _round_figures(stats, row, votes, look, width, several_slots),
                    Spacer(1, 10),
                ]
            )
        )
        heading = []
    story += heading
    if stats.ai_rounds["player"].nunique() > 1:
        story += _ai_verdicts(stats, look, width)
    story += juror_tables(stats, look, width)
    return story


def _ai_verdicts(stats: VoteStats, look: Look, width: float) -> list[Flowable]:
    """Each AI player judged alone, round by round (sessions with several AI players)."""
    starts = block_starts(list(stats.ai_rounds["round"]))
    rows = []
    for row, start in zip(stats.ai_rounds.itertuples(index=False), starts):
        verdict = t("no votes") if pd.isna(row.passed) else t("passed") if row.passed else t("<b>detected</b>")
        rows.append(
            [
                str(row.round) if start else "",
                look.player(row.player),
                str(row.votes),
                number_text(row.share_pct),
                number_text(row.detection_pct),
                verdict,
            ]
        )
    return [
        look.para(t("Verdict per AI player"), "h2"),
        ruled_table(
            look,
            [
                Column(t("Round"), 0.1),
                Column(t("AI player"), 0.28),
                Column(t("Votes"), 0.1, True),
                Column(t("Share %"), 0.12, True),
                Column(t("Detection %"), 0.14, True),
                Column(t("Result"), 0.14),
            ],
            rows,
            width,
            block_starts=starts,
        ),
        look.para(
            t(
                "Each AI player judged alone under <b>{rule}</b>: {rule_text} Share = of the jurors who voted; "
                "detection = this AI's share of the cast votes.",
                rule=markup(stats.pass_rule),
                rule_text=ai_rule_text(stats),
            ),
            "caption",
        ),
    ]


def ai_rule_text(stats: VoteStats) -> str:
    players = int(stats.rounds["players"].iloc[0])
    texts = {
        "human-tie": "it passes a round when some human drew at least as many votes as it did.",
        "chance": "it passes a round when a one-sided exact binomial test of its votes against 1 / {players} "
        "players is not significant at α = {alpha}.",
        "threshold": "it passes a round when its detection ≤ {threshold} %.",
    }
    return t(texts[stats.pass_rule], players=players, alpha=f"{stats.alpha:g}", threshold=f"{stats.threshold_pct:g}")


def rule_text(stats: VoteStats) -> str:
    texts = {
        "human-tie": "<b>human-tie</b> — the AI passes a round when some human drew at least as many votes "
        "as the AI (2021 public event).",
        "chance": "<b>chance</b> — the AI passes a round when a one-sided exact binomial test of detection "
        "against chance (AI players / players) is not significant at α = {alpha}.",
        "threshold": "<b>threshold</b> — the AI passes a round when detection ≤ {threshold} % "
        "(Turing, 1950: 70 % right identification).",
    }
    if stats.pass_rule not in texts:
        return markup(stats.pass_rule)
    return t(texts[stats.pass_rule], alpha=f"{stats.alpha:g}", threshold=f"{stats.threshold_pct:g}")


def _rule_statistic(stats: VoteStats, row, votes: pd.DataFrame) -> str:
    """The number the round's verdict rests on under the session's pass rule."""
    if stats.pass_rule == "chance":
        return f"{p_equation(row.p_value)} vs α = {stats.alpha:g}"
    if stats.pass_rule == "threshold":
        return f"{number_text(row.detection_pct)} % vs ≤ {stats.threshold_pct:g} %"
    top = votes.groupby("kind")["votes"].max()
    return t("top human {human} vs AI {ai} votes", human=int(top.get("human", 0)), ai=int(top.get("ai", 0)))


def _round_figures(
    stats: VoteStats, row, votes: pd.DataFrame, look: Look, width: float, several_slots: bool = False
) -> Table:
    if pd.isna(row.ai_passed):
        verdict = t("no votes")
    else:
        verdict = t("<b>AI passed</b>") if row.ai_passed else t("<b>AI detected</b>")
    if not row.majority:
        majority = t("none")
    else:  # several slots let two players pass half of the jurors
        majority = look.player(row.majority_player) if row.majority_player is not None else t("several (tied)")
    # with several slots the jurors who voted (the shares' denominator) get a column of their own
    jurors = [Column(t("Jurors"), 0.07, True)] if several_slots else []
    narrow = 0.01 * several_slots  # the Jurors column takes its 0.07 from the columns with room to spare
    return ruled_table(
        look,
        [
            Column(t("Votes"), 0.07, True),
            *jurors,
            Column(t("Abstentions"), 0.1, True),
            Column(t("AI votes"), 0.08, True),
            Column(t("Detection %"), 0.11, True),
            Column(t("95 % CI"), 0.1 - narrow, True),
            Column("p", 0.07 - narrow, True),
            Column(t("Majority"), 0.14 - 2 * narrow),
            Column(t("Statistic ({rule})", rule=markup(stats.pass_rule)), 0.22 - 2 * narrow),
            Column(t("Result"), 0.11 - narrow),
        ],
        [
            [
                str(row.votes),
                *([str(row.voters)] if several_slots else []),
                str(row.abstentions),
                str(row.ai_votes),
                number_text(row.detection_pct),
                interval_text(row.ci_low, row.ci_high),
                p_text(row.p_value),
                majority,
                _rule_statistic(stats, row, votes),
                verdict,
            ]
        ],
        width,
    )
