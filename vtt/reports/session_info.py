"""The cover table of a session's report (``session_info.csv`` and the PDFs' cover): which session, when, how it
was designed and scored, who played and judged, and what played as each AI player.

Each table is in the report language of the moment (:func:`analysis.words.report_language`).
"""

from __future__ import annotations

from sqlalchemy import select

from analysis.words import t

from ..models import Answer, PlayerKind
from ..results.tables import cut_short_text, later_juries


def session_info(session, tables) -> dict[str, str]:
    """The cover table of the PDFs: which session, when, how it was designed and scored.

    In the report language of the moment (:func:`analysis.words.report_language`)."""
    when = session.started_at or session.created_at
    players = "; ".join(_player_text(p) for p in session.players)
    themes = [r.theme for r in session.round_states if r.theme]
    rounds = t(
        "{rounds} x {per_round} questions ({placed} placed)",
        rounds=session.rounds,
        per_round=session.questions_per_round,
        placed=tables.coverage.placed,
    )
    if themes:
        rounds += "; " + "; ".join(
            t("round {number}: {theme}", number=r.number, theme=r.theme) for r in session.round_states if r.theme
        )
    rule = session.pass_rule.value
    rule += {
        "chance": t(" (alpha {alpha})", alpha=f"{session.pass_alpha:g}"),
        "threshold": t(" (AI passes at detection <= {threshold} %)", threshold=f"{session.pass_threshold_pct:g}"),
    }.get(rule, "")
    ungraded = len(tables.ungraded)
    return {
        t("Session"): session.name,
        t("Join code"): session.join_code,
        t("Date"): when.strftime("%Y-%m-%d %H:%M UTC") if when else t("not started"),
        t("Seed"): str(session.seed),
        t("Rounds"): rounds,
        t("Questions shown"): _coverage_text(tables.coverage, t),
        t("Players"): players,
        t("Jurors"): _jurors_text(session, tables, t),
        t("Scoring method"): session.scoring_method.value,
        t("Pass rule"): rule,
        t("Design hash"): session.design_hash or t("none recorded"),
        t("Ungraded open answers"): _ungraded_text(tables.ungraded) if ungraded else t("none"),
        **unkeyed_info(tables.questions),
    }


def _coverage_text(coverage, t) -> str:
    """How much of the design the results are out of: a session stopped early or still running says so, and a round
    cut short (stopped before its vote opened) is never called complete."""
    if coverage.cut_short:
        return cut_short_text(coverage, t)
    shown = t("{shown} of {placed} questions shown", shown=coverage.shown, placed=coverage.placed)
    if coverage.stopped_early:
        return t("stopped after round {round} of {rounds}", round=coverage.last_round, rounds=coverage.rounds) + (
            ": " + shown
        )
    if coverage.partial and not coverage.finished:
        return t("in progress, round {round} of {rounds}", round=coverage.last_round, rounds=coverage.rounds) + (
            ": " + shown
        )
    return shown


def _jurors_text(session, tables, t) -> str:
    """The live jury: jurors who joined (and how many of them openly, with the join code), voters, and any the host
    removed; then the displaced and AI jurors who judged the session afterwards, apart (they are not the room's)."""
    live = session.live_jurors
    removed = sum(juror.removed_at is not None for juror in live)
    openly = sum(juror.juror_group == "open" and juror.removed_at is None for juror in live)
    text = t("{jurors} · voters {voters}", jurors=len(live) - removed, voters=_voters(tables.votes))
    if openly:
        text += " · " + t("joined openly {count}", count=openly)
    if removed:
        text += " · " + t("removed by the host {count}", count=removed)
    later = later_juries(session, tables.jury_votes)
    if later.displaced or later.ai:
        parts = []
        if later.displaced:
            parts.append(
                t("displaced jury {jurors} (voters {voters})", jurors=later.displaced, voters=later.displaced_voters)
            )
        if later.ai:
            parts.append(t("AI jurors {jurors} ({models})", jurors=later.ai, models=", ".join(later.models)))
        text += " · " + t("judged afterwards: {juries}", juries=", ".join(parts))
    return text


def _voters(votes) -> int:
    """Jurors who cast at least one vote that counts (an abstention names no one); beside the jurors who joined."""
    if votes is None or not len(votes):
        return 0
    return int(votes.loc[votes["vote"].notna(), "juror"].nunique())


def ai_programs_info(db, session) -> dict[str, str]:
    """What played as each AI player: the backends and models its answers' provenance names, and how many
    answers the host entered for it (so a paper can name exactly what played).

    In the report language of the moment (:func:`analysis.words.report_language`); backend and model
    names stay as recorded."""
    ai_players = [p for p in sorted(session.players, key=lambda p: p.id) if p.kind is PlayerKind.AI]
    if not ai_players:
        return {}
    rows = db.execute(
        select(Answer.player_id, Answer.provenance, Answer.entered_by_host)
        .where(Answer.session_id == session.id)
        .order_by(Answer.id)
    ).all()
    parts = []
    for player in ai_players:
        programs: dict[str, int] = {}
        by_host = unnamed = 0
        for player_id, provenance, entered in rows:
            if player_id != player.id:
                continue
            if entered:
                by_host += 1
            elif isinstance(provenance, dict) and provenance.get("backend"):
                name = str(provenance["backend"])
                if provenance.get("model"):
                    name += t(" (model {model})", model=provenance["model"])
                programs[name] = programs.get(name, 0) + 1
            else:
                unnamed += 1
        facts = [
            t("{name}: {count} answer" if count == 1 else "{name}: {count} answers", name=name, count=count)
            for name, count in programs.items()
        ]
        if unnamed:
            facts.append(t("no provenance recorded: {count}", count=unnamed))
        if by_host:
            facts.append(t("entered by the host: {count}", count=by_host))
        parts.append(f"{player.name}: {'; '.join(facts) if facts else t('no answers')}")
    return {t("AI players' programs"): " | ".join(parts)}


def unkeyed_info(questions) -> dict[str, str]:
    """A session on a test split: which questions have no key (their answers are graded by hand or left out)."""
    # as the bank reader counts them: an mcq without its option index, an open question without a reference answer
    withheld = ((questions["type"] == "mcq") & questions["answer_index"].isna()) | (
        (questions["type"] == "open") & (questions["answer"].fillna("") == "")
    )
    unkeyed = questions.loc[withheld, "qid"].tolist()
    if not unkeyed:
        return {}
    return {
        t("Questions without a key"): t(
            "{count} ({qids}): answers graded by hand or left out of accuracy",
            count=len(unkeyed),
            qids=", ".join(unkeyed),
        )
    }


def _ungraded_text(ungraded, shown: int = 20) -> str:
    names = [f"{row.player} {row.qid}" for row in ungraded.itertuples(index=False)]
    more = t(", ... ({count} more)", count=len(names) - shown) if len(names) > shown else ""
    return t(
        "{count}, left out of accuracy (ungraded.csv lists them): {names}{more}",
        count=len(names),
        names=", ".join(names[:shown]),
        more=more,
    )


def _player_text(player) -> str:
    facts = [t("human") if player.kind.value == "human" else "AI"]
    if player.age is not None:
        facts.append(t("{age} y", age=player.age))
    if player.stage:
        facts.append(player.stage)
    return f"{player.name} ({', '.join(facts)})"
