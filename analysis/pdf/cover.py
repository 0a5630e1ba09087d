"""The first lines of every PDF: its title, the facts of the session, and the characters the font cannot show."""

from __future__ import annotations

from collections.abc import Sequence

from reportlab.platypus import Flowable, Spacer

from .. import charts
from ..words import t
from .layout import frame_width
from .look import Look
from .tables import Column, ruled_table
from .text import character_names, markup


def cover(title: str, session_info: dict | None, look: Look, missing: Sequence[str] = ()) -> list[Flowable]:
    story: list[Flowable] = [look.para(markup(title), "title")]
    if session_info:
        rows = [[markup(key), markup(value)] for key, value in session_info.items()]
        story += [
            ruled_table(look, [Column("", 0.25), Column("", 0.75)], rows, frame_width() * 0.7, header=False),
            Spacer(1, 6),
        ]
    if missing:
        story.append(
            look.para(
                t(
                    "<font color='#{colour}'><b>Note:</b></font> characters the embedded font cannot show: "
                    "{names}. They print as blanks or boxes in this PDF; the CSV files hold the exact text.",
                    colour=charts.VERMILLION.hexval()[2:],
                    names=markup(character_names(missing)),
                )
            )
        )
    return story
