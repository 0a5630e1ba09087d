"""The PDF reports of a session, and a CSV of every table in them.

:func:`write_reports` writes

* ``profiles.pdf`` - CogME profiles: scoring method, every player overlaid per module, one page per player;
* ``tallies.pdf``  - the jury's votes (only with vote statistics or a judgment sheet): detection per
  round against chance, votes per player per round, the pass rule and its statistic, with two or
  more AI players the verdict per AI, detection per juror group (one block per juror facet:
  group, expertise, age band, sex), jurors, confidence, and with a judgment sheet the "looks like
  the AI" exposure per question;
* ``report.pdf``   - both, plus (when a judge suggested grades) the judge's agreement with each grader and
  the final marks, the question set's composition and the Q&A sheet (case study, Table 1);
* with more than the live jury (``juries``: a displaced jury, AI juries), ``tallies.pdf`` and ``report.pdf`` add
  "Juries compared" (:mod:`.juries`: detection per jury, the test across juries, shares per player) and the CSVs
  ``jury_detection.csv``, ``jury_tests.csv`` and ``jury_shares.csv``; a session only the live jury judged has neither;
* one UTF-8 CSV per table (see :data:`.csv_tables.CSV_FILES`).

Each section is built by a module of its own (:mod:`.profiles`, :mod:`.jury`, :mod:`.juries`, :mod:`.judge`,
:mod:`.question_set`, :mod:`.qa_sheet`) with the toolkit of :mod:`analysis.pdf`; the three PDFs only differ in which
sections they stack.
All user text (names, questions, answers) goes through :func:`analysis.pdf.text.markup` before it reaches Paragraph
markup, and everything is set in the embedded NanumGothic (Hangul included). Characters NanumGothic has no glyph for
(emoji, some Han, Greek with tonos) are not dropped silently: the cover of each PDF lists the ones its text holds, and
:func:`write_reports` returns them (``missing_characters``) for the caller to warn about.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
from reportlab.platypus import Flowable, NextPageTemplate, PageBreak

from ..composition import composition
from ..judge_rows import JUDGE_AGREEMENT_COLUMNS, JUDGE_CONFUSION_COLUMNS, judge_agreement_columns
from ..pdf.cover import cover
from ..pdf.document import build_pdf
from ..pdf.look import Look
from ..pdf.text import missing_characters, user_texts
from ..tables import require_columns
from ..words import REPORT_LANGUAGES, report_language, t
from .csv_tables import JUDGE_CSVS, csv_tables
from .judge import judge_section
from .juries_compared import juries_section, juries_texts, jury_csv_tables
from .jury_votes import jury_section, jury_texts
from .profiles import profile_section
from .qa_sheet import qa_section, qa_texts
from .question_set import question_set_section

if TYPE_CHECKING:
    from ..cogme import Profiles
    from ..juries import JuryStats
    from ..votes import VoteStats


DEFAULT_TITLE = "Video Turing Test - session report"


class WrittenReports(dict):
    """``{file name: path}`` of every file :func:`write_reports` wrote, plus ``missing_characters``.

    ``missing_characters``: the characters of the PDFs' text (names, questions, answers, title...) that
    the embedded font cannot draw, sorted, without repeats; empty when everything renders.
    """

    missing_characters: tuple[str, ...] = ()


def write_reports(out_dir: str | Path, *, language: str = "en", **reports) -> WrittenReports:
    """:func:`_write_reports` with the PDFs' words in ``language`` (``en`` or ``ko``; see :mod:`analysis.words`).

    The CSVs are the same in every language (English column names and values); only the PDFs change.
    """
    if language not in REPORT_LANGUAGES:
        raise ValueError(f"unknown report language {language!r}; one of {', '.join(REPORT_LANGUAGES)}")
    with report_language(language):
        return _write_reports(out_dir, **reports)


def _write_reports(
    out_dir: str | Path,
    *,
    questions: pd.DataFrame,
    answers: pd.DataFrame,
    profiles: Profiles,
    stats: VoteStats | None = None,
    title: str = DEFAULT_TITLE,
    session_info: dict | None = None,
    exposure: pd.DataFrame | None = None,
    ungraded: pd.DataFrame | None = None,
    judge_agreement: pd.DataFrame | None = None,
    judge_confusions: pd.DataFrame | None = None,
    juries: JuryStats | None = None,
) -> WrittenReports:
    """Write the PDFs and CSVs into ``out_dir`` (created if needed); return ``{file name: path}``.

    ``questions`` and ``answers`` are the tables of :mod:`analysis.tables`; ``profiles`` comes from
    :func:`analysis.cogme.profiles`, ``stats`` from :func:`analysis.votes.vote_stats` (without it
    there are no vote CSVs), ``exposure`` from :func:`analysis.votes.exposure` with the answers
    (its ``chance_pct`` column is shown when present; without it there is no ``exposure.csv``);
    ``ungraded`` (``player, qid, answer``) are open answers not graded yet, marked apart in the Q&A sheet.
    ``judge_agreement`` (:data:`analysis.judge_rows.JUDGE_AGREEMENT_COLUMNS`: per judge model, rater and measure, as
    :func:`analysis.agreement.judge_agreement` gives them; the rater :data:`analysis.agreement.FINAL_MARKS` is the
    final marks; an optional ``taken`` column, the rater's marks taken from the judge, is kept after ``items`` and
    shown per rater) and ``judge_confusions`` (:data:`analysis.judge_rows.JUDGE_CONFUSION_COLUMNS`: the 2x2 verdict
    counts, long) set an LLM judge's suggested grades beside the graders': with a row of agreement,
    ``judge_agreement.csv``, ``judge_confusions.csv`` and a section of ``report.pdf`` (after the jury's); without,
    none of them.
    ``juries`` (:func:`analysis.juries.jury_stats` on every jury's votes) with two or more juries adds the section
    "Juries compared" after the jury's and :data:`.juries.JURY_CSVS`; with one jury (or None), none of them.
    ``tallies.pdf`` is written when there are vote statistics or an exposure table.
    ``session_info`` is shown as a key/value table under the title (e.g. date, drama, players' ages).
    The result is a dict whose ``missing_characters`` lists what the font cannot show (see
    :class:`WrittenReports`); each PDF's cover lists the ones in that PDF.
    """
    require_columns(
        questions,
        ("qid", "question", "type", "choices", "answer", "round", "targets", "key_target", "contents", "thinking"),
        "questions",
    )
    require_columns(answers, ("player", "qid", "answer", "correct", "kind"), "answers")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if title == DEFAULT_TITLE:
        title = t(DEFAULT_TITLE)
    look = Look.of_players(_roster(profiles, stats))
    set_composition = composition(questions)
    has_judge = judge_agreement is not None and len(judge_agreement) > 0
    if has_judge:
        require_columns(judge_agreement, JUDGE_AGREEMENT_COLUMNS, "judge_agreement")
        if judge_confusions is None:
            judge_confusions = pd.DataFrame(columns=list(JUDGE_CONFUSION_COLUMNS))
        require_columns(judge_confusions, JUDGE_CONFUSION_COLUMNS, "judge_confusions")
    tables = csv_tables(questions, answers, profiles, stats, set_composition, exposure, ungraded)
    if has_judge:
        tables["judge_agreement.csv"] = judge_agreement[judge_agreement_columns(judge_agreement)]
        tables["judge_confusions.csv"] = judge_confusions[list(JUDGE_CONFUSION_COLUMNS)]
    compares_juries = juries is not None and len(juries.juries) > 1
    if compares_juries:
        tables |= jury_csv_tables(juries)

    written = WrittenReports()
    for name, table in tables.items():
        written[name] = out_dir / name
        table.to_csv(written[name], index=False, encoding="utf-8")

    # Each section is (page orientation, builder, the user text it prints); a builder is called once
    # per PDF that holds it because ReportLab consumes flowables while laying them out.
    profile_part = (
        "portrait",
        lambda: profile_section(profiles, set_composition, look),
        user_texts(profiles.players["player"]),
    )
    has_jury = stats is not None or exposure is not None or compares_juries
    jury_part = (
        "portrait",
        lambda: jury_section(stats, tables.get("tally.csv"), tables.get("exposure.csv"), look),
        jury_texts(stats, exposure),
    )
    juries_part = ("portrait", lambda: juries_section(juries, look), juries_texts(juries if compares_juries else None))
    judge_part = (
        "portrait",
        lambda: judge_section(tables["judge_agreement.csv"], tables["judge_confusions.csv"], look),
        user_texts(*(tables[name][column] for name in JUDGE_CSVS for column in ("model", "rater")))
        if has_judge
        else set(),
    )
    set_part = (
        "portrait",
        lambda: question_set_section(set_composition, tables["question_set.csv"], profiles, look),
        user_texts(set_composition.untagged),
    )
    qa_part = ("landscape", lambda: qa_section(tables["qa_sheet.csv"], look), qa_texts(tables["qa_sheet.csv"]))
    documents = {"profiles.pdf": [profile_part]}
    jury_parts = ([jury_part] if has_jury else []) + ([juries_part] if compares_juries else [])
    if has_jury:
        documents["tallies.pdf"] = jury_parts
    documents["report.pdf"] = [profile_part, *jury_parts] + ([judge_part] if has_judge else []) + [set_part, qa_part]
    cover_text = user_texts([title], (session_info or {}).keys(), (session_info or {}).values())
    missing_everywhere: set[str] = set()
    for name, sections in documents.items():
        missing = missing_characters(cover_text.union(*(texts for _, _, texts in sections)))
        missing_everywhere |= set(missing)
        written[name] = out_dir / name
        build_pdf(written[name], cover(title, session_info, look, missing) + _stack(sections), title)
    written.missing_characters = tuple(sorted(missing_everywhere))
    return written


def _roster(profiles: Profiles, stats: VoteStats | None) -> list[tuple[str, str]]:
    """Every player (name, kind) of the profiles, then of the votes."""
    roster = list(zip(profiles.players["player"], profiles.players["kind"]))
    if stats is not None:
        roster += list(zip(stats.tally["player"], stats.tally["kind"]))
    return roster


def _stack(sections: list[tuple[str, Callable[[], list[Flowable]], set[str]]]) -> list[Flowable]:
    """The sections one after another, each from a new page of its orientation."""
    story: list[Flowable] = []
    for index, (orientation, build, _) in enumerate(sections):
        if index:
            story += [NextPageTemplate(orientation), PageBreak()]
        story += build()
    return story
