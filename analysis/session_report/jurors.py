"""The jurors: detection per juror group (a block per facet), the jurors themselves, and their confidence."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reportlab.platypus import Flowable

from ..pdf.look import Look
from ..pdf.numbers import interval_text, number_text
from ..pdf.tables import Column, block_starts, ruled_table
from ..pdf.text import markup
from ..words import t

if TYPE_CHECKING:
    from ..votes import VoteStats


FACET_TITLES = {"group": "Group", "expert": "Expertise", "age_band": "Age band", "sex": "Sex"}

MAX_JUROR_ROWS = 100  # a streamed session has thousands of jurors: the PDF lists the first ones only


def facet_label(facet: str, value) -> str:
    """A juror's label in a facet: expertise is the program's own word (in the report's language), the
    other facets are what the host wrote."""
    return t(value) if facet == "expert" and value in ("expert", "non-expert") else markup(value)


def juror_tables(stats: VoteStats, look: Look, width: float) -> list[Flowable]:
    """Detection per juror group, the jurors (the first :data:`MAX_JUROR_ROWS`), and their confidence."""
    return _group_table(stats, look, width) + _juror_list(stats, look, width) + _confidence_table(stats, look, width)


def _group_table(stats: VoteStats, look: Look, width: float) -> list[Flowable]:
    story: list[Flowable] = [look.para(t("Juror groups"), "h2")]
    if len(stats.groups):
        starts = block_starts(list(stats.groups["facet"]))
        rows = [
            [
                t(FACET_TITLES[g.facet]) if start else "",
                facet_label(g.facet, g.group),
                str(g.jurors),
                str(g.votes),
                str(g.ai_votes),
                number_text(g.detection_pct),
                interval_text(g.ci_low, g.ci_high),
            ]
            for g, start in zip(stats.groups.itertuples(index=False), starts)
        ]
        story += [
            ruled_table(
                look,
                [
                    Column(t("Facet"), 0.14),
                    Column(t("Group"), 0.2),
                    Column(t("Jurors"), 0.09, True),
                    Column(t("Votes"), 0.09, True),
                    Column(t("AI votes"), 0.1, True),
                    Column(t("Detection %"), 0.13, True),
                    Column(t("95 % CI"), 0.13, True),
                ],
                rows,
                width,
                block_starts=starts,
            ),
            look.para(
                t(
                    "Detection = share of the group's cast votes (all rounds) naming an AI player; jurors = "
                    "jurors with the label, including those who only abstained."
                ),
                "caption",
            ),
        ]
    else:
        story.append(look.para(t("No juror carried a group label.")))
    return story


def _juror_list(stats: VoteStats, look: Look, width: float) -> list[Flowable]:
    jurors = stats.jurors
    story: list[Flowable] = [
        look.para(t("Jurors"), "h2"),
        ruled_table(
            look,
            [
                Column(t("Juror"), 0.16),
                *(Column(t(FACET_TITLES[facet]), 0.12) for facet in stats.facets),
                Column(t("Rounds"), 0.09, True),
                Column(t("Votes"), 0.09, True),
                Column(t("Hits"), 0.09, True),
                Column(t("Hit rate %"), 0.09, True),
            ],
            [
                [
                    markup(j["juror"]),
                    *(facet_label(facet, j[facet]) for facet in stats.facets),
                    str(j["rounds"]),
                    str(j["votes"]),
                    str(j["hits"]),
                    number_text(j["hit_rate_pct"]),
                ]
                for j in jurors.head(MAX_JUROR_ROWS).to_dict("records")
            ],
            width,
            zebra=True,
        ),
    ]
    if len(jurors) > MAX_JUROR_ROWS:
        story.append(
            look.para(
                t("First {shown} of {count} jurors; all are in jurors.csv.", shown=MAX_JUROR_ROWS, count=len(jurors)),
                "caption",
            )
        )
    story.append(
        look.para(
            t(
                "Mean hit rate {rate} % over the jurors who cast a vote (hits = votes naming an AI player).",
                rate=number_text(stats.summary["mean_hit_rate_pct"]),
            ),
            "caption",
        )
    )
    return story


def _confidence_table(stats: VoteStats, look: Look, width: float) -> list[Flowable]:
    confidence = stats.confidence
    return [
        look.para(t("Confidence"), "h2"),
        ruled_table(
            look,
            [
                Column(t("Mean confidence, right votes"), 0.28, True),
                Column(t("Mean confidence, wrong votes"), 0.28, True),
                Column(t("Brier score"), 0.17, True),
                Column(t("Votes with a confidence"), 0.27, True),
            ],
            [
                [
                    number_text(confidence.get("mean_right"), 2),
                    number_text(confidence.get("mean_wrong"), 2),
                    number_text(confidence.get("brier"), 3),
                    str(confidence.get("votes", 0)),
                ]
            ],
            width * 0.85,
        ),
        look.para(
            t(
                "Confidence on a 1–5 scale; the Brier score reads confidence as the probability of being right "
                "(1 = a blind guess, 5 = certain); lower is better."
            ),
            "caption",
        ),
    ]
