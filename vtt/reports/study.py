"""A study's report files: ``analysis.study_report``'s PDF and tables, and the all-sessions export."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.orm import Session

from ..studies import StudyProblem, study_by_name
from ..studies.data import read_study


def write_study(db: Session, name: str, out_dir: Path, language: str = "en") -> list[Path]:
    """Write the study ``name``'s report into ``out_dir``; the files written."""
    from analysis.study_report import write_study_report

    study = study_by_name(db, name)
    if not study.members:
        raise StudyProblem(f"the study {study.name!r} has no sessions (vtt study add {study.name} CODE...)")
    out_dir.mkdir(parents=True, exist_ok=True)
    data, exports = read_study(db, study)
    written = list(write_study_report(data, out_dir, language=language))
    for file, frame in exports.items():
        frame.to_csv(out_dir / file, index=False, encoding="utf-8")
        written.append(out_dir / file)
    return written
