"""The study report: several sessions read together (:mod:`analysis.study`), as CSVs and one PDF.

:func:`write_study_report` writes every table of :func:`analysis.study.study_tables` as a UTF-8 CSV
(English, whatever the PDF's language) and ``study_report.pdf``: the sessions with their design hashes,
what they are made of, the AI's detection per session and pooled (with the test of whether the sessions
differ, and each session's verdict under its own rule), with a displaced jury or AI juries in some session the
juries compared (``juries.csv``, ``juries_differ.csv``: :mod:`analysis.study_juries`), CogME radars overlaid per
developmental stage and per AI program, the juror facets pooled, the judgment sheets' exposure per question and the
questions the sessions share.  The PDF is built with the session report's toolkit (:mod:`analysis.pdf`: fonts,
styles, tables, footer, radars) so the two read alike; a module per section.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..pdf.cover import cover
from ..pdf.document import build_pdf
from ..pdf.look import Look, paragraph_styles
from ..pdf.text import missing_characters, user_texts
from ..study import StudyData, group_profiles, study_tables
from ..study_juries import STUDY_JURY_CSVS, study_juries
from ..words import REPORT_LANGUAGES, report_language, t
from .composition import composition_section
from .detection import detection_section
from .exposure import exposure_section
from .juries import juries_section
from .jurors import juror_section
from .profiles import profiles_section
from .sessions import sessions_section
from .shared_questions import shared_section

PDF_NAME = "study_report.pdf"


def write_study_report(data: StudyData, out_dir: Path, *, language: str = "en") -> list[Path]:
    """Write the study's CSVs (one per :func:`analysis.study.study_tables` table) and ``study_report.pdf``
    into ``out_dir`` (created if needed); return their paths.  ``language``: the PDF's words (``en``, ``ko``)."""
    if language not in REPORT_LANGUAGES:
        raise ValueError(f"unknown report language {language!r}; one of {', '.join(REPORT_LANGUAGES)}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tables = study_tables(data)
    juries, jury_tests = study_juries(data)
    if len(juries):  # some session had more than the live jury: the juries compared
        tables |= dict(zip(STUDY_JURY_CSVS, (juries, jury_tests)))
    else:
        for name in STUDY_JURY_CSVS:
            (out_dir / name).unlink(missing_ok=True)  # an earlier run's comparison would mislead
    written = []
    for name, table in tables.items():
        written.append(out_dir / name)
        table.to_csv(written[-1], index=False, encoding="utf-8")
    stages, programs = group_profiles(data, "stage"), group_profiles(data, "program")
    with report_language(language):
        title = t("{name} - Video Turing Test study", name=data.name)
        look = Look(paragraph_styles(), {})
        missing = missing_characters(_study_texts(data, tables) | {title})
        story = (
            cover(title, None, look, missing)
            + sessions_section(tables, look)
            + composition_section(tables, look)
            + detection_section(tables, look)
            + juries_section(juries, jury_tests, look)
            + profiles_section(stages.elements, stages.groups, "stage", stages.order, look)
            + profiles_section(programs.elements, programs.groups, "program", programs.order, look)
            + juror_section(tables["juror_groups.csv"], look)
            + exposure_section(tables["exposure.csv"], look)
            + shared_section(tables["shared_questions.csv"], tables["qid_collisions.csv"], look)
        )
        written.append(out_dir / PDF_NAME)
        build_pdf(written[-1], story, title)
    return written


def _study_texts(data: StudyData, tables: dict[str, pd.DataFrame]) -> set[str]:
    """The text users wrote that the PDF prints (to list what the font cannot draw)."""
    return user_texts(
        data.sessions["session"],
        data.sessions["name"],
        data.sessions["bank"],
        data.players["stage"],
        data.answers["program"],
        tables["juror_groups.csv"]["group"],
        tables["exposure.csv"]["question"],
        tables["shared_questions.csv"]["question"],
        tables["qid_collisions.csv"]["question"],
    )
