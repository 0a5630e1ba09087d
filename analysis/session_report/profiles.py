"""The CogME profiles: the scoring method, every player overlaid per module, then a page per player."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
from reportlab.platypus import Flowable, PageBreak, Spacer

from .. import charts
from ..composition import Composition
from ..pdf.layout import RADAR_MIN_SCALE, FitOnPage, frame_width, radar_grid
from ..pdf.look import Look
from ..pdf.numbers import number_text
from ..pdf.tables import Column, ruled_table
from ..pdf.text import markup
from ..taxonomy import Module
from ..words import t

if TYPE_CHECKING:
    from ..cogme import Profiles


METHOD_NOTES = {
    "uniform": "every tag weighs 1, so the weighted score equals the accuracy.",
    "cogsci2024": "every tag of a question weighs its THINKING level W: Recall 1, Recognition 2, "
    "Reasoning 3 (CogME, 2024).",
    "frontiers2022": "TARGET tag i weighs T<sub>i</sub> = SC × W<sub>T</sub> / T<sub>sum</sub> with "
    "SC = NT × W<sub>R</sub> (W<sub>R</sub>: Recall 1, Recognition 1.5, Reasoning 2; "
    "W<sub>T</sub> = 2 for the key target, else 1) (CogME, Frontiers 2022). "
    "CONTENT and THINKING tags weighted by W_R (our reading of the paper, which defines "
    "TARGET weights only).",
}


def profile_section(profiles: Profiles, set_composition: Composition, look: Look) -> list[Flowable]:
    width = frame_width()
    method = markup(profiles.method)
    players = list(profiles.players["player"])
    overlay = [
        charts.module_radar(profiles.elements, module, look.players, legend=False, width=width / 2, height=225)
        for module in _modules_asked(profiles.elements)
    ]
    key = [
        charts.legend_chart(players, look.players, width=width / 2 - 30),
        Spacer(1, 8),
        look.para(
            t(
                "Weighted score % per element under <b>{method}</b>, every player overlaid; rings at 0, 25, "
                "50, 75 and 100 %; n = questions tagged with the element.",
                method=method,
            ),
            "caption",
        ),
    ]
    untagged = len(set_composition.untagged)
    untagged_note = (
        [
            look.para(
                t(
                    "{untagged} of {total} questions carries no CogME tag: counted in overall accuracy only."
                    if untagged == 1
                    else "{untagged} of {total} questions carry no CogME tag: counted in overall accuracy only.",
                    untagged=untagged,
                    total=set_composition.total,
                )
            )
        ]
        if untagged
        else []
    )
    return [
        look.para(t("CogME profiles"), "h1"),
        look.para(
            t("Scoring method: <b>{method}</b> — {note}", method=method, note=t(METHOD_NOTES.get(profiles.method, ""))),
            "method",
        ),
        *untagged_note,
        look.para(
            t(
                "Accuracy = correct / questions tagged with the element (no answer counts as wrong); weighted "
                "score = the same with each question weighted by the method. Element SD = sample standard "
                "deviation (n - 1) of a player's element accuracies over all elements asked."
            )
        ),
        ruled_table(
            look,
            [
                Column(t("Player"), 0.34),
                Column(t("Kind"), 0.1),
                Column(t("Questions"), 0.12, True),
                Column(t("Correct"), 0.12, True),
                Column(t("Accuracy %"), 0.16, True),
                Column(t("Element SD"), 0.16, True),
            ],
            [
                [
                    look.player(p.player),
                    t("AI" if p.kind == "ai" else p.kind),
                    str(p.questions),
                    str(p.correct),
                    number_text(p.accuracy_pct),
                    number_text(p.element_sd, 2),
                ]
                for p in profiles.players.itertuples(index=False)
            ],
            width * 0.8,
        ),
        Spacer(1, 10),
        # whole: on this page, drawn smaller to fit, else on the next one; never a row of it alone on a page
        FitOnPage(radar_grid(overlay, key, width), min_scale=RADAR_MIN_SCALE),
    ] + [
        flowable
        for player in profiles.players.itertuples(index=False)
        for flowable in [PageBreak()] + _player_page(profiles, player, look)
    ]


def _modules_asked(elements: pd.DataFrame) -> list[Module]:
    return [module for module in Module if (elements["module"] == module.value).any()]


def _player_page(profiles: Profiles, player, look: Look) -> list[Flowable]:
    width = frame_width()
    elements = profiles.elements[profiles.elements["player"] == player.player]
    radars = [
        charts.module_radar(elements, module, look.players, players=[player.player], width=width / 2, height=185)
        for module in _modules_asked(elements)
    ]
    caption = look.para(
        t(
            "Shaded: weighted score % per element of {player} under <b>{method}</b>; rings at 0, 25, "
            "50, 75 and 100 %; n = questions tagged with the element.",
            player=look.player(player.player),
            method=markup(profiles.method),
        ),
        "caption",
    )
    rows, previous_module = [], None
    for e in elements.itertuples(index=False):
        rows.append(
            [
                e.module.upper() if e.module != previous_module else "",
                markup(e.element),
                str(e.questions),
                str(e.correct),
                number_text(e.accuracy_pct),
                number_text(e.score_pct),
            ]
        )
        previous_module = e.module
    return [
        look.para(t("Player: {player}", player=look.player(player.player)), "h2"),
        look.para(
            t(
                "AI player · overall accuracy <b>{accuracy} %</b> ({correct} of {questions} questions) · "
                "element SD <b>{sd}</b>"
                if player.kind == "ai"
                else "Human player · overall accuracy <b>{accuracy} %</b> ({correct} of {questions} questions) · "
                "element SD <b>{sd}</b>",
                accuracy=number_text(player.accuracy_pct),
                correct=player.correct,
                questions=player.questions,
                sd=number_text(player.element_sd, 2),
            )
        ),
        radar_grid(radars, [caption], width),
        ruled_table(
            look,
            [
                Column(t("Module"), 0.16),
                Column(t("Element"), 0.24),
                Column(t("Attempts"), 0.14, True),
                Column(t("Correct"), 0.14, True),
                Column(t("Accuracy %"), 0.16, True),
                Column(t("Weighted score %"), 0.16, True),
            ],
            rows,
            width,
        ),
    ]
