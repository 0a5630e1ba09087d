"""A session's report files: the PDFs and CSVs ``analysis`` draws from its data, with ``session_info.csv`` (the
cover table) and ``ungraded.csv``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analysis.session_report import JUDGE_CSVS, write_reports
from analysis.session_report.juries_compared import JURY_CSVS
from analysis.votes import exposure, vote_stats
from analysis.words import report_language, t

from ..judge.agreement import judge_agreement_of
from ..results.tables import session_jury_stats, session_profiles, session_tables
from .session_info import ai_programs_info, session_info


class NothingToReport(ValueError):
    """A session without a graded answer: there is no profile to draw."""


@dataclass(frozen=True)
class SessionReports:
    written: dict  # analysis.session_report.WrittenReports plus session_info.csv and ungraded.csv
    tables: object  # vtt.results.tables.SessionTables
    has_votes: bool
    has_sheet: bool
    juries: object = None  # analysis.juries.JuryStats when more than the live jury voted


def write_session_reports(
    db, session, out_dir: Path, title: str | None = None, *, language: str = "en"
) -> SessionReports:
    """Write the PDFs and CSVs of ``session``'s report into ``out_dir`` (``vtt report`` and the results page).

    ``language`` (``en`` or ``ko``): the PDFs' words; the CSVs, session_info.csv included, stay English.
    """
    tables = session_tables(db, session)
    if tables.answers.empty:
        raise NothingToReport(
            f"session {session.join_code} has no graded answers yet: nothing to profile"
            + (f" ({len(tables.ungraded)} open answers wait for a grade)" if len(tables.ungraded) else "")
        )
    with report_language("en"):  # session_info.csv: English, as every CSV
        info = {**session_info(session, tables), **ai_programs_info(db, session)}
    with report_language(language):
        shown_info = {**session_info(session, tables), **ai_programs_info(db, session)}
        shown_title = title or t("{name} - Video Turing Test report", name=session.name)
    profiles = session_profiles(tables, session.scoring_method.value)
    stats = (
        vote_stats(
            tables.votes, tables.players, session.pass_rule.value, session.pass_alpha, session.pass_threshold_pct
        )
        if len(tables.votes)
        else None
    )
    sheet_exposure = exposure(tables.sheet, tables.players, tables.answers) if len(tables.sheet) else None
    judge = judge_agreement_of(db, session)
    juries = session_jury_stats(tables)  # None: only the live jury voted
    written = write_reports(
        out_dir,
        language=language,
        questions=tables.questions,
        answers=tables.answers,
        profiles=profiles,
        stats=stats,
        title=shown_title,
        session_info=shown_info,
        exposure=sheet_exposure,
        ungraded=tables.ungraded,
        judge_agreement=None if judge.empty else judge.table,
        judge_confusions=None if judge.empty else judge.confusion_table,
        juries=juries,
    )
    info_path = out_dir / "session_info.csv"
    _info_frame(info).to_csv(info_path, index=False, encoding="utf-8")
    written["session_info.csv"] = info_path
    if len(tables.ungraded):
        written["ungraded.csv"] = out_dir / "ungraded.csv"
        tables.ungraded.to_csv(written["ungraded.csv"], index=False, encoding="utf-8")
    else:
        (out_dir / "ungraded.csv").unlink(missing_ok=True)  # an earlier run's list would mislead
    if judge.empty:
        for name in JUDGE_CSVS:
            (out_dir / name).unlink(missing_ok=True)  # as would an earlier run's agreement
    if juries is None:
        for name in JURY_CSVS:
            (out_dir / name).unlink(missing_ok=True)  # and an earlier run's comparison of juries
    return SessionReports(written, tables, stats is not None, sheet_exposure is not None, juries)


def _info_frame(info: dict[str, str]):
    import pandas as pd

    return pd.DataFrame({"key": list(info), "value": list(info.values())})
