"""What every figure of a session must be: a reference model in plain Python, apart from the product.

tests/test_session_model.py drives a served session over the protocol and tells this model what each person did
and whether the product took it; the model says, from that alone, what the exports, the tallies, the profiles'
counts, the jury comparison and the report cover's counts must be.  It imports nothing of vtt's engine, results or
analysis: its rules are the study's, written out here once (docs/analysis.md, docs/juries.md):

- a vote counts in its round for its jury (``live``, ``displaced``, ``ai:<model>``); one per juror, round and slot,
  the last one cast; an abstention (no alias) is a vote that names no one;
- a juror the host removed counts nowhere: none of their votes or sheet lines, in any round, in any reader;
- a round's stored tally exists once its vote has closed, and always counts the votes that count now;
- detection = the share of cast votes (not abstentions) that name the AI player, in per cent;
- a player is scored on the questions shown in the rounds they played, an open answer nobody graded left out; a
  player who answered nothing has no profile;
- the cover counts the live jury (those not removed), its voters (a juror with a counted vote naming someone) and
  the removed, and names the displaced and AI jurors beside them;
- a round whose vote never opened in the live session is offered to no other jury.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

LIVE, DISPLACED = "live", "displaced"


def ai_jury(model: str) -> str:
    return f"ai:{model}"


@dataclass(frozen=True)
class PlacedQuestion:
    id: int  # the session question's id (what the protocol names)
    qid: str
    round: int
    position: int
    type: str  # "mcq" or "open"
    answer_index: int | None


@dataclass
class Ballot:
    jury: str
    alias: str | None  # None: an abstention
    confidence: int | None


@dataclass
class SessionModel:
    """The session as the model knows it: the design, then every accepted action in order."""

    players: dict[int, str]  # id -> name
    ai_players: set[int]
    placed: list[PlacedQuestion]
    rounds: int
    live_jurors: list[str]
    round: int = 0
    position: int = 0
    finished: bool = False
    shown: set[int] = field(default_factory=set)  # question ids
    answering: int | None = None  # the question whose answering is open
    revealed: set[int] = field(default_factory=set)
    vote_open: int | None = None  # the round whose vote is open
    vote_opened: set[int] = field(default_factory=set)
    vote_closed: set[int] = field(default_factory=set)
    deals: dict[int, dict[str, int]] = field(default_factory=dict)  # round -> alias -> player id (the product deals)
    answers: dict[tuple[int, int], tuple[int | None, str | None]] = field(default_factory=dict)  # (q, player)
    votes: dict[tuple[int, str, int], Ballot] = field(default_factory=dict)  # (round, juror, slot)
    sheet: dict[tuple[str, int, int], bool] = field(default_factory=dict)  # (juror, question, player) -> looks AI
    removed: set[str] = field(default_factory=set)
    other_jurors: dict[str, str] = field(default_factory=dict)  # displaced / AI juror label -> jury

    # --- the flow ---------------------------------------------------------------------------------------------

    def question_at(self, number: int, position: int) -> PlacedQuestion | None:
        return next((q for q in self.placed if (q.round, q.position) == (number, position)), None)

    @property
    def current(self) -> PlacedQuestion | None:
        return self.question_at(self.round, self.position)

    def moved(self, move: str) -> None:
        """The host's move ``move`` was accepted."""
        if move == "start_round":
            self.round, self.position = self.round + 1, 0
        elif move == "show_question":
            self.position += 1
            self.shown.add(self.current.id)
        elif move == "open_answering":
            self.answering = self.current.id
        elif move == "close_answering":
            self.answering = None
        elif move == "reveal":
            self.revealed.add(self.current.id)
        elif move == "open_vote":
            self.vote_open = self.round
            self.vote_opened.add(self.round)
        elif move == "close_vote":
            self.vote_open = None
            self.vote_closed.add(self.round)
        elif move == "finish":
            self.finished = True
            self.answering = self.vote_open = None

    # --- what the people may do, and what they did --------------------------------------------------------------

    def takes_answer(self, question: int) -> bool:
        return not self.finished and self.answering == question

    def answered(self, question: int, player: int, choice: int | None, text: str | None) -> None:
        self.answers[(question, player)] = (choice, text)

    def takes_vote(self, juror: str, number: int) -> bool:
        return juror not in self.removed and not self.finished and self.vote_open == number

    def voted(self, number: int, juror: str, alias: str | None, confidence: int | None, jury: str = LIVE) -> None:
        self.votes[(number, juror, 1)] = Ballot(jury, alias, confidence)

    def takes_sheet(self, juror: str, question: int) -> bool:
        item = next(q for q in self.placed if q.id == question)
        return (
            juror not in self.removed
            and not self.finished
            and item.round == self.round
            and question in self.revealed
            and self.round not in self.vote_closed
        )

    def marked(self, juror: str, question: int, alias: str, looks_like_ai: bool) -> None:
        self.sheet[(juror, question, self.deals[self.round][alias])] = looks_like_ai

    def takes_removal(self, juror: str) -> bool:
        return juror not in self.removed

    # --- the figures -------------------------------------------------------------------------------------------

    def offered_rounds(self) -> list[int]:
        """The rounds a displaced or AI jury is given by default: those whose vote opened in the live session."""
        return sorted(self.vote_opened)

    def player_of(self, number: int, alias: str | None) -> int | None:
        return None if alias is None else self.deals[number][alias]

    def counted_votes(self) -> dict[tuple[int, str, int], Ballot]:
        """Every vote that counts: none of a removed juror's, none in a round not offered to the vote's jury."""
        return {
            key: ballot
            for key, ballot in self.votes.items()
            if key[1] not in self.removed and (ballot.jury == LIVE or key[0] in self.offered_rounds())
        }

    def vote_rows(self) -> set[tuple]:
        """votes.csv: (round, juror, jury, slot, alias, player name or None)."""
        return {
            (
                number,
                juror,
                _jury_column(ballot.jury),
                slot,
                ballot.alias,
                self._name(self.player_of(number, ballot.alias)),
            )
            for (number, juror, slot), ballot in self.counted_votes().items()
        }

    def live_vote_rows(self) -> set[tuple]:
        """The report's live votes: (round, juror, player name or None)."""
        return {
            (number, juror, self._name(self.player_of(number, ballot.alias)))
            for (number, juror, _slot), ballot in self.counted_votes().items()
            if ballot.jury == LIVE
        }

    def tally(self, number: int) -> dict | None:
        """A round's stored tally's counts, once its vote closed: cast, abstentions, voters, votes per alias,
        detection (%)."""
        if number not in self.vote_closed:
            return None
        return self._count(number, LIVE)

    def _count(self, number: int, jury: str) -> dict:
        ballots = [(juror, b) for (n, juror, _s), b in self.counted_votes().items() if n == number and b.jury == jury]
        named = [self.player_of(number, b.alias) for _j, b in ballots if b.alias is not None]
        per_alias = Counter(b.alias for _j, b in ballots if b.alias is not None)
        ai_votes = sum(player in self.ai_players for player in named)
        return {
            "cast": len(named),
            "abstentions": len(ballots) - len(named),
            "voters": len({j for j, b in ballots if b.alias is not None}),
            "per_alias": {alias: per_alias.get(alias, 0) for alias in sorted(self.deals[number])},
            "ai_votes": ai_votes,
            "detection_pct": 100 * ai_votes / len(named) if named else None,
        }

    def juror_rows(self) -> set[tuple]:
        """jurors.csv: (juror, jury, removed)."""
        live = {(label, LIVE, label in self.removed) for label in self.live_jurors}
        return live | {(label, _jury_column(jury), False) for label, jury in self.other_jurors.items()}

    def sheet_rows(self) -> set[tuple]:
        """The live jury's sheet lines that count: (juror, qid, player name, looks like AI)."""
        qid = {q.id: q.qid for q in self.placed}
        return {
            (juror, qid[question], self.players[player], looks)
            for (juror, question, player), looks in self.sheet.items()
            if juror not in self.removed
        }

    def alias_rows(self) -> set[tuple]:
        return {(n, alias, self.players[p]) for n, deal in self.deals.items() for alias, p in deal.items()}

    def profile_counts(self) -> dict[str, tuple[int, int]]:
        """player -> (questions scored, correct): the questions shown in the rounds they played, an open answer with
        text (nobody grades here) left out; a player who answered nothing has no profile."""
        took_part = {player for (_q, player) in self.answers}
        counts = {}
        for player, name in self.players.items():
            if player not in took_part:
                continue
            scored = correct = 0
            for item in self.placed:
                if item.id not in self.shown or player not in self.deals.get(item.round, {}).values():
                    continue
                choice, text = self.answers.get((item.id, player), (None, None))
                if item.type == "open" and text and text.strip():
                    continue  # ungraded: out of accuracy
                scored += 1
                correct += item.type == "mcq" and choice is not None and choice == item.answer_index
            counts[name] = (scored, correct)
        return counts

    def juries(self) -> list[str]:
        return sorted({b.jury for b in self.counted_votes().values()}, key=lambda j: (j != LIVE, j != DISPLACED, j))

    def comparison(self) -> dict | None:
        """The jury comparison: per (jury, round) (cast votes, abstentions, AI votes), every jury in every round with
        a vote; pooled per jury (cast, AI votes).  None when no jury but the live one voted."""
        juries = self.juries()
        if not any(jury != LIVE for jury in juries):
            return None
        numbers = sorted({n for (n, _j, _s) in self.counted_votes()})
        rounds = {}
        for jury in juries:
            for number in numbers:
                counted = self._count(number, jury)
                rounds[(jury, number)] = (counted["cast"], counted["abstentions"], counted["ai_votes"])
        pooled = {
            jury: (
                sum(rounds[(jury, n)][0] for n in numbers),
                sum(rounds[(jury, n)][2] for n in numbers),
            )
            for jury in juries
        }
        return {"rounds": rounds, "pooled": pooled}

    def cover_counts(self) -> dict[str, int]:
        """The cover's juror counts: the live jury, its voters, the removed; the displaced and AI jurors beside."""
        live_voters = {juror for (_n, juror, _s), b in self.counted_votes().items() if b.jury == LIVE and b.alias}
        return {
            "jurors": len([j for j in self.live_jurors if j not in self.removed]),
            "voters": len(live_voters),
            "removed": len(self.removed),
            "displaced": sum(jury == DISPLACED for jury in self.other_jurors.values()),
            "ai": sum(jury.startswith("ai:") for jury in self.other_jurors.values()),
        }

    def cut_short(self) -> tuple[int, int, int] | None:
        """(round, questions shown in it, questions it had) of the round the session stopped in before its vote
        opened: a round begun is cut short even before its first question ("cut short after 0 of 2")."""
        number = self.round
        if not self.finished or number == 0 or number in self.vote_opened:
            return None
        had = [q for q in self.placed if q.round == number]
        shown = sum(q.id in self.shown for q in had)
        return number, shown, len(had)

    def questions_shown(self) -> tuple[int, int]:
        """(shown, placed)."""
        return len(self.shown), len(self.placed)

    def _name(self, player: int | None) -> str | None:
        return None if player is None else self.players[player]


def _jury_column(jury: str) -> str:
    """The ``jury`` column of the exports: ``ai`` for every AI jury (its model in a column of its own)."""
    return "ai" if jury.startswith("ai:") else jury
