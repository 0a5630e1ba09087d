"""The export's wide table (``CODE_wide.csv``, oTree style): one row per participant, players then jurors, with
their own fields, then round by round their aliases, answers and marks, or their votes."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from ..models import Juror, Player, SessionQuestion, Vote
from .export_specs import ExportSource
from .export_values import export_timestamp, whole_numbers_exact
from .tables import SessionTables, player_answer_text

PLAYER_FIELDS: dict[str, Callable[[Player], object]] = {
    "role": lambda p: "player",
    "participant_id": lambda p: p.id,
    "label": lambda p: p.name,
    "kind": lambda p: p.kind.value,
    "age": lambda p: p.age,
    "stage": lambda p: p.stage,
}
JUROR_FIELDS: dict[str, Callable[[Juror], object]] = {
    "role": lambda j: "juror",
    "participant_id": lambda j: j.id,
    "label": lambda j: j.label,
    "jury": lambda j: j.jury.value,
    "model": lambda j: j.model,
    "group": lambda j: j.juror_group,
    "expert": lambda j: j.expert,
    "age_band": lambda j: j.age_band,
    "sex": lambda j: j.sex,
    "joined_at": lambda j: export_timestamp(j.joined_at),
}


def wide_table(source: ExportSource, tables: SessionTables) -> pd.DataFrame:
    """One row per participant; a cell a participant has nothing for is blank (NaN)."""
    session, rows = source.session, source.rows
    rounds = [r.number for r in session.round_states]
    questions_of = {n: [sq for sq in rows.placed if sq.round == n] for n in rounds}
    slots = max([session.ai_votes_per_juror, *(v.slot for v in rows.votes)])
    players = _player_rows(source, tables, rounds, questions_of)
    jurors = _juror_rows(source, rounds)
    fields = list(dict.fromkeys([*PLAYER_FIELDS, *JUROR_FIELDS]))
    columns = fields + [c for n in rounds for c in _round_columns(n, questions_of[n], slots)]
    return whole_numbers_exact(pd.DataFrame(players + jurors, columns=columns, dtype=object))


def _round_columns(n: int, questions: list[SessionQuestion], slots: int) -> list[str]:
    columns = [f"r{n}_alias"]
    for sq in questions:
        columns += [f"r{n}_{sq.question.qid}", f"r{n}_{sq.question.qid}_correct"]
    for slot in range(1, slots + 1):
        columns += [f"r{n}_vote{slot}_alias", f"r{n}_vote{slot}_player", f"r{n}_vote{slot}_cast_at"]
    return columns + [f"r{n}_confidence", f"r{n}_reason"]


def _player_rows(
    source: ExportSource, tables: SessionTables, rounds: list[int], questions_of: dict[int, list[SessionQuestion]]
) -> list[dict]:
    """Each player's alias per round, answer per question and whether it counts as right."""
    alias_of = {(a.round, a.player_id): a.alias for a in source.rows.aliases}
    given = {(a.player_id, a.session_question_id): a for a in source.rows.answers}
    graded = {(row.player, row.qid): row.correct for row in tables.answers.itertuples(index=False)}
    put = set(zip(tables.put["player"], tables.put["qid"]))
    rows = []
    for p in source.rows.players:
        row = {name: field(p) for name, field in PLAYER_FIELDS.items()}
        for n in rounds:
            row[f"r{n}_alias"] = alias_of.get((n, p.id))
            for sq in questions_of[n]:
                qid = sq.question.qid
                answer = given.get((p.id, sq.id))
                if answer is not None:
                    row[f"r{n}_{qid}"] = player_answer_text(sq.question, answer)
                if (p.name, qid) in put:
                    row[f"r{n}_{qid}_correct"] = graded.get((p.name, qid))  # blank: ungraded, or no part taken
        rows.append(row)
    return rows


def _juror_rows(source: ExportSource, rounds: list[int]) -> list[dict]:
    """Each juror's votes per round and slot, with the round's confidence and reason."""
    by_juror_round: dict[tuple[int, int], dict[int, Vote]] = {}
    for vote in source.rows.votes:
        by_juror_round.setdefault((vote.juror_id, vote.round), {})[vote.slot] = vote
    rows = []
    for j in source.rows.jurors:
        row = {name: field(j) for name, field in JUROR_FIELDS.items()}
        for n in rounds:
            cast = by_juror_round.get((j.id, n), {})
            for slot, vote in cast.items():
                row[f"r{n}_vote{slot}_alias"] = vote.alias
                row[f"r{n}_vote{slot}_player"] = source.player_name(vote.player_id)
                row[f"r{n}_vote{slot}_cast_at"] = export_timestamp(vote.cast_at)
            if cast:
                first = cast[min(cast)]
                row[f"r{n}_confidence"] = next(
                    (v.confidence for _, v in sorted(cast.items()) if v.confidence is not None), None
                )
                row[f"r{n}_reason"] = first.reason
        rows.append(row)
    return rows
