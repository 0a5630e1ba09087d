"""One session's rows as the tables ``analysis`` reads (their columns: ``analysis/tables.py``).

What a player is scored on is :func:`questions_put`: a question shown while the player played its round, or one
the player answered; a question never shown (a session stopped early, or still running) counts for no one.  Of the
questions put, an unanswered or late one is wrong; an open answer with text that nobody graded yet is left out of
``answers`` and listed in ``ungraded``.  :func:`session_profiles` profiles players on the questions put to them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import pandas as pd
from sqlalchemy.orm import Session

from analysis.cogme import Profiles, profiles
from analysis.juries import JuryStats, ai_jury, jury_stats
from analysis.tables import ANSWER_COLUMNS, JURY_VOTE_COLUMNS, VOTE_COLUMNS

from ..banks import records_table
from ..banks.store import question_record
from ..models import (
    Answer,
    Juror,
    Jury,
    Player,
    Question,
    QuestionType,
    RoundAlias,
    SessionQuestion,
    SessionStatus,
    SheetEntry,
    Vote,
    VttSession,
)
from .session_rows import SessionRows, session_rows

FACET_COLUMNS = ("group", "expert", "age_band", "sex")  # analysis' JUROR_FACETS, from Juror columns
LIVE = Jury.LIVE.value


@dataclass(frozen=True)
class Coverage:
    """How much of a session's design was played: what its results are out of."""

    rounds: int  # designed
    last_round: int  # the last round begun (0: none)
    placed: int  # questions placed in the design
    shown: int  # of them, shown to the players
    finished: bool
    # a finished session's rounds cut short (begun, stopped before their vote opened): (round, shown, placed)
    cut_short: tuple[tuple[int, int, int], ...] = ()

    @property
    def cut_short_rounds(self) -> list[int]:
        return [number for number, _shown, _placed in self.cut_short]

    @property
    def stopped_early(self) -> bool:
        """Finished before every placed question was shown (the host's "Stop the session now")."""
        return self.finished and self.shown < self.placed

    @property
    def partial(self) -> bool:
        """Results out of fewer questions than the design placed: stopped early, or still running."""
        return self.shown < self.placed


def cut_short_text(coverage: Coverage, translate: Callable[..., str]) -> str:
    """What a finished session with a round cut short played: "round 3 cut short after 2 of 6 questions; rounds 4-5
    not played: 14 of 30 questions shown" ("" without a round cut short), for the report's cover and the results
    page alike.  ``translate(template, **values)`` fills ``{name}`` templates in the reader's language
    (:func:`analysis.words.t`: its words are the report's)."""
    if not coverage.cut_short:
        return ""
    parts = [
        translate(
            "round {round} cut short after {shown} of {placed} questions", round=number, shown=seen, placed=placed
        )
        for number, seen, placed in coverage.cut_short
    ]
    first, last = coverage.last_round + 1, coverage.rounds
    if first == last:
        parts.append(translate("round {round} not played", round=first))
    elif first < last:
        parts.append(translate("rounds {first}-{last} not played", first=first, last=last))
    shown = translate("{shown} of {placed} questions shown", shown=coverage.shown, placed=coverage.placed)
    return "; ".join(parts) + ": " + shown


@dataclass(frozen=True)
class SessionTables:
    """The tables of one session, as ``analysis`` reads them."""

    coverage: Coverage
    questions: pd.DataFrame  # the questions shown, in (round, position) order; round: the session round they were in
    put: pd.DataFrame  # player_id, player, qid, round: every question put to every player (questions_put)
    answers: pd.DataFrame  # player, qid, answer, correct, kind, round: the questions put to players who answered any
    ungraded: pd.DataFrame  # player, qid, round, answer: open answers with text that nobody graded yet
    players: pd.DataFrame  # name, kind: the roster in id order
    votes: pd.DataFrame  # round, juror, vote (a name; None: abstained), slot, confidence and the facets present
    sheet: pd.DataFrame  # juror, qid, player, looks_like_ai, round, human_likeness: the judgment sheets' lines
    # every jury's votes (live, displaced, ai:<model>; none of a juror the host removed): round, juror, vote,
    # slot, confidence, jury (the analysis label), model (an AI juror's, else None)
    jury_votes: pd.DataFrame
    aliases: pd.DataFrame  # round, player, alias: who played each round under which alias

    @property
    def juries(self) -> list[str]:
        """The jury labels with votes in this session (live first), e.g. ``["live", "displaced", "ai:gpt-x"]``."""
        return list(dict.fromkeys(self.jury_votes["jury"])) if len(self.jury_votes) else []

    @property
    def compares_juries(self) -> bool:
        """Whether some jury other than the live one voted: the reports then compare the juries."""
        return any(jury != LIVE for jury in self.juries)


def session_tables(db: Session, vtt_session: VttSession) -> SessionTables:
    return tables_from_rows(vtt_session, session_rows(db, vtt_session.id))


def tables_from_rows(vtt_session: VttSession, rows: SessionRows) -> SessionTables:
    placed, players = rows.placed, rows.players
    # the live jury's alone for now: a displaced or AI jury's votes and sheet lines leave the live figures as they are
    jurors = {j.id: j for j in rows.jurors if j.jury is Jury.LIVE}
    names = {p.id: p.name for p in players}
    by_question = {sq.id: sq for sq in placed}
    put = questions_put(placed, players, rows.aliases, rows.answers)
    asked = set(put["qid"])
    shown = [sq for sq in placed if sq.question.qid in asked]
    answers, ungraded = _answer_tables(put, players, by_question, rows.answers)
    coverage = _coverage(vtt_session, rows, shown)
    return SessionTables(
        coverage=coverage,
        questions=records_table([replace(question_record(sq.question), round=sq.round) for sq in shown]),
        put=put,
        answers=answers,
        ungraded=ungraded,
        players=pd.DataFrame(
            {"name": [p.name for p in players], "kind": [p.kind.value for p in players]}, columns=["name", "kind"]
        ),
        votes=_votes([v for v in rows.votes if v.juror_id in jurors], jurors, names),
        sheet=_sheet([e for e in rows.entries if e.juror_id in jurors], jurors, names, by_question),
        jury_votes=_jury_votes(rows, names, set(coverage.cut_short_rounds)),
        aliases=pd.DataFrame(
            {
                "round": [a.round for a in rows.aliases],
                "player": [names[a.player_id] for a in rows.aliases],
                "alias": [a.alias for a in rows.aliases],
            },
            columns=["round", "player", "alias"],
        ).astype({"round": int}),
    )


def jury_label(juror: Juror) -> str:
    """The juror's jury as analysis labels it: ``live``, ``displaced`` or ``ai:<model>`` (``ai:?`` without a model)."""
    if juror.jury is Jury.AI:
        return ai_jury(juror.model or "?")
    return juror.jury.value


def _jury_votes(rows: SessionRows, names: dict[int, str], cut_short: set[int]) -> pd.DataFrame:
    """Every jury's votes (a removed juror's are left out, as the live tally leaves them), in (round, juror, slot)
    order; live jurors' facets are not carried: the juries are compared as wholes.  ``cut_short``: whether the
    vote's round was cut short in the live session (a study reads it to pool whole rounds only)."""
    jurors = {j.id: j for j in rows.jurors if j.removed_at is None}
    records = [
        {
            "round": vote.round,
            "juror": jurors[vote.juror_id].label,
            "vote": names[vote.player_id] if vote.player_id is not None else None,
            "slot": vote.slot,
            "confidence": float(vote.confidence) if vote.confidence is not None else float("nan"),
            "jury": jury_label(jurors[vote.juror_id]),
            "model": jurors[vote.juror_id].model if jurors[vote.juror_id].jury is Jury.AI else None,
            "cut_short": vote.round in cut_short,
        }
        for vote in rows.votes
    ]
    columns = [*JURY_VOTE_COLUMNS, "model", "cut_short"]
    table = pd.DataFrame({column: pd.Series([r[column] for r in records], dtype=object) for column in columns})
    return table.astype({"round": int, "slot": int, "confidence": float, "cut_short": bool})


@dataclass(frozen=True)
class LaterJuries:
    """Who judged a finished session after the room: displaced jurors (and how many of them voted) and AI jurors
    (and their models); jurors the host removed are left out."""

    displaced: int
    displaced_voters: int
    ai: int
    models: tuple[str, ...]


def later_juries(vtt_session: VttSession, jury_votes: pd.DataFrame) -> LaterJuries:
    """The displaced and AI jurors of ``vtt_session`` (``jury_votes``: :attr:`SessionTables.jury_votes`)."""
    kept = [juror for juror in vtt_session.jurors if juror.removed_at is None]
    displaced = {juror.label for juror in kept if juror.jury is Jury.DISPLACED}
    ai = [juror for juror in kept if juror.jury is Jury.AI]
    voted = set(jury_votes.loc[jury_votes["vote"].notna(), "juror"]) if len(jury_votes) else set()
    return LaterJuries(
        displaced=len(displaced),
        displaced_voters=len(displaced & voted),
        ai=len(ai),
        models=tuple(sorted({juror.model or "?" for juror in ai})),
    )


def session_jury_stats(tables: SessionTables) -> JuryStats | None:
    """The juries compared (:func:`analysis.juries.jury_stats` on every jury's votes, under the rounds' aliases);
    None when only the live jury voted (or nobody did): there is nothing to compare."""
    if not tables.compares_juries:
        return None
    votes = tables.jury_votes
    aliases = tables.aliases if set(votes["round"]) <= set(tables.aliases["round"]) else None
    return jury_stats(votes, tables.players, aliases, tables.coverage.cut_short_rounds)


def _coverage(vtt_session: VttSession, rows: SessionRows, shown: list[SessionQuestion]) -> Coverage:
    finished = vtt_session.status is SessionStatus.FINISHED
    begun = {a.round for a in rows.aliases}
    never_voted = {r.number for r in vtt_session.round_states if r.vote_opened_at is None}
    cut_short = tuple(
        (
            number,
            sum(sq.round == number for sq in shown),
            sum(sq.round == number for sq in rows.placed),
        )
        for number in sorted(begun & never_voted)
        if finished
    )
    return Coverage(
        rounds=vtt_session.rounds,
        last_round=max(begun, default=0),
        placed=len(rows.placed),
        shown=len(shown),
        finished=finished,
        cut_short=cut_short,
    )


def questions_put(
    placed: list[SessionQuestion], players: list[Player], aliases: list[RoundAlias], answer_rows: list[Answer]
) -> pd.DataFrame:
    """``player_id, player, qid, round``: the questions put to each player, in players' then question order.

    The one rule of what a player is scored on: a question shown (``shown_at``) while the player played
    its round (held one of the round's aliases: a round's players are fixed when it begins), or one the
    player answered.  A question never shown counts for no one; "no answer counts as wrong" holds for the
    questions put.
    """
    played = {(a.round, a.player_id) for a in aliases}
    answered = {(a.player_id, a.session_question_id) for a in answer_rows}
    rows = [
        {"player_id": p.id, "player": p.name, "qid": sq.question.qid, "round": sq.round}
        for p in players
        for sq in placed
        if (sq.shown_at is not None and (sq.round, p.id) in played) or (p.id, sq.id) in answered
    ]
    return pd.DataFrame(rows, columns=["player_id", "player", "qid", "round"])


def _answer_tables(
    put: pd.DataFrame, players: list[Player], by_question: dict[int, SessionQuestion], answer_rows: list[Answer]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``answers`` and ``ungraded``: a row per question put to each player who answered anything (a player with
    no answer at all took no part and has no profile)."""
    kinds = {p.id: p.kind.value for p in players}
    given = {
        (a.player_id, by_question[a.session_question_id].question.qid): a
        for a in answer_rows
        if a.session_question_id in by_question
    }
    took_part = {a.player_id for a in answer_rows}
    rows, ungraded = [], []
    for item in put.itertuples(index=False):
        if item.player_id not in took_part:
            continue
        row = {
            "player": item.player,
            "qid": item.qid,
            "answer": "",
            "correct": False,
            "kind": kinds[item.player_id],
            "round": item.round,
        }
        answer = given.get((item.player_id, item.qid))
        if answer is not None and not answer.late:
            question = by_question[answer.session_question_id].question
            correct = answer_correct(question, answer)
            if correct is None:
                ungraded.append(
                    {
                        "player": item.player,
                        "qid": item.qid,
                        "round": item.round,
                        "answer": player_answer_text(question, answer),
                    }
                )
                continue
            row["answer"], row["correct"] = player_answer_text(question, answer), correct
        rows.append(row)
    answers = pd.DataFrame(rows, columns=[*ANSWER_COLUMNS, "round"]).astype({"correct": bool})
    return answers, pd.DataFrame(ungraded, columns=["player", "qid", "round", "answer"])


def player_answer_text(question: Question, answer: Answer) -> str:
    """What the player answered: the chosen option's text for a multiple-choice question, else the text given."""
    if (
        question.type is QuestionType.MCQ
        and answer.choice_index is not None
        and answer.choice_index < len(question.choices)
    ):
        return str(question.choices[answer.choice_index])
    return answer.text


def answer_correct(question: Question, answer: Answer) -> bool | None:
    """Whether an answer counts as right: a multiple-choice answer against the key (graded automatically), else
    its final mark (an open answer, or one to a question whose key is withheld); a late answer, or an empty one
    without a mark, is no answer: wrong; None: an open answer with text that nobody graded yet."""
    if answer.late:
        return False
    if question.type is QuestionType.MCQ and question.answer_index is not None:
        return answer.choice_index is not None and answer.choice_index == question.answer_index
    if answer.grade is not None:
        return bool(answer.grade.correct)
    return None if player_answer_text(question, answer).strip() else False


def _votes(votes: list[Vote], jurors: dict[int, Juror], names: dict[int, str]) -> pd.DataFrame:
    rows = []
    for vote in votes:
        juror = jurors[vote.juror_id]
        rows.append(
            {
                "round": vote.round,
                "juror": juror.label,
                "vote": names[vote.player_id] if vote.player_id is not None else None,
                "slot": vote.slot,
                "confidence": float(vote.confidence) if vote.confidence is not None else float("nan"),
                "group": juror.juror_group,
                "expert": _expert(juror.expert),
                "age_band": juror.age_band,
                "sex": juror.sex,
            }
        )
    # object columns keep None (pandas 3 would read a column of names as str, None as NaN)
    columns = [*VOTE_COLUMNS, *FACET_COLUMNS]
    table = pd.DataFrame({column: pd.Series([row[column] for row in rows], dtype=object) for column in columns})
    table = table.astype({"round": int, "slot": int, "confidence": float})
    # A facet no voting juror carries is left out (the reports would show an empty block).
    return table.drop(columns=[facet for facet in FACET_COLUMNS if table[facet].isna().all()])


def _expert(value: bool | None) -> str | None:
    return None if value is None else ("expert" if value else "non-expert")


def _sheet(
    entries: list[SheetEntry], jurors: dict[int, Juror], names: dict[int, str], by_question: dict[int, SessionQuestion]
) -> pd.DataFrame:
    rows = [
        {
            "juror": jurors[e.juror_id].label,
            "qid": by_question[e.session_question_id].question.qid,
            "player": names[e.player_id],
            "looks_like_ai": bool(e.looks_like_ai),
            "round": by_question[e.session_question_id].round,
            "human_likeness": e.human_likeness,
        }
        for e in entries
    ]
    return pd.DataFrame(rows, columns=["juror", "qid", "player", "looks_like_ai", "round", "human_likeness"])


def session_profiles(tables: SessionTables, method: str) -> Profiles:
    """CogME profiles of the players in ``tables.answers``, each on the questions put to them.

    A player's questions are those put to the player less the open answers not graded yet (left
    out of accuracy).  Players sharing one set of questions are profiled together by
    ``analysis.cogme.profiles``; with a single set (everyone put every question, nothing
    ungraded) this is exactly ``profiles(tables.questions, tables.answers, method)``.  A player
    with no graded question left has no profile.
    """
    answers = tables.answers
    order = list(dict.fromkeys(answers["player"]))
    if not order:
        return profiles(tables.questions, answers, method)
    left_out = set(zip(tables.ungraded["player"], tables.ungraded["qid"]))
    put = tables.put[tables.put["player"].isin(order)]
    question_sets: dict[tuple[str, ...], list[str]] = {}
    for player in order:
        qids = set(put.loc[put["player"] == player, "qid"])
        own = tuple(q for q in tables.questions["qid"] if q in qids and (player, q) not in left_out)
        if own:
            question_sets.setdefault(own, []).append(player)
    parts = [
        profiles(
            tables.questions[tables.questions["qid"].isin(qids)],
            answers[answers["player"].isin(group) & answers["qid"].isin(qids)],
            method,
        )
        for qids, group in question_sets.items()
    ]
    if len(parts) == 1:
        return parts[0]
    rank = {player: position for position, player in enumerate(order)}

    def in_order(table: pd.DataFrame) -> pd.DataFrame:
        return table.sort_values("player", key=lambda names: names.map(rank), kind="stable").reset_index(drop=True)

    return Profiles(
        method,
        in_order(pd.concat([p.elements for p in parts], ignore_index=True)),
        in_order(pd.concat([p.players for p in parts], ignore_index=True)),
    )
