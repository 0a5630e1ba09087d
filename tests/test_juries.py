"""Juries are kept apart: a displaced or AI juror's votes and sheet lines never reach the live figures.

A session is played by its four live jurors; then a displaced juror and an AI juror, put straight into the
database, judge both closed rounds (each names Mina, a human, and marks every answer as an AI's).  The live
tallies, the round verdicts, the host's jury, the live state, the results page and the report's vote statistics
stay the live jury's; the exports list every juror's rows, each with its jury.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest
from sqlalchemy import select

from tests.support.apps import login
from tests.support.live import Role, client_id
from tests.support.review import play_session
from vtt.extensions import socketio
from vtt.models import Juror, Jury, RoundAlias, SessionQuestion, SessionRound, SheetEntry, Vote, VttSession
from vtt.persistence.load import load_state
from vtt.persistence.queries import jury_rows
from vtt.reports.session import write_session_reports
from vtt.results.export import export_tables

OTHER_JURIES = {"D1": Jury.DISPLACED, "AI1": Jury.AI}


def add_other_juries(db_factory, session_id: int) -> None:
    """A displaced and an AI juror who each name Mina in every round and mark every answer as an AI's."""
    with db_factory() as db, db.begin():
        aliases = db.scalars(select(RoundAlias).where(RoundAlias.session_id == session_id)).all()
        placed = db.scalars(select(SessionQuestion).where(SessionQuestion.session_id == session_id)).all()
        mina = next(a.player_id for a in aliases if a.player.name == "Mina")
        for label, jury in OTHER_JURIES.items():
            juror = Juror(session_id=session_id, label=label, token=f"t-{label}", jury=jury)
            db.add(juror)
            db.flush()
            for alias in aliases:
                if alias.player_id == mina:
                    db.add(
                        Vote(
                            session_id=session_id,
                            round=alias.round,
                            juror_id=juror.id,
                            alias=alias.alias,
                            player_id=mina,
                            confidence=5,
                            client_key=client_id(),
                        )
                    )
                for sq in placed:
                    if sq.round == alias.round:
                        db.add(
                            SheetEntry(
                                session_id=session_id,
                                juror_id=juror.id,
                                session_question_id=sq.id,
                                player_id=alias.player_id,
                                alias=alias.alias,
                                human_likeness=1,
                                looks_like_ai=True,
                                client_key=f"{label}-{sq.id}",
                            )
                        )


def stored_tallies(db_factory, session_id: int) -> dict[int, dict]:
    with db_factory() as db:
        return {
            r.number: r.tally for r in db.scalars(select(SessionRound).where(SessionRound.session_id == session_id))
        }


def live_figures(app, db_factory, session_id: int, folder) -> dict:
    """What the live jury's results say: the results page's round cards, the report's vote statistics."""
    client = app.test_client()
    login(client)
    page = client.get(f"/host/sessions/{session_id}/results/").get_data(as_text=True)
    cards = re.findall(r'<section class="card round" id="round-\d+".*?</section>', page, re.S)
    with db_factory() as db:
        reports = write_session_reports(db, db.get(VttSession, session_id), folder)
        votes = reports.tables.votes.to_dict("records")
        sheet = reports.tables.sheet.to_dict("records")
    tables = {name: pd.read_csv(folder / name).to_dict("records") for name in ("rounds.csv", "jurors.csv")}
    return {"cards": cards, "votes": votes, "sheet": sheet, **tables}


@pytest.fixture
def played(backend):
    app, db_factory = backend
    return app, db_factory, play_session(app, db_factory)


def test_the_live_figures_stay_the_live_jurys(played, tmp_path):
    app, db_factory, people = played
    before = stored_tallies(db_factory, people.session_id)
    figures = live_figures(app, db_factory, people.session_id, tmp_path / "before")
    add_other_juries(db_factory, people.session_id)
    assert stored_tallies(db_factory, people.session_id) == before
    assert live_figures(app, db_factory, people.session_id, tmp_path / "after") == figures
    assert {row["juror"] for row in figures["votes"]} == {"J1", "J2", "J3", "J4"}


def test_the_live_state_and_the_hosts_jury_hold_only_live_jurors(played):
    app, db_factory, people = played
    add_other_juries(db_factory, people.session_id)
    with db_factory() as db:
        state = load_state(db, people.session_id)
        assert state.juror_labels == {"J1", "J2", "J3", "J4"}
        assert set(state.juror_ids) == state.juror_labels
        assert {juror for juror in state.votes} <= set(state.juror_ids.values())
        assert {row["label"] for row in jury_rows(db, people.session_id)} == state.juror_labels


def test_a_recount_reads_only_the_live_jurys_votes(played):
    """Removing a live juror recounts the closed rounds from the stored votes: the other juries stay out."""
    app, db_factory, people = played
    before = stored_tallies(db_factory, people.session_id)
    add_other_juries(db_factory, people.session_id)
    client = app.test_client()
    login(client)
    host = Role(socketio, app, {"code": people.code, "role": "host"}, flask_client=client)
    host.host("remove_juror", juror="J4")  # J4 voted Mina in round 1 and abstained in round 2 (VOTES)
    host.client.disconnect()
    after = stored_tallies(db_factory, people.session_id)
    assert [after[1]["cast"], after[2]["cast"]] == [before[1]["cast"] - 1, before[2]["cast"]]
    mina = {n: next(row["votes"] for row in after[n]["players"] if row["name"] == "Mina") for n in (1, 2)}
    assert mina == {1: 0, 2: 2}
    assert after[1]["majority_alias"] == before[1]["majority_alias"]


def test_a_displaced_or_ai_jurors_link_is_no_live_link(played):
    """A displaced juror's link opens the finished session's rounds to judge, never the live jury's view; an AI
    juror has no page at all."""
    app, db_factory, people = played
    add_other_juries(db_factory, people.session_id)
    displaced = Role(socketio, app, {"token": "t-D1"})
    assert displaced.client.is_connected()
    assert displaced.last("snapshot")["jury"] == "displaced" and "status" not in displaced.last("snapshot")
    ai = Role(socketio, app, {"token": "t-AI1"})
    assert not ai.client.is_connected()


def test_the_exports_list_every_jurys_rows(played):
    app, db_factory, people = played
    add_other_juries(db_factory, people.session_id)
    with db_factory() as db:
        session = db.get(VttSession, people.session_id)
        exported = export_tables(db, session)
        wide = exported[f"{session.join_code}_wide.csv"]
    live = {f"J{n}": "live" for n in range(1, 5)}
    juries = {**live, **{label: jury.value for label, jury in OTHER_JURIES.items()}}
    jurors = exported["jurors.csv"]
    assert dict(zip(jurors["juror"], jurors["jury"])) == juries
    votes = exported["votes.csv"]
    assert set(zip(votes["juror"], votes["jury"])) == set(juries.items())
    assert list(votes[votes["jury"] != "live"]["player"]) == ["Mina"] * 4
    sheet = exported["sheet_entries.csv"]
    assert set(zip(sheet["juror"], sheet["jury"])) == {(label, jury.value) for label, jury in OTHER_JURIES.items()}
    assert len(sheet[sheet["jury"] == "displaced"]) == len(sheet[sheet["jury"] == "ai"]) == 4 * 3
    wide_jurors = wide[wide["role"] == "juror"]
    assert dict(zip(wide_jurors["label"], wide_jurors["jury"])) == juries
    assert wide[wide["role"] == "player"]["jury"].isna().all()
    assert list(wide.columns).index("jury") < list(wide.columns).index("group")
