"""How the study report names its groups and sessions, and says that a section has nothing to show."""

from __future__ import annotations

from reportlab.platypus import Flowable

from .. import charts
from ..pdf.look import Look
from ..pdf.text import markup
from ..study import ALL, NO_PROGRAM, NO_STAGE
from ..words import t

OUR_LABELS = (NO_STAGE, NO_PROGRAM, ALL)  # the study's own words among the labels: translated, not user text


def group_label(value) -> str:
    """A group label as markup: the study's own words translated, the users' escaped."""
    return t(value) if value in OUR_LABELS else markup(value)


def chart_label(label: str) -> str:
    """A group label as drawn in a chart (plain text: charts escape nothing): ours translated."""
    return t(label) if label in OUR_LABELS else label


def session_label(code: str) -> str:
    return f"<b>{t('all')}</b>" if code == ALL else markup(code)


def rule_short(row) -> str:
    """The pass rule and its parameter in a few words: ``chance (α 0.05)``, ``threshold (≤ 70 %)``."""
    if row.pass_rule == "chance":
        return f"chance (α {row.alpha:g})"
    if row.pass_rule == "threshold":
        return f"threshold (≤ {row.threshold_pct:g} %)"
    return markup(row.pass_rule)


def nothing_note(look: Look, text: str) -> list[Flowable]:
    return [look.para(f"<font color='#{charts.GREY.hexval()[2:]}'>{text}</font>")]
