"""``vtt report CODE`` and ``vtt export CODE``: a live session's reports and raw tables.

Registered on the ``vtt`` group by ``vtt/cli/main.py``; this module imports ``vtt.cli.tools`` and lower
modules only.  Heavy imports stay inside the commands.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from .tools import db_factory, fail, language_option, out_dir_option, settings, warn_missing_glyphs


def _session_or_fail(db, code: str):
    from ..results.session_data import session_by_code

    session = session_by_code(db, code)
    if session is None:
        fail(
            f"no session with join code {code.strip().upper()!r} (`vtt report` and `vtt export` take the "
            "session's join code)"
        )
    return session


@click.command("report")
@click.argument("code")
@out_dir_option("Write profiles.pdf, tallies.pdf, report.pdf and a CSV per table here.", required=True)
@click.option("--title", help="The PDFs' title (default: the session's name).")
@language_option()
def report(code: str, out_dir: Path, title: str | None, language: str) -> None:
    """Part 2's PDFs and CSVs from the data of the session with join code CODE.

    Scoring method and pass rule are the session's own.  Open answers not graded yet are left out
    of accuracy, listed in ungraded.csv and named on the terminal.
    """
    with db_factory()() as db:
        session = _session_or_fail(db, code)
        try:
            reports = write_session_reports(db, session, out_dir, title, language=language)
        except NothingToReport as exc:
            fail(str(exc))
    written, frames = reports.written, reports.frames
    click.echo(f"wrote {len(written)} files to {out_dir}: {', '.join(sorted(written))}")
    if not reports.has_votes:
        click.echo(
            "no votes yet: tallies without vote statistics" if reports.has_sheet else "no votes yet: profiles only"
        )
    if len(frames.ungraded):
        click.echo(_ungraded_line(frames.ungraded))
    warn_missing_glyphs(written)


class NothingToReport(ValueError):
    """A session without a graded answer: there is no profile to draw."""


@dataclass(frozen=True)
class SessionReports:
    written: dict  # analysis.report.WrittenReports plus session_info.csv and ungraded.csv
    frames: object  # vtt.results.session_data.SessionFrames
    has_votes: bool
    has_sheet: bool


def write_session_reports(
    db, session, out_dir: Path, title: str | None = None, *, language: str = "en"
) -> SessionReports:
    """Write part 2's PDFs and CSVs of ``session`` into ``out_dir`` (used by ``vtt report`` and the results page).

    ``language`` (``en`` or ``ko``): the PDFs' words; the CSVs, session_info.csv included, stay English.
    """
    from analysis.report import JUDGE_CSVS, write_reports
    from analysis.report_text import report_language, t
    from analysis.votes import exposure, vote_stats

    from ..judge.agreement import judge_agreement_of
    from ..results.session_data import session_frames, session_profiles

    frames = session_frames(db, session)
    if frames.answers.empty:
        raise NothingToReport(
            f"session {session.join_code} has no graded answers yet: nothing to profile"
            + (f" ({len(frames.ungraded)} open answers wait for a grade)" if len(frames.ungraded) else "")
        )
    with report_language("en"):  # session_info.csv: English, as every CSV
        info = {**_session_info(session, frames), **ai_programs_info(db, session)}
    with report_language(language):
        shown_info = {**_session_info(session, frames), **ai_programs_info(db, session)}
        shown_title = title or t("{name} - Video Turing Test report", name=session.name)
    profiles = session_profiles(frames, session.scoring_method.value)
    stats = (
        vote_stats(
            frames.votes, frames.players, session.pass_rule.value, session.pass_alpha, session.pass_threshold_pct
        )
        if len(frames.votes)
        else None
    )
    sheet_exposure = exposure(frames.sheet, frames.players, frames.answers) if len(frames.sheet) else None
    judge = judge_agreement_of(db, session)
    written = write_reports(
        out_dir,
        language=language,
        questions=frames.questions,
        answers=frames.answers,
        profiles=profiles,
        stats=stats,
        title=shown_title,
        session_info=shown_info,
        exposure=sheet_exposure,
        ungraded=frames.ungraded,
        judge_agreement=None if judge.empty else judge.table,
        judge_confusions=None if judge.empty else judge.confusion_table,
    )
    info_path = out_dir / "session_info.csv"
    _info_frame(info).to_csv(info_path, index=False, encoding="utf-8")
    written["session_info.csv"] = info_path
    if len(frames.ungraded):
        written["ungraded.csv"] = out_dir / "ungraded.csv"
        frames.ungraded.to_csv(written["ungraded.csv"], index=False, encoding="utf-8")
    else:
        (out_dir / "ungraded.csv").unlink(missing_ok=True)  # an earlier run's list would mislead
    if judge.empty:
        for name in JUDGE_CSVS:
            (out_dir / name).unlink(missing_ok=True)  # as would an earlier run's agreement
    return SessionReports(written, frames, stats is not None, sheet_exposure is not None)


def _ungraded_line(ungraded) -> str:
    count = len(ungraded)
    named = ", ".join(f"{row.player} {row.qid}" for row in ungraded.itertuples(index=False))
    return (
        f"{count} answer{'s' if count != 1 else ''} not graded yet (open, or to a question without a key), "
        f"left out of accuracy: {named}"
    )


def _session_info(session, frames) -> dict[str, str]:
    """The cover table of the PDFs: which session, when, how it was designed and scored.

    In the report language of the moment (:func:`analysis.report_text.report_language`)."""
    from analysis.report_text import t

    when = session.started_at or session.created_at
    players = "; ".join(_player_text(p) for p in session.players)
    themes = [r.theme for r in session.round_states if r.theme]
    rounds = t(
        "{rounds} x {per_round} questions ({placed} placed)",
        rounds=session.rounds,
        per_round=session.questions_per_round,
        placed=len(frames.questions),
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
    ungraded = len(frames.ungraded)
    return {
        t("Session"): session.name,
        t("Join code"): session.join_code,
        t("Date"): when.strftime("%Y-%m-%d %H:%M UTC") if when else t("not started"),
        t("Seed"): str(session.seed),
        t("Rounds"): rounds,
        t("Players"): players,
        t("Jurors"): _jurors_text(session, frames.votes, t),
        t("Scoring method"): session.scoring_method.value,
        t("Pass rule"): rule,
        t("Design hash"): session.design_hash or t("none recorded"),
        t("Ungraded open answers"): _ungraded_text(frames.ungraded) if ungraded else t("none"),
        **unkeyed_info(frames.questions),
    }


def _jurors_text(session, votes, t) -> str:
    """Jurors who joined (and how many of them openly, with the join code), voters, and any the host removed."""
    removed = sum(juror.removed_at is not None for juror in session.jurors)
    joined = len(session.jurors) - removed
    openly = sum(juror.juror_group == "open" and juror.removed_at is None for juror in session.jurors)
    text = t("{jurors} · voters {voters}", jurors=joined, voters=_voters(votes))
    if openly:
        text += " · " + t("joined openly {count}", count=openly)
    if removed:
        text += " · " + t("removed by the host {count}", count=removed)
    return text


def _voters(votes) -> int:
    """Jurors who cast at least one vote that counts (an abstention names no one); beside the jurors who joined."""
    if votes is None or not len(votes):
        return 0
    return int(votes.loc[votes["vote"].notna(), "juror"].nunique())


def ai_programs_info(db, session) -> dict[str, str]:
    """What played as each AI player: the backends and models its answers' provenance names, and how many
    answers the host entered for it (so a paper can name exactly what played).

    In the report language of the moment (:func:`analysis.report_text.report_language`); backend and model
    names stay as recorded."""
    from sqlalchemy import select

    from analysis.report_text import t

    from ..models import Answer, PlayerKind

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
    from analysis.report_text import t

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
    from analysis.report_text import t

    names = [f"{row.player} {row.qid}" for row in ungraded.itertuples(index=False)]
    more = t(", ... ({count} more)", count=len(names) - shown) if len(names) > shown else ""
    return t(
        "{count}, left out of accuracy (ungraded.csv lists them): {names}{more}",
        count=len(names),
        names=", ".join(names[:shown]),
        more=more,
    )


def _player_text(player) -> str:
    from analysis.report_text import t

    facts = [t("human") if player.kind.value == "human" else "AI"]
    if player.age is not None:
        facts.append(t("{age} y", age=player.age))
    if player.stage:
        facts.append(player.stage)
    return f"{player.name} ({', '.join(facts)})"


def _info_frame(info: dict[str, str]):
    import pandas as pd

    return pd.DataFrame({"key": list(info), "value": list(info.values())})


@click.command("export")
@click.argument("code")
@out_dir_option("Write one CSV per table and CODE_wide.csv here.", required=True)
@click.option(
    "--recordings-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the spoken answers' recordings are (default: VTT_RECORDINGS_DIR, else instance/recordings).",
)
def export(code: str, out_dir: Path, recordings_dir: Path | None) -> None:
    """Every table of the session with join code CODE as CSV, plus one wide file (oTree style), and the kept
    recordings of spoken answers in recordings/ (recordings.csv lists every take).

    Each file carries the session's join code and design hash; login tokens are never written.
    """
    from ..recordings import copy_all
    from ..results.session_data import export_tables

    folder = recordings_dir or Path(settings().flask_config()["RECORDINGS_DIR"])
    with db_factory()() as db:
        session = _session_or_fail(db, code)
        tables = export_tables(db, session)
        copied = copy_all(db, folder, session.id, out_dir / "recordings")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        frame.to_csv(out_dir / name, index=False, encoding="utf-8")
    counts = ", ".join(f"{name} ({len(frame)})" for name, frame in tables.items())
    click.echo(f"wrote {len(tables)} files to {out_dir}: {counts}" + (f"; {copied} recordings" if copied else ""))
