"""Every table of a session's reports as the frame written to its CSV (the PDFs render these frames)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ..cogme import profile_frequencies
from ..composition import Composition
from ..options import chosen_options, option_label
from ..taxonomy import TagSet

if TYPE_CHECKING:
    from ..cogme import Profiles
    from ..votes import VoteStats


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
    "jury_detection.csv",
    "jury_tests.csv",
    "jury_shares.csv",  # with more than the live jury (analysis.session_report.juries_compared)
)

JUDGE_CSVS = ("judge_agreement.csv", "judge_confusions.csv")

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

OPTION_SEPARATOR = " · "  # between an option's letter and its text: "B · Deogi"


def csv_tables(
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
        "element_frequencies.csv": profile_frequencies(profiles),
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
