"""Random sessions through the engine (hypothesis stateful): every role acts at random, the clock runs.

Each step sends one action (a host move, a player's answer, a juror's sheet or vote, a guest's
join, or a clock tick) through ``vtt.engine.rules.decide`` and checks the invariants: versions
count accepted outcomes, a refusal changes nothing (but the clock's own outcome), closed phases
take no answer or vote, votes are one per juror and slot and never name a player twice, aliases
are permutations over the round's players, nothing sent to the jury or the stage names a player,
and the flow moves only along its order.
"""

from __future__ import annotations

import pickle
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from tests.support.engine import JURORS, PLAYER_IDS, T0, assert_blind, assert_identities_payload, make_state
from vtt.engine import audiences
from vtt.engine.actions import SYSTEM, Action, Actor, Refusal
from vtt.engine.flow import ALIASES
from vtt.engine.rules import decide
from vtt.engine.state import LogEvent, SaveAnswer, SaveVote, SetPhase
from vtt.models import Phase, PlayerKind, RevealPolicy
from vtt.persistence.tally import round_tally
from vtt.protocol.vocabulary import HOST_ACTIONS, MAX_TEXT

HOST = Actor("host")
UNKNOWN_PLAYER = 4242
QUESTION_IDS = (11, 12, 21, 22)

# The moves of the flow: from a phase to the phases that may follow it.
NEXT = {
    Phase.DRAFT: {Phase.LOBBY},
    Phase.LOBBY: {Phase.ROUND},
    Phase.ROUND: {Phase.CLIP, Phase.VOTING},
    Phase.CLIP: {Phase.CLIP, Phase.ANSWERING},  # play_clip keeps the phase (its deadline: the clip's end)
    Phase.ANSWERING: {Phase.ANSWERING, Phase.ANSWERS_CLOSED},  # extend keeps the phase
    Phase.ANSWERS_CLOSED: {Phase.JUDGING},
    Phase.JUDGING: {Phase.CLIP, Phase.VOTING},
    Phase.VOTING: {Phase.VOTING, Phase.VOTE_CLOSED},
    Phase.VOTE_CLOSED: {Phase.TALLY, Phase.ROUND},
    Phase.TALLY: {Phase.IDENTITIES, Phase.ROUND},
    Phase.IDENTITIES: {Phase.ROUND},
    Phase.FINISHED: set(),
}
QUESTION_PHASES = (Phase.CLIP, Phase.ANSWERING, Phase.ANSWERS_CLOSED, Phase.JUDGING)
CLOSED_VOTE_PHASES = (Phase.VOTE_CLOSED, Phase.TALLY, Phase.IDENTITIES)

texts = st.one_of(st.text(max_size=12), st.sampled_from(["", "   ", "x" * (MAX_TEXT + 1), "As an AI language model"]))
ALIAS_CHOICES = st.sampled_from(["A", "B", "C", "D", "Z", None])
SANE = st.sampled_from([True, True, True, False])  # mostly well-formed (hypothesis leans to the first)
ADVANCE = st.integers(0, 4)  # seconds the clock moves before an action: deadlines run out in between
seconds = st.one_of(st.none(), st.integers(1, 60), st.sampled_from([0, -5, 99999, True]))


def copy_of(state):
    """A deep copy (pickle is several times quicker than copy.deepcopy here)."""
    return pickle.loads(pickle.dumps(state, pickle.HIGHEST_PROTOCOL))


def optional(key: str, values: st.SearchStrategy) -> st.SearchStrategy:
    """``{}`` or ``{key: value}``: an argument left out or given."""
    return st.one_of(st.just({}), values.map(lambda value: {key: value}))


HOST_ARGS: dict[str, st.SearchStrategy] = {
    "set_participants": st.fixed_dictionaries(
        {
            "round": st.integers(0, 3),
            "players": st.one_of(st.none(), st.lists(st.sampled_from(PLAYER_IDS + (UNKNOWN_PLAYER,)), max_size=4)),
        }
    ),
    "open_answering": optional("seconds", seconds),
    "play_clip": optional(
        "duration", st.one_of(st.floats(-1, 4000, allow_nan=False), st.integers(-1, 5), st.just("8"))
    ),
    "extend": optional("seconds", seconds),
    "open_vote": optional("seconds", seconds),
    "edit_answer": st.one_of(
        st.fixed_dictionaries({"player": st.sampled_from(PLAYER_IDS), "text": texts}),
        st.fixed_dictionaries({"player": st.sampled_from(PLAYER_IDS), "redact": st.booleans()}),
    ),
    "finish": optional("force", st.booleans()),
    "set_open_join": st.fixed_dictionaries({"open": st.one_of(st.booleans(), st.just("yes"))}),
    "enter_answer": st.one_of(
        st.fixed_dictionaries({"player": st.sampled_from(PLAYER_IDS), "choice": st.integers(-1, 6)}),
        st.fixed_dictionaries({"player": st.sampled_from(PLAYER_IDS), "text": texts}),
    ),
}
assert set(HOST_ARGS) <= set(HOST_ACTIONS)


class EngineMachine(RuleBasedStateMachine):
    @initialize(
        seed=st.integers(0, 2**32),
        policy=st.sampled_from(list(RevealPolicy)),
        slots=st.integers(1, 2),
        open_join=st.booleans(),
        answer_seconds=st.sampled_from([None, 5, 30]),
        vote_seconds=st.sampled_from([None, 10, 60]),
    )
    def start(self, seed, policy, slots, open_join, answer_seconds, vote_seconds):
        self.state = make_state(
            seed=seed,
            reveal_policy=policy,
            ai_votes_per_juror=slots,
            open_join=open_join,
            answer_seconds=answer_seconds,
            vote_seconds=vote_seconds,
        )
        self.now = T0
        self.accepted = 0  # outcomes so far: the state_version must equal it
        self.dealt: dict[int, dict[int, str]] = {}  # round -> aliases, as first dealt
        self.named: dict[tuple[int, int], dict[int, int | None]] = {}  # (round, juror) -> slot -> player

    # --- one action, checked ---------------------------------------------------------------

    def act(self, actor: Actor, name: str, args: dict[str, Any], advance: int) -> None:
        self.now += timedelta(seconds=advance)
        before = copy_of(self.state)
        try:
            outcomes = decide(self.state, Action(actor, name, args), self.now, round_tally)
            refused = None
        except Refusal as refusal:
            outcomes, refused = refusal.before, refusal
        state = self.state
        clock = outcomes if refused or name == "tick" else outcomes[:-1]
        assert len(clock) <= 1
        self.accepted += len(outcomes)
        assert state.state_version == before.state_version + len(outcomes) == self.accepted
        assert [o.reply["state_version"] for o in outcomes] == list(
            range(before.state_version + 1, state.state_version + 1)
        )

        if refused:
            assert refused.code and refused.message
            # nothing changed but what the clock did: the same clock alone gives the same state
            replay = copy_of(before)
            decide(replay, Action(SYSTEM, "tick"), self.now, round_tally)
            assert replay == state, f"{actor.label} {name} {args} refused ({refused.code}) but changed the state"
        elif name != "tick":
            log = outcomes[-1].effects[-1]
            assert isinstance(log, LogEvent) and log.kind == name and log.actor == actor.label
            if name == "answer":  # accepted only while the current question's answering is open
                item = state.current_question
                assert state.phase is Phase.ANSWERING and item.answers_closed_at is None
                assert item.id == args["question"] and actor.id in state.participants(state.round)
            if name == "notice":  # only a read-aloud player's page, and only the host hears of it
                assert "read_aloud" in state.players[actor.id].answer_modes
                assert {m.audience for o in outcomes[-1:] for m in o.messages} == {"host"}
            if name == "vote":
                assert state.phase is Phase.VOTING and state.round_info[state.round].vote_closed_at is None
            if name == "sheet":  # a sheet is final once its round's vote is closed or the session finished
                assert state.round_info[state.round].vote_closed_at is None and state.phase is not Phase.FINISHED

        self.check_moves(before, outcomes)
        for outcome in outcomes:
            is_action = not refused and name != "tick" and outcome is outcomes[-1]  # not the clock's
            for effect in outcome.effects:
                if isinstance(effect, SaveVote):
                    assert is_action and name == "vote"
                    assert 1 <= effect.slot <= state.ai_votes_per_juror
                    self.named.setdefault((effect.round, effect.juror_id), {})[effect.slot] = effect.player_id
                if isinstance(effect, SaveAnswer):
                    assert is_action and name in ("answer", "enter_answer")
                    if name == "enter_answer":  # the host, for an AI player, before the reveal
                        assert effect.entered_by_host and state.players[effect.player_id].kind is PlayerKind.AI
                        assert state.phase in (Phase.ANSWERING, Phase.ANSWERS_CLOSED)
            for message in outcome.messages:
                assert message.audience in ("host", "player", "juror", "stage")
                if message.audience not in ("juror", "stage"):
                    continue
                assert_blind(message.audience, message.event, message.payload, state.players)
                if message.event == "identities":
                    assert is_action and name in ("reveal_identities", "finish")
                    number = message.payload["round"]
                    # a round's identities once its vote is closed (or the session stopped)
                    assert state.round_info[number].vote_closed_at is not None or state.phase is Phase.FINISHED
                    assert_identities_payload(message.payload, state)

    def check_moves(self, before, outcomes) -> None:
        """Every phase change follows the flow: the order of phases, rounds and positions."""
        phase, round_, position = before.phase, before.round, before.position
        for outcome in outcomes:
            for effect in outcome.effects:
                if not isinstance(effect, SetPhase):
                    continue
                assert effect.phase in Phase
                if effect.phase is Phase.FINISHED:
                    assert phase is not Phase.FINISHED
                    assert (effect.round, effect.position) == (round_, position)
                else:
                    assert effect.phase in NEXT[phase], f"{phase} -> {effect.phase}"
                    if effect.phase is Phase.ROUND:
                        assert (effect.round, effect.position) == ((round_ or 0) + 1, None)
                    elif effect.phase is Phase.CLIP and phase is not Phase.CLIP:  # a new question
                        assert (effect.round, effect.position) == (round_, (position or 0) + 1)
                    else:
                        assert (effect.round, effect.position) == (round_, position)
                    if effect.phase is Phase.JUDGING:  # judging only after answers_closed of the same question
                        assert phase is Phase.ANSWERS_CLOSED
                phase, round_, position = effect.phase, effect.round, effect.position
        assert (phase, round_, position) == (self.state.phase, self.state.round, self.state.position)

    # --- the roles -----------------------------------------------------------------------------
    # One rule draws who acts, so the mix is ours: the flow must get far (host moves that fit the
    # phase come first: hypothesis leans to the first choice) while every role keeps poking.

    @rule(
        data=st.data(),
        role=st.sampled_from(
            ["host_next"] * 6 + ["answer"] * 3 + ["vote"] * 3 + ["sheet"] * 2 + ["host_any", "join", "tick", "notice"]
        ),
    )
    def step(self, data, role):
        getattr(self, f"_{role}")(data.draw)

    def _host_any(self, draw):
        name = draw(st.sampled_from(HOST_ACTIONS), label="host action")
        self.act(HOST, name, draw(HOST_ARGS.get(name, st.just({})), label="args"), draw(ADVANCE))

    def _host_next(self, draw):
        """A host who mostly knows the flow: one of the moves that fit the phase."""
        state = self.state
        last = state.position == len(state.round_questions(state.round))
        onward = "finish" if state.round == state.rounds else "start_round"
        moves = {  # the usual move first (hypothesis leans to it), then the others that fit
            Phase.DRAFT: ["open_lobby"],
            Phase.LOBBY: ["start_round", "set_participants"],
            Phase.ROUND: ["show_question"],
            Phase.CLIP: ["open_answering", "play_clip"],
            Phase.ANSWERING: ["close_answering", "extend", "play_clip"],
            Phase.ANSWERS_CLOSED: ["reveal", "edit_answer"],
            Phase.JUDGING: ["open_vote", "show_question"] if last else ["show_question", "open_vote"],
            Phase.VOTING: ["close_vote", "extend"],
            Phase.VOTE_CLOSED: ["show_tally", onward, "finish"],
            Phase.TALLY: (
                ["reveal_identities", onward]
                if state.reveal_policy is RevealPolicy.PER_ROUND
                else [onward, "reveal_identities"]
            ),
            Phase.IDENTITIES: [onward, "set_participants", "finish"],
            Phase.FINISHED: ["finish", "set_open_join"],
        }[state.phase]
        name = moves[0] if len(moves) == 1 or draw(SANE, label="usual") else draw(st.sampled_from(moves[1:]))
        if name == "set_participants":
            chosen = draw(st.one_of(st.none(), st.lists(st.sampled_from(PLAYER_IDS), min_size=2, unique=True)))
            args = {"round": (state.round or 0) + 1, "players": chosen}
        elif name == "edit_answer":
            args = {"player": draw(st.sampled_from(PLAYER_IDS)), "text": "edited"}
        elif name in ("open_answering", "open_vote", "extend"):
            args = draw(optional("seconds", st.integers(1, 40)), label="args")
        elif name == "finish":
            args = draw(optional("force", st.booleans()), label="args")
        elif name == "play_clip":
            args = draw(optional("duration", st.floats(0.5, 20)), label="args")
        else:
            args = {}
        self.act(HOST, name, args, draw(ADVANCE))

    def _answer(self, draw):
        state, item = self.state, self.state.current_question
        if item is not None and draw(SANE, label="well-formed"):  # one that may well be accepted
            player = draw(st.sampled_from(state.participants(item.round)), label="player")
            if item.type.value == "mcq":
                args = {"question": item.id, "choice": draw(st.integers(0, len(item.choices) - 1), label="choice")}
            else:
                args = {"question": item.id, "text": draw(st.text(min_size=1, max_size=12).filter(str.strip))}
        else:
            player = draw(st.sampled_from(PLAYER_IDS + (UNKNOWN_PLAYER,)), label="player")
            question = draw(st.sampled_from(QUESTION_IDS + (999,)), label="question")
            if draw(st.booleans(), label="by choice"):
                args = {"question": question, "choice": draw(st.one_of(st.integers(-1, 6), st.none()))}
            else:
                args = {"question": question, "text": draw(texts, label="text")}
        self.act(Actor("player", player), "answer", args, draw(ADVANCE))

    def _sheet(self, draw):
        state = self.state
        juror = draw(st.sampled_from(JURORS), label="juror")
        revealed = [q.id for q in state.round_questions(state.round) if q.revealed_at]
        aliases = sorted(state.current_round.aliases.values()) if state.current_round else []
        if revealed and draw(SANE, label="well-formed"):
            args = {
                "question": draw(st.sampled_from(revealed)),
                "alias": draw(st.sampled_from(aliases)),
                "note": draw(st.text(max_size=8)),
                "human_likeness": draw(st.one_of(st.none(), st.integers(1, 5))),
                "looks_like_ai": draw(st.booleans()),
            }
        else:
            args = {
                "question": draw(st.sampled_from(QUESTION_IDS + (999,)), label="question"),
                "alias": draw(ALIAS_CHOICES, label="alias"),
                "note": draw(texts, label="note"),
                "human_likeness": draw(st.one_of(st.none(), st.integers(0, 6)), label="likeness"),
                "looks_like_ai": draw(st.sampled_from([True, False, "yes"]), label="marked"),
            }
        self.act(Actor("juror", juror), "sheet", args, draw(ADVANCE))

    def _vote(self, draw):
        state = self.state
        juror = draw(st.sampled_from(JURORS), label="juror")
        aliases = sorted(state.current_round.aliases.values()) if state.current_round else []
        if state.phase is Phase.VOTING and draw(SANE, label="well-formed"):
            # may still name a player twice (another slot): that is refused
            args = {
                "round": state.round,
                "alias": draw(st.sampled_from(aliases + [None])),
                "slot": draw(st.integers(1, state.ai_votes_per_juror)),
                "confidence": draw(st.one_of(st.none(), st.integers(1, 5))),
            }
        else:
            number = state.round if draw(st.booleans(), label="current") else draw(st.integers(0, 3), label="round")
            args = {
                "round": number,
                "alias": draw(ALIAS_CHOICES, label="alias"),
                "confidence": draw(st.one_of(st.none(), st.integers(0, 6)), label="confidence"),
                "reason": draw(texts, label="reason"),
            }
            slot = draw(st.one_of(st.none(), st.integers(0, 3)), label="slot")
            if slot is not None:
                args["slot"] = slot
        self.act(Actor("juror", juror), "vote", args, draw(ADVANCE))

    def _notice(self, draw):
        """A read-aloud page's word on its voice (accepted from H1 only: the one player whose page reads aloud)."""
        args = {
            "notice": draw(st.sampled_from(["no_voice", "voice_ok", "mute"]), label="notice"),
            "language": draw(st.sampled_from(["ko", "en-GB", "", "k o", 7]), label="language"),
        }
        self.act(Actor("player", draw(st.sampled_from(PLAYER_IDS), label="player")), "notice", args, draw(ADVANCE))

    def _join(self, draw):
        self.act(
            Actor("guest"), "join", {"nickname": draw(st.one_of(texts, st.just("J1")), label="nickname")}, draw(ADVANCE)
        )

    def _tick(self, draw):
        self.act(SYSTEM, "tick", {}, draw(st.integers(0, 90), label="seconds"))

    # --- invariants ----------------------------------------------------------------------------

    @invariant()
    def phase_is_known_and_consistent(self):
        state = self.state
        assert state.phase in Phase
        item = state.current_question
        # timers: answering, voting, and the host's screening (answering opens when the clip has played)
        assert (
            state.deadline is None
            or state.phase in (Phase.ANSWERING, Phase.VOTING)
            or (
                state.phase is Phase.CLIP and item.clip_started_at is not None and state.deadline > item.clip_started_at
            )
        )
        if state.phase in QUESTION_PHASES:
            assert item is not None and item.shown_at is not None
            assert (item.answers_closed_at is None) == (state.phase in (Phase.CLIP, Phase.ANSWERING))
            assert (item.revealed_at is None) == (state.phase is not Phase.JUDGING)
        for question in state.questions.values():
            if question.revealed_at:
                assert question.answers_closed_at and question.shown_at
                assert question.shown_at <= question.answers_closed_at <= question.revealed_at
                assert sorted(question.reveal_order) == sorted(state.round_info[question.round].aliases.values())
            elif question.answers_closed_at:
                assert question.shown_at and question.shown_at <= question.answers_closed_at
            assert (question.reveal_order is None) == (question.revealed_at is None)
            if question.shown_at:
                assert state.round is not None and question.round <= state.round
        for question_id, answers in state.answers.items():
            question = state.questions[question_id]
            assert question.shown_at is not None
            assert set(answers) <= set(state.participants(question.round))
        if state.phase is Phase.VOTING:
            info = state.current_round
            assert info.vote_opened_at and info.vote_closed_at is None
            assert all(q.revealed_at for q in state.round_questions(state.round))
        if state.phase in CLOSED_VOTE_PHASES:
            info = state.current_round
            assert info.vote_closed_at and info.tally is not None and info.tally["round"] == state.round

    @invariant()
    def aliases_are_permutations(self):
        state = self.state
        for number, info in state.round_info.items():
            if not info.aliases:
                assert number > (state.round or 0)
                continue
            assert number <= state.round
            players = state.participants(number)
            assert sorted(info.aliases) == players
            assert sorted(info.aliases.values()) == list(ALIASES[: len(players)])
            assert self.dealt.setdefault(number, dict(info.aliases)) == info.aliases  # never re-dealt
            assert info.revealed <= set(info.aliases)
            if info.revealed:
                assert info.vote_closed_at is not None or state.phase is Phase.FINISHED

    @invariant()
    def votes_are_one_per_slot_and_name_nobody_twice(self):
        state = self.state
        if state.round is not None:
            current = {juror: slots for (number, juror), slots in self.named.items() if number == state.round}
            assert {j: {s: v.player_id for s, v in slots.items()} for j, slots in state.votes.items()} == current
        for (number, juror), slots in self.named.items():
            named = [player for player in slots.values() if player is not None]
            assert len(named) == len(set(named)), f"juror {juror} names a player twice in round {number}"
            assert set(named) <= set(self.dealt[number])
            assert set(slots) <= set(range(1, state.ai_votes_per_juror + 1))

    @invariant()
    def snapshots_are_blind(self):
        state = self.state
        for audience, snapshot in (
            ("stage", audiences.stage_snapshot(state)),
            ("juror", audiences.juror_snapshot(state, "J1", [], [])),
        ):
            assert_blind(audience, "snapshot", snapshot, state.players, snapshot=True)
            for shown in snapshot["identities"]:
                info = state.round_info[shown["round"]]
                assert info.vote_closed_at is not None or state.phase is Phase.FINISHED
                assert_identities_payload(shown, state)


EngineMachine.TestCase.settings = settings(
    max_examples=60, stateful_step_count=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
TestEngineStateful = EngineMachine.TestCase
