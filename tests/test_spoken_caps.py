"""The caps on spoken takes bound the disk: a player's and a session's takes and bytes never pass their caps, however
many uploads arrive at once, on SQLite and PostgreSQL; the uploads past a cap are refused with its code (409) and
leave nothing on the disk (the single uploads and the settings are in tests/test_spoken.py)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from tests.support.audio import webm
from tests.support.live import connect_all, make_session
from tests.support.spoken import PLAYERS, upload
from vtt.models import Recording

MB = 1024 * 1024


@pytest.fixture
def answering(backend, tmp_path):
    """(app, db_factory, people) on each database, the spoken child's question open for answers."""
    app, db_factory = backend
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    roles = connect_all(app, app.test_client(), people)
    for move in ("open_lobby", "start_round", "show_question", "open_answering"):
        roles[0].host(move)
    people.question = roles[0].last("question")["id"]
    yield app, db_factory, people
    for role in [roles[0], roles[1], *roles[2].values(), *roles[3].values()]:
        role.client.disconnect()


def burst(app, people, data: bytes, count: int) -> list[tuple[int, dict]]:
    """``count`` distinct takes of the spoken child sent at once, each by a page of its own: (status, reply)."""

    def send(n: int):
        reply = upload(app.test_client(), people.players["Mina"], people.question, data, action=f"burst-{n}")
        return reply.status_code, reply.get_json()

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(send, range(count)))


def on_disk(app) -> dict[str, int]:
    from pathlib import Path

    folder = Path(app.config["RECORDINGS_DIR"])
    return {p.name: p.stat().st_size for p in folder.iterdir()} if folder.exists() else {}


def stored(db_factory) -> dict[str, int]:
    with db_factory() as db:
        return dict(db.execute(select(Recording.file, Recording.size)).all())


def assert_kept_whole(app, db_factory, replies, kept: int, refused_as: str) -> None:
    """``kept`` takes acknowledged, the rest refused with ``refused_as`` (409, never a 5xx); on the disk exactly the
    kept takes' files (no temporary file, no take without its row), and nothing reserved any more."""
    codes = sorted("ok" if body["ok"] else body["error"]["code"] for _status, body in replies)
    assert codes == sorted(["ok"] * kept + [refused_as] * (len(replies) - kept)), codes
    assert {status for status, body in replies if not body["ok"]} <= {409}, replies
    rows = stored(db_factory)
    assert len(rows) == kept and on_disk(app) == rows
    from vtt.models import TakeReservation

    with db_factory() as db:
        assert db.scalars(select(TakeReservation)).all() == []


def test_forty_takes_at_once_keep_exactly_the_player_s_cap(answering, tmp_path):
    """Found: with VTT_MAX_TAKES_PER_PLAYER=3, 40 concurrent distinct takes from one player were
    all accepted: the cap was counted before the write and never again."""
    app, db_factory, people = answering
    app.config.update(MAX_TAKES_PER_PLAYER=3)
    replies = burst(app, people, webm(tmp_path), 40)
    assert_kept_whole(app, db_factory, replies, 3, "too_many_takes")


def test_forty_takes_at_once_keep_exactly_the_session_s_cap(answering, tmp_path):
    app, db_factory, people = answering
    app.config.update(MAX_TAKES_PER_SESSION=4)
    replies = burst(app, people, webm(tmp_path), 40)
    assert_kept_whole(app, db_factory, replies, 4, "too_many_session_takes")


def test_a_fresh_player_s_burst_of_large_takes_stays_under_the_byte_caps(answering, tmp_path):
    """Found: a fresh player sending 60 takes of ~7.9 MB at once stored 62 takes, 514 MB in 2.3 s.
    Takes have a byte cap per player and per session too, held while the bytes arrive."""
    app, db_factory, people = answering
    large = webm(tmp_path) + bytes(MB)  # a real take's first bytes, then 1 MB more
    app.config.update(MAX_TAKE_BYTES_PER_PLAYER=5 * MB)
    replies = burst(app, people, large, 20)
    kept = sum(body["ok"] for _status, body in replies)
    assert 1 <= kept <= 4, replies  # 4 x 1 MB and their multipart overhead are under 5 MB; 5 are not
    assert sum(stored(db_factory).values()) <= 5 * MB
    assert_kept_whole(app, db_factory, replies, kept, "too_much_audio")

    app.config.update(MAX_TAKE_BYTES_PER_PLAYER=100 * MB, MAX_TAKE_BYTES_PER_SESSION=sum(stored(db_factory).values()))
    more = upload(app.test_client(), people.players["Mina"], people.question, large, action="one-more")
    assert more.status_code == 409 and more.get_json()["error"]["code"] == "too_much_session_audio", more.get_json()
    assert len(stored(db_factory)) == kept and on_disk(app) == stored(db_factory)


def test_a_reservation_left_by_a_killed_upload_holds_its_place_until_it_expires(answering, migrated_database_url):
    """An upload reserves its take and bytes before writing; a process killed mid-upload never releases them, so a
    reservation counts until RESERVATION_SECONDS have passed, then no more."""
    from vtt.models import TakeReservation
    from vtt.recordings.caps import RESERVATION_SECONDS, Caps, reserve

    app, db_factory, people = answering
    caps = Caps(takes_per_player=1, takes_per_session=10, bytes_per_player=10 * MB, bytes_per_session=10 * MB)
    mina = people.player_ids["Mina"]
    now = datetime.now(UTC)
    with db_factory() as db:
        db.add(
            TakeReservation(session_id=people.session_id, player_id=mina, client_key="killed", size=MB, reserved_at=now)
        )
        db.commit()
    with pytest.raises(Exception, match="no more are kept") as refused:
        reserve(migrated_database_url, people.session_id, mina, "next", MB, caps)
    assert refused.value.code == "too_many_takes"
    same = reserve(migrated_database_url, people.session_id, mina, "killed", MB, caps)  # its own resend: one take
    later = now + timedelta(seconds=RESERVATION_SECONDS + 1)
    with db_factory() as db:
        db.execute(TakeReservation.__table__.delete().where(TakeReservation.id == same))
        db.commit()
    fresh = reserve(migrated_database_url, people.session_id, mina, "next", MB, caps, now=later)
    with db_factory() as db:
        assert [(r.id, r.client_key) for r in db.scalars(select(TakeReservation))] == [(fresh, "next")]


def test_a_served_process_holds_the_caps_against_a_burst(migrated_database_url, tmp_path):
    """The same burst against ``vtt serve`` itself (gevent: the reservation waits for its lock in a native thread),
    on each database: 30 distinct takes at once under a cap of 3 keep 3, and the rest are refused, never a 5xx."""
    import requests
    import socketio

    from tests.support.apps import host_api_token
    from tests.support.live import client_id
    from tests.support.served import ServedApp
    from vtt.db import make_db_factory, make_engine
    from vtt.models import SessionQuestion

    engine = make_engine(migrated_database_url)
    db_factory = make_db_factory(engine)
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, players=PLAYERS)
    with db_factory() as db:
        question = db.scalar(select(SessionQuestion.id).where(SessionQuestion.session_id == people.session_id))
    data = webm(tmp_path)
    env = {"DATABASE_URL": migrated_database_url, "VTT_MAX_TAKES_PER_PLAYER": "3"}
    try:
        with ServedApp(env) as server:
            host = socketio.Client()
            host.connect(server.url, auth={"code": people.code, "role": "host", "host_token": host_api_token()})
            for move in ("open_lobby", "start_round", "show_question", "open_answering"):
                assert host.call("host", {"id": client_id("h"), "action": move}, timeout=10)["ok"], move

            def send(n: int):
                files = {"audio": ("answer.webm", data, "audio/webm")}
                fields = {"id": f"served-{n}", "question": str(question), "duration_ms": "1000"}
                reply = requests.post(
                    f"{server.url}/play/{people.players['Mina']}/recording", data=fields, files=files, timeout=60
                )
                is_json = reply.headers.get("Content-Type", "").startswith("application/json")
                return reply.status_code, reply.json() if is_json else {"ok": False, "error": {"code": reply.text}}

            with ThreadPoolExecutor(30) as pool:
                replies = list(pool.map(send, range(30)))
            host.disconnect()
        codes = sorted("ok" if body["ok"] else body["error"]["code"] for _status, body in replies)
        assert codes == ["ok"] * 3 + ["too_many_takes"] * 27, (replies, server.output[-5000:])
        assert {status for status, _body in replies} == {200, 409}
        rows = stored(db_factory)
        folder = tmp_path / "instance" / "recordings"
        assert len(rows) == 3 and {p.name: p.stat().st_size for p in folder.iterdir()} == rows
        assert "Traceback" not in server.output, server.output[-3000:]
    finally:
        engine.dispose()


def test_an_upload_writes_no_more_than_it_reserved_and_stops_when_its_reservation_runs_out(tmp_path):
    """A page that sends more than its Content-Length said, or that is still sending when its reservation expires,
    is stopped: no take, no temporary file."""
    import time

    from vtt.recordings import RecordingProblem, store

    head = webm(tmp_path)[:4]
    folder = tmp_path / "recordings"
    with pytest.raises(RecordingProblem) as larger:
        store(folder, "1-2-3-more.webm", [head, bytes(MB)], limit=MB)
    with pytest.raises(RecordingProblem) as late:
        store(folder, "1-2-3-late.webm", [head, bytes(10)], deadline=time.monotonic() - 1)
    assert (larger.value.code, late.value.code) == ("too_large", "timeout")
    assert list(folder.iterdir()) == []
    assert store(folder, "1-2-3-fits.webm", [head, bytes(MB - 4)], limit=MB).size == MB


def test_the_byte_caps_are_settings_in_megabytes(tmp_path):
    from vtt.config import Settings

    instance = {"VTT_INSTANCE_PATH": str(tmp_path / "instance")}
    defaults = Settings.from_env(instance).flask_config()
    assert (defaults["MAX_TAKE_BYTES_PER_PLAYER"], defaults["MAX_TAKE_BYTES_PER_SESSION"]) == (64 * MB, 1024 * MB)
    chosen = Settings.from_env({**instance, "VTT_MAX_TAKE_MB_PER_PLAYER": "8", "VTT_MAX_TAKE_MB_PER_SESSION": "100"})
    assert (
        chosen.flask_config()["MAX_TAKE_BYTES_PER_PLAYER"],
        chosen.flask_config()["MAX_TAKE_BYTES_PER_SESSION"],
    ) == (
        8 * MB,
        100 * MB,
    )
    for wrong in ("0", "lots", "1.5"):
        with pytest.raises(ValueError, match="VTT_MAX_TAKE_MB_PER_PLAYER"):
            Settings.from_env({**instance, "VTT_MAX_TAKE_MB_PER_PLAYER": wrong})
