"""A session played to the end over the Socket.IO test client, for the grading and results pages' tests."""

from __future__ import annotations

from sqlalchemy import select

from tests.support.apps import form_token, login
from tests.support.live import People, Role, client_id, make_session
from vtt.extensions import socketio
from vtt.models import Answer, Juror, Jury, Player, RoundAlias, SessionQuestion, Vote

# Who each of the 4 jurors names, round by round (None: abstains).  Round 1: the AI 3 of 4 cast votes,
# Mina 1 (4 voters); round 2: Mina 2, the AI 1, one abstention.
VOTES = {1: ["Agent", "Agent", "Agent", "Mina"], 2: ["Mina", "Mina", "Agent", None]}

# Ana and Ben on the six open answers: they agree on four (Mina q05 and q11 right, Grace q05 and Agent q11
# wrong) and disagree on Grace q11 and Agent q05, where Ana says right and Ben wrong.
# p_o = 4/6; Ana says right 4/6, Ben 2/6 -> p_e = (4/6)(2/6) + (2/6)(4/6) = 4/9; kappa = (2/3 - 4/9) / (5/9) = 0.4
ANA = {
    ("Mina", "q05"): 1,
    ("Grace", "q05"): 0,
    ("Agent", "q05"): 1,
    ("Mina", "q11"): 1,
    ("Grace", "q11"): 1,
    ("Agent", "q11"): 0,
}
BEN = {
    ("Mina", "q05"): 1,
    ("Grace", "q05"): 0,
    ("Agent", "q05"): 0,
    ("Mina", "q11"): 1,
    ("Grace", "q11"): 0,
    ("Agent", "q11"): 0,
}


def answer_text(name: str, qid_position: int) -> str:
    return f"{name} thinks it is answer {qid_position}"


def play_session(
    app,
    db_factory,
    votes: dict[int, list[str | None]] = VOTES,
    participants: dict[int, list[str]] | None = None,
    designed_rounds: int | None = None,
    per_round: int = 2,
    cut_short_after: int | None = None,
    finish: bool = True,
    **session_options,
) -> People:
    """Two rounds of two demo questions, 3 players (Agent is the AI), 4 jurors; every player of a round
    (``participants``: names per round, default everyone) answers every question (open: a text, mcq:
    option B), jurors vote as ``votes`` says; the session finishes (``designed_rounds`` more than were
    played: the host stops it early), unless ``finish`` is false.  ``cut_short_after``: the host then begins one
    more round, shows and reveals that many of its ``per_round`` questions and stops the session before its vote
    opens."""
    people = make_session(
        db_factory, rounds=designed_rounds or len(votes), per_round=per_round, jurors=4, **session_options
    )
    client = app.test_client()
    login(client)
    host = Role(socketio, app, {"code": people.code, "role": "host"}, flask_client=client)
    players = {name: Role(socketio, app, {"token": token}) for name, token in people.players.items()}
    jurors = {label: Role(socketio, app, {"token": token}) for label, token in people.jurors.items()}
    for number, names in (participants or {}).items():
        host.host("set_participants", round=number, players=[people.player_ids[name] for name in names])
    host.host("open_lobby")

    def play_questions(playing: list[str], count: int) -> None:
        for position in range(1, count + 1):
            host.host("show_question")
            question = players[playing[0]].last("question")
            host.host("open_answering")
            for name in playing:
                player = players[name]
                given = {"choice": 1} if question["type"] == "mcq" else {"text": answer_text(name, position)}
                assert player.send("answer", {"id": client_id(), "question": question["id"], **given})["ok"]
            host.host("close_answering")
            host.host("reveal")

    for number, picks in votes.items():
        host.host("start_round")
        playing = (participants or {}).get(number, list(players))
        play_questions(playing, per_round)
        host.host("open_vote")
        with db_factory() as db:
            alias_of = {
                row.player_id: row.alias
                for row in db.scalars(
                    select(RoundAlias).where(RoundAlias.session_id == people.session_id, RoundAlias.round == number)
                )
            }
        for juror, pick in zip(jurors.values(), picks):
            alias = alias_of[people.player_ids[pick]] if pick else None
            assert juror.send("vote", {"id": client_id(), "round": number, "alias": alias, "confidence": 3})["ok"]
        host.host("close_vote")
        host.host("show_tally")
    if cut_short_after is not None:
        host.host("start_round")
        play_questions((participants or {}).get(len(votes) + 1, list(players)), cut_short_after)
    if finish:
        host.host("finish", **({"force": True} if designed_rounds and designed_rounds > len(votes) else {}))
    for role in [host, *players.values(), *jurors.values()]:
        role.client.disconnect()
    return people


# A displaced jury (D001, D002) and two AI juries judging a played session later: label: (jury, model, round 1 pick,
# round 2 pick).  Pooled detection: displaced 2/4, ai:claude-y 0/2, ai:gpt-x 2/2.
OTHER_JURORS = {
    "D001": (Jury.DISPLACED, None, "Agent", "Grace"),
    "D002": (Jury.DISPLACED, None, "Mina", "Agent"),
    "AI gpt-x": (Jury.AI, "gpt-x", "Agent", "Agent"),
    "AI claude-y": (Jury.AI, "claude-y", "Grace", "Mina"),
}


def judge_by_other_juries(db_factory, session_id: int) -> None:
    """The displaced jury and two AI juries of :data:`OTHER_JURORS` vote in both rounds of a played session."""
    picks = {label: (jury, model, picks) for label, (jury, model, *picks) in OTHER_JURORS.items()}
    vote_as_other_juries(db_factory, session_id, picks)


def vote_as_other_juries(db_factory, session_id: int, picks: dict[str, tuple[Jury, str | None, list[str]]]) -> None:
    """Jurors of other juries vote round by round: ``{label: (jury, model, [round 1 pick, round 2 pick, ...])}``
    (a pick: the name of the player voted for); a label with no juror yet gets one."""
    with db_factory() as db, db.begin():
        aliases = db.scalars(select(RoundAlias).where(RoundAlias.session_id == session_id)).all()
        by_name = {(a.round, a.player.name): a for a in aliases}
        for label, (jury, model, chosen) in picks.items():
            juror = db.scalar(select(Juror).where(Juror.session_id == session_id, Juror.label == label))
            if juror is None:
                juror = Juror(session_id=session_id, label=label, token=f"t-{label}", jury=jury, model=model)
                db.add(juror)
                db.flush()
            for number, pick in enumerate(chosen, start=1):
                alias = by_name[(number, pick)]
                db.add(
                    Vote(
                        session_id=session_id,
                        round=number,
                        juror_id=juror.id,
                        slot=1,
                        alias=alias.alias,
                        player_id=alias.player_id,
                        client_key=client_id(),
                    )
                )


# --- grading ---------------------------------------------------------------------------------------------------


def open_answers(db_factory, people) -> dict[tuple[str, str], int]:
    """``{(player, qid): answer id}`` of the session's open answers (q05 and q11 with the demo bank's seed)."""
    with db_factory() as db:
        rows = db.execute(
            select(Player.name, SessionQuestion, Answer.id)
            .join(Answer, Answer.player_id == Player.id)
            .join(SessionQuestion, SessionQuestion.id == Answer.session_question_id)
            .where(Answer.session_id == people.session_id)
        ).all()
        return {(name, sq.question.qid): answer_id for name, sq, answer_id in rows if sq.question.type.value == "open"}


def host_client(app):
    """Another host's browser (a grader of their own), signed in."""
    client = app.test_client()
    login(client)
    return client


def post(client, path: str, **data):
    return client.post(path, data={"csrf_token": form_token(client, path.rsplit("/", 1)[0] + "/"), **data})


def name_grader(client, base: str, name: str) -> None:
    response = post(client, f"{base}/grader", grader=name)
    assert response.status_code == 302
