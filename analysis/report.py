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
* one UTF-8 CSV per table (see :data:`CSV_FILES`).

Each section is built by one function returning flowables; the three PDFs only differ in which
sections they stack.  All user text (names, questions, answers) goes through :func:`markup` before it
reaches Paragraph markup, and everything is set in the embedded NanumGothic (Hangul included).
Characters NanumGothic has no glyph for (emoji, some Han, Greek with tonos) are not dropped
silently: the cover of each PDF lists the ones its text holds, and :func:`write_reports` returns them
(``missing_characters``) for the caller to warn about.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape

import pandas as pd
from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER, TA_RIGHT
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import (
    BaseDocTemplate,
    Flowable,
    Frame,
    KeepTogether,
    NextPageTemplate,
    PageBreak,
    PageTemplate,
    Paragraph,
    Spacer,
    Table,
    TableStyle,
)

from . import charts
from .agreement import CONSTANT, FINAL_MARKS, NO_ITEMS, ONE_CATEGORY, TOO_FEW
from .cogme import element_frequencies
from .composition import Composition, composition
from .fonts import BOLD, REGULAR, missing_glyphs, register_fonts
from .frames import require_columns
from .options import chosen_options, option_label
from .report_text import REPORT_LANGUAGES, report_language, t
from .taxonomy import KEY_MARK, Module, TagSet

if TYPE_CHECKING:
    from .cogme import Profiles
    from .votes import VoteStats

DEFAULT_TITLE = "Video Turing Test - session report"
CORRECT_MARK, WRONG_MARK, NO_ANSWER, UNGRADED_MARK = "√", "×", "—", "?"  # all in NanumGothic (tested)
MAX_JUROR_ROWS = 100  # a streamed session has thousands of jurors: the PDF lists the first ones only
QA_PLAYERS_PER_TABLE = 6  # answer columns narrower than this leave a word or two per line

RADAR_MIN_SCALE = 0.7  # the overview's radars shrink this far to stay on the page with the players' table
MAX_MISSING_LISTED = 20  # characters the font cannot show, listed on the cover
OPTION_SEPARATOR = " · "  # between an option's letter and its text: "B · Deogi"

CSV_FILES = (
    "profile_players.csv",
    "profile_elements.csv",  # profiles
    "rounds.csv",
    "tally.csv",
    "ai_rounds.csv",
    "groups.csv",
    "jurors.csv",  # with stats
    "vote_summary.csv",
    "exposure.csv",  # with a judgment sheet
    "composition.csv",
    "element_frequencies.csv",
    "question_set.csv",
    "qa_sheet.csv",  # question set
    "judge_agreement.csv",
    "judge_confusions.csv",  # with a judge's suggestions
)
JUDGE_AGREEMENT_COLUMNS = ("model", "rater", "measure", "items", "kappa", "weighted_kappa", "spearman", "reason")
JUDGE_TAKEN = "taken"  # optional column of the agreement table, after "items": the rater's marks taken from the judge
JUDGE_CONFUSION_COLUMNS = ("model", "rater", "rater_verdict", "judge_verdict", "answers")
MEASURE_NAMES = {
    "correct": "Correct/incorrect",
    "accuracy": "Accuracy",
    "comprehensiveness": "Comprehensiveness",
    "depth": "Depth",
    "evidence": "Evidence",
    "coherence": "Coherence",
}
UNDEFINED_REASONS = {  # why a statistic is undefined (analysis.agreement), in the reports' words
    NO_ITEMS: "no answer both marked",
    ONE_CATEGORY: "every answer in one category",
    TOO_FEW: "a single answer",
    CONSTANT: "one grade throughout",
}
KAPPA_REASONS = (NO_ITEMS, ONE_CATEGORY)  # the reasons a kappa can be undefined
RHO_REASONS = (NO_ITEMS, TOO_FEW, CONSTANT)  # ... and Spearman's rho
JUDGE_CONFUSIONS_PER_ROW = 3

JUDGE_CSVS = ("judge_agreement.csv", "judge_confusions.csv")

FACET_TITLES = {"group": "Group", "expert": "Expertise", "age_band": "Age band", "sex": "Sex"}

QA_COLUMNS = [
    "qid",
    "round",
    "question",
    "type",
    "reference",
    "targets",
    "contents",
    "thinking",
    "player",
    "kind",
    "answered",
    "answer",
    "option",
    "correct",
    "ungraded",
]

METHOD_NOTES = {
    "uniform": "every tag weighs 1, so the weighted score equals the accuracy.",
    "cogsci2024": "every tag of a question weighs its THINKING level W: Recall 1, Recognition 2, "
    "Reasoning 3 (CogME, 2024).",
    "frontiers2022": "TARGET tag i weighs T<sub>i</sub> = SC × W<sub>T</sub> / T<sub>sum</sub> with "
    "SC = NT × W<sub>R</sub> (W<sub>R</sub>: Recall 1, Recognition 1.5, Reasoning 2; "
    "W<sub>T</sub> = 2 for the key target, else 1) (CogME, Frontiers 2022). "
    "CONTENT and THINKING tags weighted by W_R (our reading of the paper, which defines "
    "TARGET weights only).",
}

PAGE = A4
MARGIN = 18 * mm
FOOTER_SIZE = 7.5


# ------------------------------------------------------------------------------------ public API


class WrittenReports(dict):
    """``{file name: path}`` of every file :func:`write_reports` wrote, plus ``missing_characters``.

    ``missing_characters``: the characters of the PDFs' text (names, questions, answers, title...) that
    the embedded font cannot draw, sorted, without repeats; empty when everything renders.
    """

    missing_characters: tuple[str, ...] = ()


def write_reports(out_dir: str | Path, *, language: str = "en", **reports) -> WrittenReports:
    """:func:`_write_reports` with the PDFs' words in ``language`` (``en`` or ``ko``; see :mod:`analysis.report_text`).

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
) -> WrittenReports:
    """Write the PDFs and CSVs into ``out_dir`` (created if needed); return ``{file name: path}``.

    ``questions`` and ``answers`` are the frames of :mod:`analysis.frames`; ``profiles`` comes from
    :func:`analysis.cogme.profiles`, ``stats`` from :func:`analysis.votes.vote_stats` (without it
    there are no vote CSVs), ``exposure`` from :func:`analysis.votes.exposure` with the answers
    (its ``chance_pct`` column is shown when present; without it there is no ``exposure.csv``);
    ``ungraded`` (``player, qid, answer``) are open answers not graded yet, marked apart in the Q&A sheet.
    ``judge_agreement`` (:data:`JUDGE_AGREEMENT_COLUMNS`: per judge model, rater and measure, as
    :func:`analysis.agreement.judge_agreement` gives them; the rater :data:`analysis.agreement.FINAL_MARKS` is the
    final marks; an optional ``taken`` column, the rater's marks taken from the judge, is kept after ``items`` and
    shown per rater) and ``judge_confusions`` (:data:`JUDGE_CONFUSION_COLUMNS`: the 2x2 verdict counts, long) set an
    LLM judge's suggested grades beside the graders': with a row of agreement, ``judge_agreement.csv``,
    ``judge_confusions.csv`` and a section of ``report.pdf`` (after the jury's); without, none of them.
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
    look = _Look.create(profiles, stats)
    set_composition = composition(questions)
    has_judge = judge_agreement is not None and len(judge_agreement) > 0
    if has_judge:
        require_columns(judge_agreement, JUDGE_AGREEMENT_COLUMNS, "judge_agreement")
        if judge_confusions is None:
            judge_confusions = pd.DataFrame(columns=list(JUDGE_CONFUSION_COLUMNS))
        require_columns(judge_confusions, JUDGE_CONFUSION_COLUMNS, "judge_confusions")
    tables = _tables(questions, answers, profiles, stats, set_composition, exposure, ungraded)
    if has_judge:
        tables["judge_agreement.csv"] = judge_agreement[_judge_agreement_columns(judge_agreement)]
        tables["judge_confusions.csv"] = judge_confusions[list(JUDGE_CONFUSION_COLUMNS)]

    written = WrittenReports()
    for name, table in tables.items():
        written[name] = out_dir / name
        table.to_csv(written[name], index=False, encoding="utf-8")

    # Each section is (page orientation, builder, the user text it prints); a builder is called once
    # per PDF that holds it because ReportLab consumes flowables while laying them out.
    profile_part = (
        "portrait",
        lambda: _profile_section(profiles, set_composition, look),
        _texts(profiles.players["player"]),
    )
    has_jury = stats is not None or exposure is not None
    jury_part = (
        "portrait",
        lambda: _jury_section(stats, tables.get("tally.csv"), tables.get("exposure.csv"), look),
        _jury_texts(stats, exposure),
    )
    judge_part = (
        "portrait",
        lambda: _judge_section(tables["judge_agreement.csv"], tables["judge_confusions.csv"], look),
        _texts(*(tables[name][column] for name in JUDGE_CSVS for column in ("model", "rater"))) if has_judge else set(),
    )
    set_part = (
        "portrait",
        lambda: _composition_section(set_composition, tables["question_set.csv"], profiles, look),
        _texts(set_composition.untagged),
    )
    qa_part = ("landscape", lambda: _qa_section(tables["qa_sheet.csv"], look), _qa_texts(tables["qa_sheet.csv"]))
    documents = {"profiles.pdf": [profile_part]}
    if has_jury:
        documents["tallies.pdf"] = [jury_part]
    documents["report.pdf"] = (
        [profile_part] + ([jury_part] if has_jury else []) + ([judge_part] if has_judge else []) + [set_part, qa_part]
    )
    cover_text = _texts([title], (session_info or {}).keys(), (session_info or {}).values())
    missing_everywhere: set[str] = set()
    for name, sections in documents.items():
        missing = _missing_characters(cover_text.union(*(texts for _, _, texts in sections)))
        missing_everywhere |= set(missing)
        written[name] = out_dir / name
        _build_pdf(written[name], _cover(title, session_info, look, missing) + _stack(sections), title)
    written.missing_characters = tuple(sorted(missing_everywhere))
    return written


def _stack(sections: list[tuple[str, Callable[[], list[Flowable]], set[str]]]) -> list[Flowable]:
    """The sections one after another, each from a new page of its orientation."""
    story: list[Flowable] = []
    for index, (orientation, build, _) in enumerate(sections):
        if index:
            story += [NextPageTemplate(orientation), PageBreak()]
        story += build()
    return story


def _texts(*groups: Iterable) -> set[str]:
    """The user text of some values (None and NaN left out), as a set of strings."""
    return {
        str(value)
        for group in groups
        for value in group
        if value is not None and not (isinstance(value, float) and math.isnan(value))
    }


def _jury_texts(stats: VoteStats | None, exposure: pd.DataFrame | None) -> set[str]:
    texts: set[str] = set()
    if stats is not None:
        jurors = stats.jurors.head(MAX_JUROR_ROWS)
        texts |= _texts(stats.tally["player"], stats.groups["group"], *(jurors[c] for c in ("juror", *stats.facets)))
    if exposure is not None:
        texts |= _texts(exposure["qid"])
    return texts


def _qa_texts(qa_sheet: pd.DataFrame) -> set[str]:
    return _texts(*(qa_sheet[column] for column in ("qid", "question", "reference", "player", "answer", "option")))


def _missing_characters(texts: Iterable[str]) -> list[str]:
    """The characters of ``texts`` that the regular or the bold face cannot draw, in code point order."""
    characters = "".join(set("".join(texts)))
    return sorted(missing_glyphs(characters, REGULAR) | missing_glyphs(characters, BOLD))


def _character_names(characters: Sequence[str], limit: int = MAX_MISSING_LISTED) -> str:
    """``U+1F600 GRINNING FACE, ...``: characters named by code point and Unicode name (the font cannot draw them)."""
    named = [f"U+{ord(ch):04X} {unicodedata.name(ch, '')}".rstrip() for ch in characters[:limit]]
    more = len(characters) - limit
    return ", ".join(named) + (f" and {more} more" if more > 0 else "")


def markup(text: object) -> str:
    """User text made safe for Paragraph markup: ``&``, ``<``, ``>`` escaped, newlines kept."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return ""
    return escape(str(text)).replace("\n", "<br/>")


# ------------------------------------------------------------------------------------ the tables


def _tables(
    questions: pd.DataFrame,
    answers: pd.DataFrame,
    profiles: Profiles,
    stats: VoteStats | None,
    set_composition: Composition,
    exposure: pd.DataFrame | None = None,
    ungraded: pd.DataFrame | None = None,
) -> dict[str, pd.DataFrame]:
    """Every table of the reports as the frame written to its CSV (the PDFs render these frames).

    ``element_frequencies.csv`` holds the numbers of the element-frequency chart: per player and
    element the questions tagged with it, answered correctly and missed (no answer included).
    """
    tables = {
        "profile_players.csv": profiles.players.assign(method=profiles.method),
        "profile_elements.csv": profiles.elements.assign(method=profiles.method),
        "composition.csv": set_composition.elements,
        "element_frequencies.csv": element_frequencies(questions, answers),
        "question_set.csv": _question_set_table(set_composition),
        "qa_sheet.csv": _qa_table(questions, answers, profiles.players, ungraded),
    }
    if exposure is not None:
        tables["exposure.csv"] = exposure
    if stats is not None:
        tables |= {
            "rounds.csv": stats.rounds,
            "tally.csv": stats.tally,
            "ai_rounds.csv": stats.ai_rounds,
            "groups.csv": stats.groups,
            "jurors.csv": stats.jurors,
            "vote_summary.csv": _vote_summary_table(stats),
        }
    return tables


def _question_set_table(set_composition: Composition) -> pd.DataFrame:
    rows = [("all", "questions", set_composition.total)]
    rows += [("type", kind, count) for kind, count in set_composition.types.items()]
    rows += [("clip", kind, count) for kind, count in set_composition.clips.items()]
    rows += [("tags", "untagged", len(set_composition.untagged))]
    return pd.DataFrame(rows, columns=["facet", "value", "questions"])


def _vote_summary_table(stats: VoteStats) -> pd.DataFrame:
    summary = dict(stats.summary)
    ci_low, ci_high = summary.pop("overall_ci")
    row = {
        "pass_rule": stats.pass_rule,
        "alpha": stats.alpha,
        "threshold_pct": stats.threshold_pct,
        **summary,
        "overall_ci_low": ci_low,
        "overall_ci_high": ci_high,
        "confidence_votes": stats.confidence.get("votes"),
        "mean_confidence_right": stats.confidence.get("mean_right"),
        "mean_confidence_wrong": stats.confidence.get("mean_wrong"),
        "brier": stats.confidence.get("brier"),
    }
    return pd.DataFrame([row])


def _option_text(choices, index) -> str:
    """``"B · Deogi"`` for option 1 of ``choices``; empty without an option (or without its text)."""
    if pd.isna(index) or not isinstance(choices, (list, tuple)) or not 0 <= int(index) < len(choices):
        return ""
    return f"{option_label(int(index))}{OPTION_SEPARATOR}{choices[int(index)]}"


def _tag_text(question) -> dict[str, str]:
    """A question's tags in the native CSV spelling (``"Character;Object*"``)."""

    def names(value) -> tuple[str, ...]:
        return tuple(value) if isinstance(value, (list, tuple)) else ()

    key = question.key_target if isinstance(question.key_target, str) else None
    thinking = question.thinking if isinstance(question.thinking, str) else None
    return TagSet(names(question.targets), key, names(question.contents), thinking).as_text()


def _qa_table(
    questions: pd.DataFrame, answers: pd.DataFrame, players: pd.DataFrame, ungraded: pd.DataFrame | None = None
) -> pd.DataFrame:
    """One row per (question, player): the question, its tags and what the player answered.

    ``answered`` is False where the player has no answer row for the question or an empty answer
    (no answer: it counts as wrong).  ``ungraded`` (rows ``player, qid, answer``: open answers not
    graded yet, which the profiles leave out) are shown with their text and ``ungraded`` True.  ``option`` is
    the mcq option the answer names, as
    ``"B · Deogi"`` (letter, text; see :mod:`analysis.options`), empty for open questions and for
    answers that name no option.
    """
    sheet = pd.DataFrame(
        {
            "qid": questions["qid"].astype(str),
            "round": questions["round"],
            "question": questions["question"],
            "type": questions["type"],
            "reference": questions["answer"],
        }
    )
    tags = pd.DataFrame(
        [_tag_text(q) for q in questions.itertuples(index=False)],
        index=sheet.index,
        columns=["targets", "contents", "thinking"],
    )
    sheet = pd.concat([sheet, tags], axis=1).merge(players[["player", "kind"]], how="cross")
    given = answers[["qid", "player", "answer", "correct"]].assign(
        qid=answers["qid"].astype(str), answered=True, ungraded=False
    )
    if ungraded is not None and len(ungraded):
        waiting = ungraded[["qid", "player", "answer"]].assign(
            qid=ungraded["qid"].astype(str), correct=False, answered=True, ungraded=True
        )
        given = pd.concat([given, waiting], ignore_index=True)
    sheet = sheet.merge(given, on=["qid", "player"], how="left")
    has_row = sheet["answered"].notna().to_numpy(dtype=bool)
    answer = sheet["answer"].fillna("").astype(str)
    chosen, _ = chosen_options(sheet["qid"], answer, questions)
    choices = pd.Series(questions["choices"].to_numpy(), index=questions["qid"].astype(str).to_numpy())
    choices = choices[~choices.index.duplicated()]
    option = [_option_text(choices.get(qid), index) for qid, index in zip(sheet["qid"], chosen)]
    sheet = sheet.assign(
        answered=has_row & (answer.str.strip() != "").to_numpy(),
        answer=answer,
        option=option,
        correct=has_row & sheet["correct"].fillna(False).astype(bool).to_numpy(),
        ungraded=sheet["ungraded"].fillna(False).astype(bool).to_numpy(),
    )
    return sheet[QA_COLUMNS]


# ---------------------------------------------------------------------------- look and layout


@dataclass(frozen=True)
class _Look:
    """Paragraph styles and player styles shared by every section of one report."""

    text: dict[str, ParagraphStyle]
    players: dict[str, charts.PlayerStyle]

    @classmethod
    def create(cls, profiles: Profiles, stats: VoteStats | None) -> _Look:
        register_fonts()
        roster = list(zip(profiles.players["player"], profiles.players["kind"]))
        if stats is not None:
            roster += list(zip(stats.tally["player"], stats.tally["kind"]))
        return cls(_paragraph_styles(), charts.player_styles(roster))

    def para(self, text: str, style: str = "body") -> Paragraph:
        return Paragraph(text, self.text[style])

    def player(self, name: str) -> str:
        """A player's name as markup, bold with "(AI)" for AI players."""
        style = self.players.get(name)
        return f"<b>{markup(name)} (AI)</b>" if style and style.is_ai else markup(name)


def _paragraph_styles() -> dict[str, ParagraphStyle]:
    base = ParagraphStyle("body", fontName=REGULAR, fontSize=9, leading=12, spaceAfter=4)
    cell = ParagraphStyle("cell", base, fontSize=7.5, leading=9.2, spaceAfter=0)
    return {
        "body": base,
        # Sub- and superscripts in the method note need more room between lines.
        "method": ParagraphStyle("method", base, leading=14.5),
        "title": ParagraphStyle("title", base, fontName=BOLD, fontSize=16, leading=20, spaceAfter=8),
        "h1": ParagraphStyle(
            "h1", base, fontName=BOLD, fontSize=13, leading=16, spaceBefore=8, spaceAfter=6, keepWithNext=True
        ),
        "h2": ParagraphStyle(
            "h2", base, fontName=BOLD, fontSize=10.5, leading=13, spaceBefore=6, spaceAfter=4, keepWithNext=True
        ),
        "caption": ParagraphStyle(
            "caption", base, fontSize=7.5, leading=9.5, textColor=charts.GREY, spaceBefore=2, spaceAfter=8
        ),
        "cell": cell,
        "cell_right": ParagraphStyle("cell_right", cell, alignment=TA_RIGHT),
        # A hanging indent keeps wrapped answer text clear of the tick or cross in front of it.
        "answer": ParagraphStyle("answer", cell, leftIndent=9, firstLineIndent=-9),
        "head": ParagraphStyle("head", cell, fontName=BOLD),
        "head_right": ParagraphStyle("head_right", cell, fontName=BOLD, alignment=TA_RIGHT),
        "head_centre": ParagraphStyle("head_centre", cell, fontName=BOLD, alignment=TA_CENTER),
    }


@dataclass(frozen=True)
class _Column:
    header: str
    width: float  # share of the width given to the table (which is as wide as its shares add up to)
    numeric: bool = False  # right-aligned
    style: str | None = None  # the body cells' paragraph style, when not the plain cell

    @property
    def body_style(self) -> str:
        return self.style or ("cell_right" if self.numeric else "cell")


def _table(
    look: _Look,
    columns: Sequence[_Column],
    rows: Sequence[Sequence[str]],
    width: float,
    zebra: bool = False,
    header: bool = True,
    block_starts: Sequence[bool] = (),
) -> Table:
    """A booktabs-style table (rules above, below the header and at the end; no verticals).

    Cells are markup strings (user text already passed through :func:`markup`); they wrap.
    Without ``header`` it is a key/value box: the column headers are not shown.  ``block_starts``
    (one flag per body row, see :func:`_block_starts`): a thin rule above each block but the first.
    """
    head = [[look.para(c.header, "head_right" if c.numeric else "head") for c in columns]] if header else []
    body = [[look.para(cell, c.body_style) for c, cell in zip(columns, row)] for row in rows]
    table = Table(head + body, colWidths=[c.width * width for c in columns], repeatRows=len(head), hAlign="LEFT")
    commands = [
        ("LINEABOVE", (0, 0), (-1, 0), 0.9, colors.black),
        ("LINEBELOW", (0, -1), (-1, -1), 0.9, colors.black),
        ("FONTNAME", (0, 0), (-1, -1), REGULAR),  # the default, Helvetica, would be referenced unembedded
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("TOPPADDING", (0, 0), (-1, -1), 1.6),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 1.6),
        ("LEFTPADDING", (0, 0), (-1, -1), 3),
        ("RIGHTPADDING", (0, 0), (-1, -1), 3),
    ]
    if header:
        commands.append(("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.black))
    if zebra:
        commands.append(("ROWBACKGROUNDS", (0, 1), (-1, -1), [None, colors.HexColor("#F2F2F2")]))
    commands += [
        ("LINEABOVE", (0, row + len(head)), (-1, row + len(head)), 0.3, charts.GRID)
        for row, start in enumerate(block_starts)
        if start and row
    ]
    table.setStyle(TableStyle(commands))
    return table


def _block_starts(keys: Sequence) -> list[bool]:
    """Whether each row starts a block of equal consecutive keys (shows the key, gets a rule above)."""
    return [index == 0 or key != keys[index - 1] for index, key in enumerate(keys)]


def _frame_width(orientation: str = "portrait") -> float:
    size = landscape(PAGE) if orientation == "landscape" else PAGE
    return size[0] - 2 * MARGIN


def _number(value, digits: int = 1) -> str:
    return "–" if value is None or pd.isna(value) else f"{value:.{digits}f}"


def _p_value(value) -> str:
    if value is None or pd.isna(value):
        return "–"
    return "&lt; 0.001" if value < 0.001 else f"{value:.3f}"


def _p_equation(value) -> str:
    """``p = 0.031`` or ``p < 0.001`` (markup)."""
    text = _p_value(value)
    return f"p {text}" if text.startswith("&lt;") else f"p = {text}"


def _interval(low, high) -> str:
    return "–" if low is None or pd.isna(low) else f"{low:.1f}–{high:.1f}"


# ------------------------------------------------------------------------------------ sections


def _cover(title: str, session_info: dict | None, look: _Look, missing: Sequence[str] = ()) -> list[Flowable]:
    story: list[Flowable] = [look.para(markup(title), "title")]
    if session_info:
        rows = [[markup(key), markup(value)] for key, value in session_info.items()]
        story += [
            _table(look, [_Column("", 0.25), _Column("", 0.75)], rows, _frame_width() * 0.7, header=False),
            Spacer(1, 6),
        ]
    if missing:
        story.append(
            look.para(
                t(
                    "<font color='#{colour}'><b>Note:</b></font> characters the embedded font cannot show: "
                    "{names}. They print as blanks or boxes in this PDF; the CSV files hold the exact text.",
                    colour=charts.VERMILLION.hexval()[2:],
                    names=markup(_character_names(missing)),
                )
            )
        )
    return story


def _profile_section(profiles: Profiles, set_composition: Composition, look: _Look) -> list[Flowable]:
    width = _frame_width()
    method = markup(profiles.method)
    players = list(profiles.players["player"])
    overlay = [
        charts.module_radar(profiles.elements, module, look.players, legend=False, width=width / 2, height=225)
        for module in _modules_asked(profiles.elements)
    ]
    key = [
        charts.legend_chart(players, look.players, width=width / 2 - 30),
        Spacer(1, 8),
        look.para(
            t(
                "Weighted score % per element under <b>{method}</b>, every player overlaid; rings at 0, 25, "
                "50, 75 and 100 %; n = questions tagged with the element.",
                method=method,
            ),
            "caption",
        ),
    ]
    untagged = len(set_composition.untagged)
    untagged_note = (
        [
            look.para(
                t(
                    "{untagged} of {total} questions carries no CogME tag: counted in overall accuracy only."
                    if untagged == 1
                    else "{untagged} of {total} questions carry no CogME tag: counted in overall accuracy only.",
                    untagged=untagged,
                    total=set_composition.total,
                )
            )
        ]
        if untagged
        else []
    )
    return [
        look.para(t("CogME profiles"), "h1"),
        look.para(
            t("Scoring method: <b>{method}</b> — {note}", method=method, note=t(METHOD_NOTES.get(profiles.method, ""))),
            "method",
        ),
        *untagged_note,
        look.para(
            t(
                "Accuracy = correct / questions tagged with the element (no answer counts as wrong); weighted "
                "score = the same with each question weighted by the method. Element SD = sample standard "
                "deviation (n - 1) of a player's element accuracies over all elements asked."
            )
        ),
        _table(
            look,
            [
                _Column(t("Player"), 0.34),
                _Column(t("Kind"), 0.1),
                _Column(t("Questions"), 0.12, True),
                _Column(t("Correct"), 0.12, True),
                _Column(t("Accuracy %"), 0.16, True),
                _Column(t("Element SD"), 0.16, True),
            ],
            [
                [
                    look.player(p.player),
                    t("AI" if p.kind == "ai" else p.kind),
                    str(p.questions),
                    str(p.correct),
                    _number(p.accuracy_pct),
                    _number(p.element_sd, 2),
                ]
                for p in profiles.players.itertuples(index=False)
            ],
            width * 0.8,
        ),
        Spacer(1, 10),
        # whole: on this page, drawn smaller to fit, else on the next one; never a row of it alone on a page
        _FitOnPage(_radar_grid(overlay, key, width), min_scale=RADAR_MIN_SCALE),
    ] + [
        flowable
        for player in profiles.players.itertuples(index=False)
        for flowable in [PageBreak()] + _player_page(profiles, player, look)
    ]


def _modules_asked(elements: pd.DataFrame) -> list[Module]:
    return [module for module in Module if (elements["module"] == module.value).any()]


def _radar_grid(radars: list[Flowable], last_cell: list[Flowable], width: float) -> Table:
    """Radars two by two, the last cell (legend, caption) filling the gap the third radar leaves."""
    cells = radars + [last_cell]
    grid = Table([cells[i : i + 2] for i in range(0, len(cells), 2)], colWidths=[width / 2] * 2, hAlign="LEFT")
    grid.setStyle(
        TableStyle(
            [
                ("FONTNAME", (0, 0), (-1, -1), REGULAR),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("VALIGN", (-1, -1), (-1, -1), "MIDDLE"),
                ("LEFTPADDING", (0, 0), (-1, -1), 0),
                ("RIGHTPADDING", (0, 0), (-1, -1), 0),
            ]
        )
    )
    return grid


class _FitOnPage(Flowable):
    """``content`` kept whole: drawn in the space left on the page, scaled down to ``min_scale`` if need be;
    when even that does not fit, whole on the next page (a grid of radars split row by row left a page
    holding one radar and nothing else)."""

    def __init__(self, content: Flowable, min_scale: float):
        super().__init__()
        self.content, self.min_scale, self.scale = content, min_scale, 1.0

    def wrap(self, available_width: float, available_height: float) -> tuple[float, float]:
        width, height = self.content.wrap(available_width, available_height)
        fits = min(1.0, available_height / height) if height else 1.0
        self.scale = fits if fits >= self.min_scale else 1.0  # too small: the frame moves it to the next page
        self.width, self.height = width * self.scale, height * self.scale
        return self.width, self.height

    def split(self, available_width: float, available_height: float) -> list[Flowable]:
        return []  # never in pieces

    def draw(self) -> None:
        self.canv.saveState()
        self.canv.scale(self.scale, self.scale)
        self.content.drawOn(self.canv, 0, 0)
        self.canv.restoreState()


def _player_page(profiles: Profiles, player, look: _Look) -> list[Flowable]:
    width = _frame_width()
    elements = profiles.elements[profiles.elements["player"] == player.player]
    radars = [
        charts.module_radar(elements, module, look.players, players=[player.player], width=width / 2, height=185)
        for module in _modules_asked(elements)
    ]
    caption = look.para(
        t(
            "Shaded: weighted score % per element of {player} under <b>{method}</b>; rings at 0, 25, "
            "50, 75 and 100 %; n = questions tagged with the element.",
            player=look.player(player.player),
            method=markup(profiles.method),
        ),
        "caption",
    )
    rows, previous_module = [], None
    for e in elements.itertuples(index=False):
        rows.append(
            [
                e.module.upper() if e.module != previous_module else "",
                markup(e.element),
                str(e.questions),
                str(e.correct),
                _number(e.accuracy_pct),
                _number(e.score_pct),
            ]
        )
        previous_module = e.module
    return [
        look.para(t("Player: {player}", player=look.player(player.player)), "h2"),
        look.para(
            t(
                "AI player · overall accuracy <b>{accuracy} %</b> ({correct} of {questions} questions) · "
                "element SD <b>{sd}</b>"
                if player.kind == "ai"
                else "Human player · overall accuracy <b>{accuracy} %</b> ({correct} of {questions} questions) · "
                "element SD <b>{sd}</b>",
                accuracy=_number(player.accuracy_pct),
                correct=player.correct,
                questions=player.questions,
                sd=_number(player.element_sd, 2),
            )
        ),
        _radar_grid(radars, [caption], width),
        _table(
            look,
            [
                _Column(t("Module"), 0.16),
                _Column(t("Element"), 0.24),
                _Column(t("Attempts"), 0.14, True),
                _Column(t("Correct"), 0.14, True),
                _Column(t("Accuracy %"), 0.16, True),
                _Column(t("Weighted score %"), 0.16, True),
            ],
            rows,
            width,
        ),
    ]


def _jury_section(
    stats: VoteStats | None, tally: pd.DataFrame | None, exposure: pd.DataFrame | None, look: _Look
) -> list[Flowable]:
    """The votes (with statistics), then the judgment sheet's exposure table (with one)."""
    story = _tally_section(stats, tally, look) if stats is not None else [look.para(t("Jury"), "h1")]
    if exposure is not None:
        story += _exposure_section(exposure, look)
    return story


def _tally_section(stats: VoteStats, tally: pd.DataFrame, look: _Look) -> list[Flowable]:
    width = _frame_width()
    summary = stats.summary
    judged = summary["rounds_with_votes"]
    silent = summary["rounds_without_votes"]
    silent_text = (
        t(" ({silent} round without votes)" if silent == 1 else " ({silent} rounds without votes)", silent=silent)
        if silent
        else ""
    )
    several_slots = bool((stats.rounds["votes"] > stats.rounds["voters"]).any())
    story: list[Flowable] = [
        look.para(t("Jury votes"), "h1"),
        look.para(t("Pass rule: {rule}", rule=_rule_text(stats))),
        look.para(
            t(
                "The AI passed <b>{passed} of {judged}</b> rounds{silent}. Overall detection <b>{detection} %</b> of "
                "{votes} cast votes (95 % Wilson CI {ci} %; one-sided exact binomial {p} against chance; both pool the "
                "rounds and treat the votes as independent, which one juror's votes are not, so read them as "
                "approximate); mean detection over rounds {mean} %. One player was named by more than half of the "
                "voting jurors in {majority} of {judged} rounds.",
                passed=summary["rounds_passed"],
                judged=judged,
                silent=silent_text,
                detection=_number(summary["overall_detection_pct"]),
                votes=summary["overall_votes"],
                ci=_interval(*summary["overall_ci"]),
                p=_p_equation(summary["overall_p_value"]),
                mean=_number(summary["mean_detection_pct"]),
                majority=summary["majority_rounds"],
            )
        ),
        charts.detection_chart(
            stats.rounds,
            width=width,
            height=210,
            threshold_pct=stats.threshold_pct if stats.pass_rule == "threshold" else None,
        ),
        look.para(
            t(
                "Detection = share of cast votes naming an AI player; whiskers: 95 % Wilson interval; "
                "dashed: chance level (number of AI players / players)."
            ),
            "caption",
        ),
    ]
    # The heading goes into the first round's block: keepWithNext cannot keep it with a KeepTogether.
    heading = [look.para(t("Votes per round"), "h2")]
    if several_slots:
        heading.append(
            look.para(
                t(
                    "Jurors named several players per round (one per AI player): a player's share and the majority are "
                    "counted out of the jurors who voted (each names a player at most once), detection out of all cast "
                    "votes."
                ),
                "caption",
            )
        )
    for row in stats.rounds.itertuples(index=False):
        votes = tally[tally["round"] == row.round]
        story.append(
            KeepTogether(
                [
                    *heading,
                    charts.round_votes_chart(
                        votes, look.players, title=t("Round {round}", round=row.round), width=width, height=150
                    ),
                    Spacer(1, 3),
                    _round_figures(stats, row, votes, look, width, several_slots),
                    Spacer(1, 10),
                ]
            )
        )
        heading = []
    story += heading
    if stats.ai_rounds["player"].nunique() > 1:
        story += _ai_verdicts(stats, look, width)
    story += _jury_tables(stats, look, width)
    return story


def _ai_verdicts(stats: VoteStats, look: _Look, width: float) -> list[Flowable]:
    """Each AI player judged alone, round by round (sessions with several AI players)."""
    starts = _block_starts(list(stats.ai_rounds["round"]))
    rows = []
    for row, start in zip(stats.ai_rounds.itertuples(index=False), starts):
        verdict = t("no votes") if pd.isna(row.passed) else t("passed") if row.passed else t("<b>detected</b>")
        rows.append(
            [
                str(row.round) if start else "",
                look.player(row.player),
                str(row.votes),
                _number(row.share_pct),
                _number(row.detection_pct),
                verdict,
            ]
        )
    return [
        look.para(t("Verdict per AI player"), "h2"),
        _table(
            look,
            [
                _Column(t("Round"), 0.1),
                _Column(t("AI player"), 0.28),
                _Column(t("Votes"), 0.1, True),
                _Column(t("Share %"), 0.12, True),
                _Column(t("Detection %"), 0.14, True),
                _Column(t("Result"), 0.14),
            ],
            rows,
            width,
            block_starts=starts,
        ),
        look.para(
            t(
                "Each AI player judged alone under <b>{rule}</b>: {rule_text} Share = of the jurors who voted; "
                "detection = this AI's share of the cast votes.",
                rule=markup(stats.pass_rule),
                rule_text=_ai_rule_text(stats),
            ),
            "caption",
        ),
    ]


def _ai_rule_text(stats: VoteStats) -> str:
    players = int(stats.rounds["players"].iloc[0])
    texts = {
        "human-tie": "it passes a round when some human drew at least as many votes as it did.",
        "chance": "it passes a round when a one-sided exact binomial test of its votes against 1 / {players} "
        "players is not significant at α = {alpha}.",
        "threshold": "it passes a round when its detection ≤ {threshold} %.",
    }
    return t(texts[stats.pass_rule], players=players, alpha=f"{stats.alpha:g}", threshold=f"{stats.threshold_pct:g}")


def _exposure_section(exposure: pd.DataFrame, look: _Look) -> list[Flowable]:
    """Per question: "looks like the AI" marks, how many fell on the AI, and the share blind marks would reach."""
    width = _frame_width()
    has_chance = "chance_pct" in exposure.columns
    columns = [
        _Column(t("Question"), 0.28),
        _Column(t("Marks"), 0.14, True),
        _Column(t("Marks on the AI"), 0.2, True),
        _Column(t("Exposure %"), 0.18, True),
    ] + ([_Column(t("Chance %"), 0.2, True)] if has_chance else [])
    rows = [
        [markup(row.qid), str(row.marks), str(row.ai_marks), _number(row.exposure_pct)]
        + ([_number(row.chance_pct)] if has_chance else [])
        for row in exposure.itertuples(index=False)
    ]
    total_marks, total_ai = int(exposure["marks"].sum()), int(exposure["ai_marks"].sum())
    overall = _number(100 * total_ai / total_marks) if total_marks else "–"
    return [
        look.para(t("Judgment sheet: exposure"), "h2"),
        look.para(
            t(
                "Jurors marked {marks} answers as looking like the AI's; {ai_marks} of them were an AI "
                "player's ({overall} %).",
                marks=total_marks,
                ai_marks=total_ai,
                overall=overall,
            )
        ),
        _table(look, columns, rows, width * 0.75, zebra=True),
        look.para(
            t(
                "Exposure = share of the question's \"looks like the AI\" marks that fell on an AI player's "
                "answer; chance = AI answers / all answers to the question, the share marks placed blindly "
                "would reach."
            ),
            "caption",
        ),
    ]


@dataclass(frozen=True)
class JudgeRow:
    """One line of a judge's agreement with a rater, as the report and the results page show it."""

    model: str
    rater: str  # a grader, or FINAL_MARKS
    measures: tuple[str, ...]  # one measure; or the dimensions neither statistic can use (no answer both marked)
    items: int  # the answers both marked on the measure
    kappa: float  # Cohen's kappa ("correct") or the quadratic weighted kappa (a dimension); NaN when undefined
    kappa_reason: str | None  # why kappa is undefined (analysis.agreement's reasons), None when defined
    spearman: float | None  # None on "correct" (not a grade); NaN when undefined
    spearman_reason: str | None
    starts_rater: bool  # the rater's first line
    taken: int | None = None  # the rater's marks taken from the judge; None: not given, or the final marks


def judge_rows(agreement: pd.DataFrame) -> dict[str, list[JudgeRow]]:
    """Per judge model (in order), the lines of its agreement table (:data:`JUDGE_AGREEMENT_COLUMNS`).

    Per rater the measures keep their order, except that the dimensions no answer of which both marked are folded
    into one line (``measures`` several, ``items`` 0): five lines saying "undefined" say less than one.  The two
    statistics' reasons are told apart from the row's ``reason`` (``no_items; constant``...).
    """
    found: dict[str, list[JudgeRow]] = {}
    for (model, rater), block in agreement.groupby(["model", "rater"], sort=False):
        lines, unshared = [], []
        for row in block.itertuples(index=False):
            reasons = str(row.reason).split("; ") if isinstance(row.reason, str) else []
            if row.measure != "correct" and row.items == 0:
                unshared.append(row.measure)
                if len(unshared) > 1:
                    continue
            correct = row.measure == "correct"
            kappa = row.kappa if correct else row.weighted_kappa
            lines.append(
                JudgeRow(
                    model=str(model),
                    rater=str(rater),
                    measures=(row.measure,),
                    items=int(row.items),
                    kappa=float(kappa),
                    kappa_reason=_reason_of(kappa, reasons, KAPPA_REASONS),
                    spearman=None if correct else float(row.spearman),
                    spearman_reason=None if correct else _reason_of(row.spearman, reasons, RHO_REASONS),
                    starts_rater=not lines,
                    taken=_taken_of(row, rater),
                )
            )
        if len(unshared) > 1:
            at = next(index for index, line in enumerate(lines) if line.measures == (unshared[0],))
            lines[at] = replace(lines[at], measures=tuple(unshared))
        found.setdefault(str(model), []).extend(lines)
    return found


def _judge_agreement_columns(agreement: pd.DataFrame) -> list[str]:
    columns = list(JUDGE_AGREEMENT_COLUMNS)
    if JUDGE_TAKEN in agreement.columns:
        columns.insert(columns.index("items") + 1, JUDGE_TAKEN)
    return columns


def _taken_of(row, rater) -> int | None:
    taken = getattr(row, JUDGE_TAKEN, None)
    if rater == FINAL_MARKS or taken is None or pd.isna(taken):
        return None
    return int(taken)


def _reason_of(value, reasons: list[str], possible: tuple[str, ...]) -> str | None:
    if not pd.isna(value):
        return None
    return next((reason for reason in reasons if reason in possible), reasons[0] if reasons else NO_ITEMS)


def _judge_section(agreement: pd.DataFrame, confusions: pd.DataFrame, look: _Look) -> list[Flowable]:
    """Per judge model: its agreement with each grader and with the final marks, then the verdicts' 2x2 tables."""
    width = _frame_width()
    story: list[Flowable] = [
        look.para(t("The judge beside the graders"), "h1"),
        look.para(
            t(
                "A language model (the judge) suggested grades for the open answers: correct or incorrect, and 0–5 "
                "on MovieCORE's five dimensions. Here its suggestions are set beside each grader's own marks and "
                "beside the final marks. The suggestions never counted as marks: a suggestion became a mark only "
                "when a grader took it, and then it is that grader's own mark."
            )
        ),
    ]
    for model, lines in judge_rows(agreement).items():
        story += [look.para(t("Judge: {model}", model=markup(model)), "h2"), _judge_table(lines, look, width)]
        verdicts = confusions[confusions["model"] == model]
        if len(verdicts):
            story += [Spacer(1, 8), _confusion_grid(verdicts, look, width)]
    story.append(
        look.para(
            t(
                "κ on correct/incorrect: Cohen's kappa (Cohen, 1960); κ on a 0–5 dimension: Cohen's weighted kappa "
                "with quadratic weights (Cohen, 1968); Spearman's ρ (ties at their average rank) as a rank check. "
                "Each is taken over the answers both the judge and the rater marked on that measure; 1 is perfect "
                "agreement, 0 what chance gives. Final marks: the marks the reports use, set from the graders' "
                "agreement or by hand. The tables: the verdicts on the answers both marked, rows the rater's, "
                "columns the judge's; the shaded diagonal is where they agree. A mark a grader took from the judge "
                "is that grader's, and agrees with the judge."
            )
            + (
                " "
                + t(
                    "A grader's marks taken from the judge agree with it by construction: their count is shown per "
                    "grader."
                )
                if JUDGE_TAKEN in agreement.columns
                else ""
            ),
            "caption",
        )
    )
    return story


def _judge_table(lines: list[JudgeRow], look: _Look, width: float) -> Table:
    """Rater x measure: the answers both marked, kappa and rho; one "undefined" across both where neither has an
    answer to go on."""
    unshared = [line.kappa_reason == NO_ITEMS and line.spearman_reason == NO_ITEMS for line in lines]
    with_taken = any(line.taken is not None for line in lines)
    taken = [_Column(t("Marks taken from the judge"), 0.12, True)] if with_taken else []
    table = _table(
        look,
        [
            _Column(t("Rater"), 0.14),
            *taken,
            _Column(t("Measure"), 0.26 if with_taken else 0.38),
            _Column(t("Answers both marked"), 0.12, True),
            _Column(t("κ / weighted κ"), 0.18, True),
            _Column(t("Spearman ρ"), 0.18, True),
        ],
        [
            [
                _rater_name(line.rater) if line.starts_rater else "",
                *([str(line.taken) if line.starts_rater and line.taken is not None else ""] if with_taken else []),
                ", ".join(t(MEASURE_NAMES.get(measure, measure)) for measure in line.measures),
                str(line.items),
                _statistic(line.kappa, line.kappa_reason),
                "" if line.spearman is None or both else _statistic(line.spearman, line.spearman_reason),
            ]
            for line, both in zip(lines, unshared)
        ],
        width,
        block_starts=[line.starts_rater for line in lines],
    )
    first = 4 if with_taken else 3  # the kappa's column
    table.setStyle(
        TableStyle([("SPAN", (first, row + 1), (first + 1, row + 1)) for row, both in enumerate(unshared) if both])
    )
    return table


def _rater_name(rater: str) -> str:
    return t("Final marks") if rater == FINAL_MARKS else markup(rater)


def _statistic(value: float, reason: str | None) -> str:
    """A kappa or rho to two decimals, or why it is undefined (grey)."""
    if reason is None and not pd.isna(value):
        return f"{value:.2f}"
    why = t("undefined: {reason}", reason=t(UNDEFINED_REASONS.get(reason, reason or "")))
    return f"<font color='#{charts.GREY.hexval()[2:]}'>{why}</font>"


def _confusion_grid(confusions: pd.DataFrame, look: _Look, width: float) -> Table:
    """The model's 2x2 tables of the verdicts, one per rater, a few side by side."""
    gap = 10
    each = (width - gap * (JUDGE_CONFUSIONS_PER_ROW - 1)) / JUDGE_CONFUSIONS_PER_ROW
    boxes = [
        _confusion_table(str(rater), matrix, look, each) for rater, matrix in confusions.groupby("rater", sort=False)
    ]
    cells: list[list] = []
    for start in range(0, len(boxes), JUDGE_CONFUSIONS_PER_ROW):
        row = boxes[start : start + JUDGE_CONFUSIONS_PER_ROW]
        cells.append(row + [""] * (JUDGE_CONFUSIONS_PER_ROW - len(row)))
    grid = Table(cells, colWidths=[each + gap] * (JUDGE_CONFUSIONS_PER_ROW - 1) + [each], hAlign="LEFT")
    grid.setStyle(
        TableStyle(
            [
                ("FONTNAME", (0, 0), (-1, -1), REGULAR),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("LEFTPADDING", (0, 0), (-1, -1), 0),
                ("RIGHTPADDING", (0, 0), (-1, -1), gap),
                ("RIGHTPADDING", (-1, 0), (-1, -1), 0),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 8),
            ]
        )
    )
    return grid


def _confusion_table(rater: str, counts: pd.DataFrame, look: _Look, width: float) -> Table:
    """One rater's 2x2: rows the rater's verdict, columns the judge's (a header spanning them), the agreeing diagonal
    shaded; the booktabs rules of :func:`_table`."""
    count = {
        (bool(row.rater_verdict), bool(row.judge_verdict)): int(row.answers) for row in counts.itertuples(index=False)
    }
    verdicts = ((True, t("correct")), (False, t("incorrect")))
    cells = [
        [look.para(_rater_name(rater), "head"), look.para(t("Judge"), "head_centre"), ""],
        ["", *(look.para(label, "head_right") for _, label in verdicts)],
        *(
            [
                look.para(label, "cell"),
                *(look.para(str(count.get((theirs, judges), 0)), "cell_right") for judges, _ in verdicts),
            ]
            for theirs, label in verdicts
        ),
    ]
    table = Table(cells, colWidths=[0.4 * width, 0.3 * width, 0.3 * width], hAlign="LEFT")
    table.setStyle(
        TableStyle(
            [
                ("SPAN", (1, 0), (2, 0)),
                ("LINEABOVE", (0, 0), (-1, 0), 0.9, colors.black),
                ("LINEBELOW", (1, 0), (2, 0), 0.3, charts.GRID),
                ("LINEBELOW", (0, 1), (-1, 1), 0.5, colors.black),
                ("LINEBELOW", (0, -1), (-1, -1), 0.9, colors.black),
                ("BACKGROUND", (1, 2), (1, 2), _AGREE),
                ("BACKGROUND", (2, 3), (2, 3), _AGREE),
                ("FONTNAME", (0, 0), (-1, -1), REGULAR),
                ("VALIGN", (0, 0), (-1, -1), "BOTTOM"),
                ("TOPPADDING", (0, 0), (-1, -1), 1.6),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 1.6),
                ("LEFTPADDING", (0, 0), (-1, -1), 3),
                ("RIGHTPADDING", (0, 0), (-1, -1), 3),
            ]
        )
    )
    return table


_AGREE = colors.HexColor("#E8E8E8")


def _rule_text(stats: VoteStats) -> str:
    texts = {
        "human-tie": "<b>human-tie</b> — the AI passes a round when some human drew at least as many votes "
        "as the AI (2021 public event).",
        "chance": "<b>chance</b> — the AI passes a round when a one-sided exact binomial test of detection "
        "against chance (AI players / players) is not significant at α = {alpha}.",
        "threshold": "<b>threshold</b> — the AI passes a round when detection ≤ {threshold} % "
        "(Turing, 1950: 70 % right identification).",
    }
    if stats.pass_rule not in texts:
        return markup(stats.pass_rule)
    return t(texts[stats.pass_rule], alpha=f"{stats.alpha:g}", threshold=f"{stats.threshold_pct:g}")


def _rule_statistic(stats: VoteStats, row, votes: pd.DataFrame) -> str:
    """The number the round's verdict rests on under the session's pass rule."""
    if stats.pass_rule == "chance":
        return f"{_p_equation(row.p_value)} vs α = {stats.alpha:g}"
    if stats.pass_rule == "threshold":
        return f"{_number(row.detection_pct)} % vs ≤ {stats.threshold_pct:g} %"
    top = votes.groupby("kind")["votes"].max()
    return t("top human {human} vs AI {ai} votes", human=int(top.get("human", 0)), ai=int(top.get("ai", 0)))


def _round_figures(
    stats: VoteStats, row, votes: pd.DataFrame, look: _Look, width: float, several_slots: bool = False
) -> Table:
    if pd.isna(row.ai_passed):
        verdict = t("no votes")
    else:
        verdict = t("<b>AI passed</b>") if row.ai_passed else t("<b>AI detected</b>")
    if not row.majority:
        majority = t("none")
    else:  # several slots let two players pass half of the jurors
        majority = look.player(row.majority_player) if row.majority_player is not None else t("several (tied)")
    # with several slots the jurors who voted (the shares' denominator) get a column of their own
    jurors = [_Column(t("Jurors"), 0.07, True)] if several_slots else []
    narrow = 0.01 * several_slots  # the Jurors column takes its 0.07 from the columns with room to spare
    return _table(
        look,
        [
            _Column(t("Votes"), 0.07, True),
            *jurors,
            _Column(t("Abstentions"), 0.1, True),
            _Column(t("AI votes"), 0.08, True),
            _Column(t("Detection %"), 0.11, True),
            _Column(t("95 % CI"), 0.1 - narrow, True),
            _Column("p", 0.07 - narrow, True),
            _Column(t("Majority"), 0.14 - 2 * narrow),
            _Column(t("Statistic ({rule})", rule=markup(stats.pass_rule)), 0.22 - 2 * narrow),
            _Column(t("Result"), 0.11 - narrow),
        ],
        [
            [
                str(row.votes),
                *([str(row.voters)] if several_slots else []),
                str(row.abstentions),
                str(row.ai_votes),
                _number(row.detection_pct),
                _interval(row.ci_low, row.ci_high),
                _p_value(row.p_value),
                majority,
                _rule_statistic(stats, row, votes),
                verdict,
            ]
        ],
        width,
    )


def _facet_value(facet: str, value) -> str:
    """A juror's label in a facet: expertise is the program's own word (in the report's language), the
    other facets are what the host wrote."""
    return t(value) if facet == "expert" and value in ("expert", "non-expert") else markup(value)


def _jury_tables(stats: VoteStats, look: _Look, width: float) -> list[Flowable]:
    story: list[Flowable] = [look.para(t("Juror groups"), "h2")]
    if len(stats.groups):
        starts = _block_starts(list(stats.groups["facet"]))
        rows = [
            [
                t(FACET_TITLES[g.facet]) if start else "",
                _facet_value(g.facet, g.group),
                str(g.jurors),
                str(g.votes),
                str(g.ai_votes),
                _number(g.detection_pct),
                _interval(g.ci_low, g.ci_high),
            ]
            for g, start in zip(stats.groups.itertuples(index=False), starts)
        ]
        story += [
            _table(
                look,
                [
                    _Column(t("Facet"), 0.14),
                    _Column(t("Group"), 0.2),
                    _Column(t("Jurors"), 0.09, True),
                    _Column(t("Votes"), 0.09, True),
                    _Column(t("AI votes"), 0.1, True),
                    _Column(t("Detection %"), 0.13, True),
                    _Column(t("95 % CI"), 0.13, True),
                ],
                rows,
                width,
                block_starts=starts,
            ),
            look.para(
                t(
                    "Detection = share of the group's cast votes (all rounds) naming an AI player; jurors = "
                    "jurors with the label, including those who only abstained."
                ),
                "caption",
            ),
        ]
    else:
        story.append(look.para(t("No juror carried a group label.")))

    jurors = stats.jurors
    story += [
        look.para(t("Jurors"), "h2"),
        _table(
            look,
            [
                _Column(t("Juror"), 0.16),
                *(_Column(t(FACET_TITLES[facet]), 0.12) for facet in stats.facets),
                _Column(t("Rounds"), 0.09, True),
                _Column(t("Votes"), 0.09, True),
                _Column(t("Hits"), 0.09, True),
                _Column(t("Hit rate %"), 0.09, True),
            ],
            [
                [
                    markup(j["juror"]),
                    *(_facet_value(facet, j[facet]) for facet in stats.facets),
                    str(j["rounds"]),
                    str(j["votes"]),
                    str(j["hits"]),
                    _number(j["hit_rate_pct"]),
                ]
                for j in jurors.head(MAX_JUROR_ROWS).to_dict("records")
            ],
            width,
            zebra=True,
        ),
    ]
    if len(jurors) > MAX_JUROR_ROWS:
        story.append(
            look.para(
                t("First {shown} of {count} jurors; all are in jurors.csv.", shown=MAX_JUROR_ROWS, count=len(jurors)),
                "caption",
            )
        )
    story.append(
        look.para(
            t(
                "Mean hit rate {rate} % over the jurors who cast a vote (hits = votes naming an AI player).",
                rate=_number(stats.summary["mean_hit_rate_pct"]),
            ),
            "caption",
        )
    )

    confidence = stats.confidence
    story += [
        look.para(t("Confidence"), "h2"),
        _table(
            look,
            [
                _Column(t("Mean confidence, right votes"), 0.28, True),
                _Column(t("Mean confidence, wrong votes"), 0.28, True),
                _Column(t("Brier score"), 0.17, True),
                _Column(t("Votes with a confidence"), 0.27, True),
            ],
            [
                [
                    _number(confidence.get("mean_right"), 2),
                    _number(confidence.get("mean_wrong"), 2),
                    _number(confidence.get("brier"), 3),
                    str(confidence.get("votes", 0)),
                ]
            ],
            width * 0.85,
        ),
        look.para(
            t(
                "Confidence on a 1–5 scale; the Brier score reads confidence as the probability of being right "
                "(1 = a blind guess, 5 = certain); lower is better."
            ),
            "caption",
        ),
    ]
    return story


def _composition_section(
    set_composition: Composition, question_set: pd.DataFrame, profiles: Profiles, look: _Look
) -> list[Flowable]:
    width = _frame_width()
    types, clips = set_composition.types, set_composition.clips
    untagged = set_composition.untagged
    untagged_text = t("<b>{count}</b> untagged", count=len(untagged)) + (
        f" ({markup(', '.join(untagged[:20]))}{', …' if len(untagged) > 20 else ''})" if untagged else ""
    )
    return [
        look.para(t("Question set"), "h1"),
        look.para(
            t(
                "<b>{total}</b> questions: {mcq} multiple-choice, {open} open-ended; {shot} on shot clips, "
                "{scene} on scene clips, {none} without a clip kind; {untagged}.",
                total=set_composition.total,
                mcq=types["mcq"],
                open=types["open"],
                shot=clips["shot"],
                scene=clips["scene"],
                none=clips["none"],
                untagged=untagged_text,
            )
        ),
        _table(
            look,
            [_Column(t("Facet"), 0.34), _Column(t("Value"), 0.38), _Column(t("Questions"), 0.28, True)],
            [[t(row.facet), t(row.value), str(row.questions)] for row in question_set.itertuples(index=False)],
            width * 0.45,
        ),
        Spacer(1, 10),
        charts.element_chart(set_composition.elements, look.players, profiles.elements, width=width),
        look.para(
            t(
                "Element frequency: questions tagged with each CogME element (optional elements only when "
                "used), and per player how many of them were answered correctly (solid) or missed (light)."
            ),
            "caption",
        ),
    ]


def _qa_section(qa_sheet: pd.DataFrame, look: _Look) -> list[Flowable]:
    """The Q&A sheet; with many players it is split into tables of a few players each to stay legible."""
    players = list(dict.fromkeys(qa_sheet["player"]))
    tables = math.ceil(len(players) / QA_PLAYERS_PER_TABLE)
    per_table = math.ceil(len(players) / max(tables, 1))
    story: list[Flowable] = [
        look.para(t("Q&amp;A sheet"), "h1"),
        look.para(
            t(
                "{correct} correct, {wrong} wrong, {none} no answer (counts as wrong), {ungraded} not graded "
                "yet (left out of the profiles). Elements: T = TARGET ({key} key target), C = CONTENT, "
                "Th = THINKING.",
                correct=CORRECT_MARK,
                wrong=WRONG_MARK,
                none=NO_ANSWER,
                ungraded=UNGRADED_MARK,
                key=KEY_MARK,
            ),
            "caption",
        ),
    ]
    for start in range(0, len(players), per_table):
        block = players[start : start + per_table]
        if tables > 1:  # a plain line: a heading kept with its page-long table would leave a page blank
            story.append(
                look.para(
                    t(
                        "<b>Players {first}–{last} of {count}</b>",
                        first=start + 1,
                        last=start + len(block),
                        count=len(players),
                    )
                )
            )
        story.append(_qa_sheet_table(qa_sheet[qa_sheet["player"].isin(block)], block, look))
    return story


def _qa_sheet_table(qa_sheet: pd.DataFrame, players: list[str], look: _Look) -> Table:
    columns = [_Column(t("Q"), 0.06), _Column(t("Question"), 0.2), _Column(t("Elements"), 0.12)]
    columns += [_Column(look.player(p), 0.62 / len(players), style="answer") for p in players]
    rows = []
    for _, answers in qa_sheet.groupby("qid", sort=False):
        first = answers.iloc[0]
        round_text = "" if pd.isna(first["round"]) else f"<br/><font color='#6E6E6E'>R{first['round']}</font>"
        rows.append(
            [
                markup(first["qid"]) + round_text,
                markup(first["question"])
                + "<br/><font color='#6E6E6E'>"
                + t("Answer: {answer}", answer=markup(first["reference"]))
                + "</font>",
                "<br/>".join(
                    f"{label} {markup(first[column].replace(';', ', '))}"
                    for label, column in (("T:", "targets"), ("C:", "contents"), ("Th:", "thinking"))
                    if first[column]
                )
                or "<font color='#6E6E6E'>" + t("untagged") + "</font>",
            ]
            + [_answer_cell(answer) for answer in answers.itertuples(index=False)]
        )
    return _table(look, columns, rows, _frame_width("landscape"), zebra=True)


def _answer_cell(answer) -> str:
    """√ or × and what the player said (the option for mcq answers); the no-answer mark alone for no answer.

    An answer graded correct keeps its √ even when it is empty (a ``correct`` given by hand wins).
    """
    if answer.ungraded:
        mark, colour = UNGRADED_MARK, charts.GREY
    elif answer.correct:
        mark, colour = CORRECT_MARK, charts.GREEN
    elif answer.answered:
        mark, colour = WRONG_MARK, charts.VERMILLION
    else:
        mark, colour = NO_ANSWER, charts.GREY
    text = (answer.option or answer.answer) if answer.answered else ""
    return f"<font color='#{colour.hexval()[2:]}' size='9'><b>{mark}</b></font> {markup(text)}".rstrip()


# -------------------------------------------------------------------------------- the document


class _FooterCanvas(Canvas):
    """Draws the footer (page n of N, title) on every page.

    N is unknown until the end, so each page draws a form XObject that :meth:`save` fills in; pages
    are still emitted one by one, which keeps the bookmarks pointing at the right pages.
    """

    _TOTAL_FORM = "page-total"

    def __init__(self, *args, footer_title: str, **kwargs):
        super().__init__(*args, **kwargs)
        self._footer_title = footer_title

    def showPage(self):
        self._draw_footer()
        super().showPage()

    def save(self):
        self.beginForm(self._TOTAL_FORM)
        self.setFont(REGULAR, FOOTER_SIZE)
        self.setFillColor(charts.GREY)
        self.drawString(0, 0, str(self.getPageNumber() - 1))
        self.endForm()
        super().save()

    def _draw_footer(self) -> None:
        page_width, y = self._pagesize[0], MARGIN - 20
        number = t("page {number} of ", number=self.getPageNumber())
        self.saveState()
        self.setFont(REGULAR, FOOTER_SIZE)
        self.setFillColor(charts.GREY)
        self.setStrokeColor(charts.GRID)
        self.line(MARGIN, MARGIN - 10, page_width - MARGIN, MARGIN - 10)
        self.drawRightString(
            page_width - MARGIN, y, charts.fit_text(self._footer_title, page_width - 2 * MARGIN - 80, FOOTER_SIZE)
        )
        self.drawString(MARGIN, y, number)
        self.translate(MARGIN + self.stringWidth(number, REGULAR, FOOTER_SIZE), y)
        self.doForm(self._TOTAL_FORM)
        self.restoreState()


class _ReportDocument(BaseDocTemplate):
    """A4 portrait pages, landscape ones on request; section headings become PDF bookmarks."""

    def __init__(self, path: Path, title: str):
        super().__init__(
            str(path),
            pagesize=PAGE,
            leftMargin=MARGIN,
            rightMargin=MARGIN,
            topMargin=MARGIN,
            bottomMargin=MARGIN,
            title=title,
            author="vtt",
            creator="vtt analysis.report",
            invariant=True,
            initialFontName=REGULAR,
        )
        self.addPageTemplates([self._template("portrait", PAGE), self._template("landscape", landscape(PAGE))])
        self._bookmarks = 0

    @staticmethod
    def _template(name: str, size: tuple[float, float]) -> PageTemplate:
        frame = Frame(
            MARGIN,
            MARGIN,
            size[0] - 2 * MARGIN,
            size[1] - 2 * MARGIN,
            id=name,
            leftPadding=0,
            rightPadding=0,
            topPadding=0,
            bottomPadding=0,
        )
        return PageTemplate(id=name, frames=[frame], pagesize=size)

    def afterFlowable(self, flowable: Flowable) -> None:
        if isinstance(flowable, Paragraph) and flowable.style.name in ("h1", "h2"):
            self._bookmarks += 1
            key = f"section-{self._bookmarks}"
            self.canv.bookmarkPage(key)
            self.canv.addOutlineEntry(flowable.getPlainText(), key, level=int(flowable.style.name[1]) - 1)


def _build_pdf(path: Path, story: list[Flowable], title: str) -> None:
    document = _ReportDocument(path, title)
    document.build(story, canvasmaker=partial(_FooterCanvas, footer_title=title))
