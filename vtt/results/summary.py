"""What the results page shows: one session's numbers, as the PDF report has them.

The statistics come from ``analysis`` on the tables of ``vtt.results.tables`` (the same calls as
``vtt report``): per round the tally under the round's aliases, detection, Wilson interval, p-value
and the pass verdict; per player the CogME profile and one radar per module, the PDF's own drawing
as inline SVG (the judge's agreement with the graders: ``vtt.judge.agreement.judge_card``; a displaced jury's and
AI juries' votes beside the live jury's: ``vtt.results.juries``; every other figure counts the live jury alone).
A **control round** is one no AI player played (its aliases, or its participants before aliases are dealt): it is
counted like any other, as in the PDF, and marked as such.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
from flask_babel import get_locale
from flask_babel import gettext as _
from sqlalchemy import select
from sqlalchemy.orm import Session

from analysis import charts
from analysis.cogme import Profiles
from analysis.fonts import register_fonts
from analysis.svg import inline_svg
from analysis.taxonomy import Module
from analysis.votes import VoteStats, vote_stats
from analysis.words import REPORT_LANGUAGES, report_language, t

from ..models import PlayerKind, RoundAlias, VttSession
from .juries import JuryComparison, jury_comparison
from .tables import (
    Coverage,
    LaterJuries,
    SessionTables,
    cut_short_text,
    later_juries,
    session_profiles,
    session_tables,
)

RADAR_WIDTH, RADAR_HEIGHT = 260, 210  # points, as the PDF's player page; the page scales the SVG down to fit


@dataclass(frozen=True)
class TallyLine:
    alias: str | None
    player: str
    kind: str
    votes: int
    share_pct: float


@dataclass(frozen=True)
class RoundResult:
    number: int
    theme: str | None
    control: bool
    figures: dict | None  # the round's row of VoteStats.rounds in plain Python (None for NaN/NA); None: no vote row
    lines: list[TallyLine]
    top_human: int
    top_ai: int
    status: str = "played"  # "played" (begun, its vote given), "cut_short" (vote never opened), "not_played"
    shown: int = 0  # a round cut short: its questions shown, of
    placed: int = 0  # the questions placed in it


@dataclass(frozen=True)
class PlayerRadars:
    player: str
    kind: str
    summary: object  # the player's row of Profiles.players
    radars: list[tuple[Module, str]]  # (module, inline SVG)


@dataclass
class SessionResults:
    tables: SessionTables
    stats: VoteStats | None
    stats_problem: str | None  # why there are no vote statistics although there are votes
    rounds: list[RoundResult]
    profiles: Profiles | None
    players: list[PlayerRadars] = field(default_factory=list)
    juries: JuryComparison | None = None  # with a displaced jury or AI juries: the juries side by side
    juries_problem: str | None = None  # why the juries are not compared although several voted
    jurors: JurorCounts | None = None  # the live jury's size, and who judged afterwards
    coverage_text: str = ""  # with a round cut short: what was played, as the PDF's cover says it


@dataclass(frozen=True)
class JurorCounts:
    """The live jury (jurors in the room less those the host removed, and how many cast a vote), then the displaced
    and AI jurors who judged the session afterwards: every count on the page names its jury."""

    live: int
    live_voters: int
    later: LaterJuries


def session_results(db: Session, vtt_session: VttSession) -> SessionResults:
    tables = session_tables(db, vtt_session)
    stats, problem = None, None
    if len(tables.votes):
        try:
            stats = vote_stats(
                tables.votes,
                tables.players,
                vtt_session.pass_rule.value,
                vtt_session.pass_alpha,
                vtt_session.pass_threshold_pct,
            )
        except ValueError as exc:  # e.g. a session without an AI player: detection means nothing
            problem = str(exc)
    profiles = session_profiles(tables, vtt_session.scoring_method.value) if len(tables.answers) else None
    juries, juries_problem = jury_comparison(tables)
    return SessionResults(
        tables,
        stats,
        problem,
        _rounds(db, vtt_session, stats, tables.coverage),
        profiles,
        _radars(tables, profiles) if profiles is not None else [],
        juries,
        juries_problem,
        _juror_counts(vtt_session, tables),
        coverage_sentence(tables.coverage),
    )


def coverage_sentence(coverage: Coverage) -> str:
    """A finished session with a round cut short, in the page's language: "Round 3 cut short after 2 of 6 questions;
    rounds 4-5 not played: 14 of 30 questions shown." (empty without a round cut short): the report cover's words."""
    language = str(get_locale())
    with report_language(language if language in REPORT_LANGUAGES else "en"):
        text = cut_short_text(coverage, t)
    return text[:1].upper() + text[1:] + "." if text else ""


def _juror_counts(vtt_session: VttSession, tables: SessionTables) -> JurorCounts:
    votes = tables.votes
    return JurorCounts(
        live=sum(juror.removed_at is None for juror in vtt_session.live_jurors),
        live_voters=int(votes.loc[votes["vote"].notna(), "juror"].nunique()) if len(votes) else 0,
        later=later_juries(vtt_session, tables.jury_votes),
    )


def _rounds(db: Session, vtt_session: VttSession, stats: VoteStats | None, coverage: Coverage) -> list[RoundResult]:
    players = {p.id: p for p in vtt_session.players}
    aliases: dict[int, dict[int, str]] = {}
    for row in db.scalars(
        select(RoundAlias).where(RoundAlias.session_id == vtt_session.id).order_by(RoundAlias.round, RoundAlias.alias)
    ):
        aliases.setdefault(row.round, {})[row.player_id] = row.alias
    figures = {int(row["round"]): _plain(row) for row in stats.rounds.to_dict("records")} if stats is not None else {}
    cut_short = {number: (seen, placed) for number, seen, placed in coverage.cut_short}
    results = []
    for state in vtt_session.round_states:
        dealt = aliases.get(state.number, {})
        playing = list(dealt) or (
            [int(p) for p in state.participants] if state.participants is not None else list(players)
        )
        tally = stats.tally[stats.tally["round"] == state.number] if stats is not None else pd.DataFrame()
        votes = dict(zip(tally.get("player", []), tally.get("votes", [])))
        shares = dict(zip(tally.get("player", []), tally.get("share_pct", [])))
        lines = sorted(
            (
                TallyLine(
                    dealt.get(pid),
                    players[pid].name,
                    players[pid].kind.value,
                    int(votes.get(players[pid].name, 0)),
                    float(shares.get(players[pid].name, 0.0)),
                )
                for pid in playing
            ),
            key=lambda line: (line.alias or "", line.player),
        )
        results.append(
            RoundResult(
                number=state.number,
                theme=state.theme,
                control=not any(players[pid].kind is PlayerKind.AI for pid in playing),
                figures=figures.get(state.number),
                lines=lines,
                top_human=max((line.votes for line in lines if line.kind == "human"), default=0),
                top_ai=max((line.votes for line in lines if line.kind == "ai"), default=0),
                status="cut_short" if state.number in cut_short else "played" if dealt else "not_played",
                shown=cut_short.get(state.number, (0, 0))[0],
                placed=cut_short.get(state.number, (0, 0))[1],
            )
        )
    return results


def _plain(row: dict) -> dict:
    """A stats row for a template: NaN and NA become None, numpy scalars Python ones."""
    return {
        key: None if value is None or pd.isna(value) else value.item() if hasattr(value, "item") else value
        for key, value in row.items()
    }


def _radars(tables: SessionTables, profiles: Profiles) -> list[PlayerRadars]:
    register_fonts()  # the radar measures its labels in the report font before it draws
    styles = charts.player_styles(zip(tables.players["name"], tables.players["kind"]))
    result = []
    for player in profiles.players.itertuples(index=False):
        elements = profiles.elements[profiles.elements["player"] == player.player]
        radars = [
            (
                module,
                inline_svg(
                    charts.module_radar(
                        elements, module, styles, players=[player.player], width=RADAR_WIDTH, height=RADAR_HEIGHT
                    ),
                    _("%(module)s profile of %(player)s", module=module.value.upper(), player=player.player),
                ),
            )
            for module in Module
            if (elements["module"] == module.value).any()
        ]
        result.append(PlayerRadars(player.player, player.kind, player, radars))
    return result
