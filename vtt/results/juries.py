"""The results page's comparison of juries: when a displaced jury or AI juries judged the session too, each jury's
detection per round and pooled (Wilson 95 % interval), the test across juries and the shares per player, as the
report's section "Juries compared" has them (:func:`analysis.juries.jury_stats`), with its two figures as inline SVG.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from flask_babel import get_locale
from flask_babel import gettext as _

from analysis.juries import CHI_SQUARED, DISPLACED_JURY, FISHER, LIVE_JURY, JuryStats
from analysis.jury_charts import jury_detection_chart, jury_shares_chart
from analysis.svg import inline_svg
from analysis.words import REPORT_LANGUAGES, report_language

from .tables import SessionTables, session_jury_stats

CHART_WIDTH, DETECTION_HEIGHT, SHARES_HEIGHT = 520, 220, 210  # points; the page scales the SVG to its width


@dataclass(frozen=True)
class JuryComparison:
    juries: list[str]
    names: dict[str, str]  # jury label -> its name on the page
    pooled: list[dict]  # a row per jury (JuryStats.pooled, plain)
    pooled_test: dict
    rounds: list[tuple[int, dict, list[dict]]]  # (round, its test, a row per jury)
    shares: list[dict]  # round, alias, player, kind, chance_pct, cells: [(share_pct, votes) per jury]
    cut_short: list[int]  # rounds cut short in the live session that another jury judged: shown, never pooled
    detection_svg: str
    shares_svg: str


def jury_name(jury: str) -> str:
    if jury == LIVE_JURY:
        return _("live jury")
    if jury == DISPLACED_JURY:
        return _("displaced jury")
    return _("AI %(model)s", model=jury.partition(":")[2])


def test_name(test: str | None) -> str:
    return {FISHER: _("Fisher's exact test"), CHI_SQUARED: _("chi-squared test")}.get(test or "", "–")


def jury_comparison(tables: SessionTables) -> tuple[JuryComparison | None, str | None]:
    """The comparison (None when only the live jury voted), or why there is none although other juries voted."""
    try:
        stats = session_jury_stats(tables)
    except ValueError as exc:  # e.g. no AI player: detection means nothing
        return None, str(exc)
    return (None, None) if stats is None else (_comparison(stats), None)


def _comparison(stats: JuryStats) -> JuryComparison:
    juries = list(stats.juries)
    rank = {jury: position for position, jury in enumerate(juries)}
    tests = {int(row["round"]): _plain(row) for row in stats.round_tests.to_dict("records")}
    by_round = stats.rounds.assign(rank=stats.rounds["jury"].map(rank)).sort_values(["round", "rank"], kind="stable")
    rounds = [
        (int(number), tests[int(number)], [_plain(row) for row in rows.drop(columns="rank").to_dict("records")])
        for number, rows in by_round.groupby("round", sort=True)
    ]
    shares = []
    for (number, player), rows in stats.shares.groupby(["round", "player"], sort=False):
        by_jury = rows.set_index("jury")
        first = rows.iloc[0]
        shares.append(
            {
                "round": int(number),
                "alias": first["alias"] if isinstance(first["alias"], str) else None,
                "player": player,
                "kind": first["kind"],
                "chance_pct": float(first["chance_pct"]),
                "cells": [
                    (_plain({"v": by_jury.loc[jury, "share_pct"]})["v"], int(by_jury.loc[jury, "votes"]))
                    for jury in juries
                ],
            }
        )
    language = str(get_locale())
    with report_language(language if language in REPORT_LANGUAGES else "en"):
        detection_svg = inline_svg(
            jury_detection_chart(stats.rounds, stats.pooled, juries, width=CHART_WIDTH, height=DETECTION_HEIGHT),
            _("Detection per jury, per round and pooled"),
        )
        shares_svg = inline_svg(
            jury_shares_chart(stats.shares, juries, width=CHART_WIDTH, height=SHARES_HEIGHT),
            _("Share of votes per player and jury"),
        )
    return JuryComparison(
        juries=juries,
        names={jury: jury_name(jury) for jury in juries},
        pooled=[_plain(row) for row in stats.pooled.to_dict("records")],
        pooled_test=_plain(stats.pooled_test.iloc[0].to_dict()),
        rounds=rounds,
        shares=shares,
        cut_short=sorted({int(number) for number in stats.rounds.loc[stats.rounds["cut_short"], "round"]}),
        detection_svg=detection_svg,
        shares_svg=shares_svg,
    )


def _plain(row: dict) -> dict:
    """NaN, NA and an infinite odds ratio as None, numpy scalars as Python ones."""
    plain = {}
    for key, value in row.items():
        if value is None or (not isinstance(value, str) and pd.isna(value)):
            plain[key] = None
            continue
        value = value.item() if hasattr(value, "item") else value
        plain[key] = None if isinstance(value, float) and value in (float("inf"), float("-inf")) else value
    return plain
