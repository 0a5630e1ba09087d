"""The question set: its composition (types, clip kinds, untagged questions) and the element-frequency chart."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
from reportlab.platypus import Flowable, Spacer

from .. import charts
from ..composition import Composition
from ..pdf.layout import frame_width
from ..pdf.look import Look
from ..pdf.tables import Column, ruled_table
from ..pdf.text import markup
from ..words import t

if TYPE_CHECKING:
    from ..cogme import Profiles


def question_set_section(
    set_composition: Composition, question_set: pd.DataFrame, profiles: Profiles, look: Look
) -> list[Flowable]:
    width = frame_width()
    types, clips = set_composition.types, set_composition.clips
    untagged = set_composition.untagged
    untagged_text = t("<b>{count}</b> untagged", count=len(untagged)) + (
        f" ({markup(', '.join(untagged[:20]))}{', …' if len(untagged) > 20 else ''})" if untagged else ""
    )
    return [
        look.para(t("Question set"), "h1"),
        look.para(
            t(
                "<b>{total}</b> questions: {mcq} multiple-choice, {open} open-ended; {shot} on shot clips, "
                "{scene} on scene clips, {none} without a clip kind; {untagged}.",
                total=set_composition.total,
                mcq=types["mcq"],
                open=types["open"],
                shot=clips["shot"],
                scene=clips["scene"],
                none=clips["none"],
                untagged=untagged_text,
            )
        ),
        ruled_table(
            look,
            [Column(t("Facet"), 0.34), Column(t("Value"), 0.38), Column(t("Questions"), 0.28, True)],
            [[t(row.facet), t(row.value), str(row.questions)] for row in question_set.itertuples(index=False)],
            width * 0.45,
        ),
        Spacer(1, 10),
        charts.element_chart(set_composition.elements, look.players, profiles.elements, width=width),
        look.para(
            t(
                "Element frequency: questions tagged with each CogME element (optional elements only when "
                "used), and per player how many of them were answered correctly (solid) or missed (light)."
            ),
            "caption",
        ),
    ]
