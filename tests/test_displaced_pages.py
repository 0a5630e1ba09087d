"""A displaced jury's pages over HTTP: a displaced juror's own page (and an AI juror's token, which opens nothing), the
open link's Start page with its refusals and rate, and the host's card on the session page: jurors made with their
links as CSV, open links with their arrivals and Close, how many have finished."""

from __future__ import annotations

import csv
import io
import re

import pytest
from sqlalchemy import select

from tests.support.apps import form_token, login
from tests.support.live import Role, client_id, make_session
from tests.support.review import play_session
from vtt.extensions import socketio
from vtt.juries.displaced import open_link
from vtt.models import Juror, Jury, JuryLink, VttSession


@pytest.fixture
def finished(app, db_factory):
    return play_session(app, db_factory)


def host(app):
    client = app.test_client()
    login(client)
    return client


def post_form(client, page: str, action: str, **data):
    """A form of ``page`` posted as the browser would (its CSRF token)."""
    return client.post(action, data={"csrf_token": form_token(client, page), **data})


def make_link(db_factory, session_id: int, cap: int | None, rounds=None) -> str:
    with db_factory() as db:
        link = open_link(db, db.get(VttSession, session_id), cap, rounds)
        db.commit()
        return link.token


def test_a_displaced_jurors_link_opens_their_page_and_an_ai_jurors_opens_nothing(app, db_factory, finished):
    client = app.test_client()
    with db_factory() as db:
        db.add(Juror(session_id=finished.session_id, label="D001", token="later-one", jury=Jury.DISPLACED))
        db.add(Juror(session_id=finished.session_id, label="AI01", token="model-one", jury=Jury.AI, model="m"))
        db.commit()
    page = client.get("/jury/later-one")
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and "js/displaced.js" in text and "js/jury.js" not in text
    assert 'id="completion-code"' in text and '"attention": "To show you are reading carefully' in text
    assert client.get("/jury/model-one").status_code == 404
    live = client.get(f"/jury/{finished.jurors['J1']}").get_data(as_text=True)
    assert "js/jury.js" in live and "js/displaced.js" not in live
    korean = client.get("/jury/later-one?lang=ko").get_data(as_text=True)
    assert "완료 코드:" in korean


def test_before_the_session_has_finished_the_page_says_so_and_does_not_connect(app, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    with db_factory() as db:
        db.add(Juror(session_id=people.session_id, label="D001", token="too-early", jury=Jury.DISPLACED))
        db.commit()
    page = app.test_client().get("/jury/too-early")
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and "This session has not finished yet" in text
    assert "js/displaced.js" not in text  # the socket would refuse it (not_finished)
    refused = Role(socketio, app, {"token": "too-early"})
    assert not refused.connected


def test_the_open_link_makes_a_juror_only_when_start_is_pressed(app, db_factory, finished):
    token = make_link(db_factory, finished.session_id, 2, "2")
    client = app.test_client()
    page = client.get(f"/jury/open/{token}")
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and "about 1 round" in text and 'id="start"' in text
    with db_factory() as db:
        assert db.scalar(select(Juror).where(Juror.jury == Jury.DISPLACED)) is None  # opening made nobody
    assert client.post(f"/jury/open/{token}").status_code == 400  # no CSRF token
    started = post_form(client, f"/jury/open/{token}", f"/jury/open/{token}")
    assert started.status_code == 302
    juror_token = started.headers["Location"].rsplit("/", 1)[1]
    with db_factory() as db:
        juror = db.scalar(select(Juror).where(Juror.token == juror_token))
        assert (juror.label, juror.jury, juror.rounds) == ("D001", Jury.DISPLACED, [2])
    assert "js/displaced.js" in client.get(started.headers["Location"]).get_data(as_text=True)
    other = (
        app.test_client()
    )  # another person (Start again in the first browser is its juror: tests/test_crowd_links.py)
    assert post_form(other, f"/jury/open/{token}", f"/jury/open/{token}").status_code == 302
    full = app.test_client().get(f"/jury/open/{token}")
    assert full.status_code == 410 and "This jury is full" in full.get_data(as_text=True)
    assert 'id="start"' not in full.get_data(as_text=True)


def test_an_open_link_refuses_plainly_when_closed_unknown_or_early(app, db_factory, finished):
    client = app.test_client()
    unknown = client.get("/jury/open/no-such-link")
    assert unknown.status_code == 404 and "This link is not valid" in unknown.get_data(as_text=True)
    token = make_link(db_factory, finished.session_id, None)
    with db_factory() as db:
        db.scalar(select(JuryLink).where(JuryLink.token == token)).closed_at = db.get(
            VttSession, finished.session_id
        ).created_at
        db.commit()
    closed = client.get(f"/jury/open/{token}")
    assert closed.status_code == 410 and "This jury is closed" in closed.get_data(as_text=True)
    assert client.post(f"/jury/open/{token}", data={}).status_code in (400, 410)
    running = make_session(db_factory, rounds=1, per_round=1, jurors=1, name="Running")
    with db_factory() as db:
        db.add(JuryLink(session_id=running.session_id, token="early-link", cap=None))
        db.commit()
    early = client.get("/jury/open/early-link?lang=ko")
    assert early.status_code == 409 and "이 세션은 아직 끝나지 않았습니다" in early.get_data(as_text=True)


def test_arrivals_from_one_address_are_rate_limited(app, db_factory, finished):
    token = make_link(db_factory, finished.session_id, None)

    def fresh_browser_start():  # one address, a new browser each time (one browser keeps its juror)
        browser = app.test_client()
        return browser.post(f"/jury/open/{token}", data={"csrf_token": form_token(browser, f"/jury/open/{token}")})

    codes = [fresh_browser_start().status_code for _ in range(21)]
    assert codes == [302] * 20 + [429]
    refused = fresh_browser_start()
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "60"
    assert "Try again in a minute" in refused.get_data(as_text=True)
    with db_factory() as db:
        assert len(db.scalars(select(Juror).where(Juror.jury == Jury.DISPLACED)).all()) == 20


def test_the_host_card_waits_for_the_end_of_the_session(app, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    client = host(app)
    page = client.get(f"/host/sessions/{people.session_id}").get_data(as_text=True)
    assert "Judge this session again online" in page and "This opens when the session has finished" in page
    assert 'id="make-jurors"' not in page
    refused = post_form(
        client, f"/host/sessions/{people.session_id}", f"/host/sessions/{people.session_id}/displaced/jurors", count="2"
    )
    assert refused.status_code == 302
    again = client.get(refused.headers["Location"]).get_data(as_text=True)
    assert "This session has not finished: it can be judged again once it has." in again


@pytest.mark.each_database
def test_the_host_makes_jurors_downloads_their_links_and_sees_who_finished(app, db_factory, finished):
    client = host(app)
    session_page = f"/host/sessions/{finished.session_id}"
    base = f"{session_page}/displaced"
    stranger = app.test_client()
    refused = post_form(stranger, "/host/login", f"{base}/jurors", count="2")
    assert refused.status_code == 302 and "/host/login" in refused.headers["Location"]  # the host's only
    assert client.post(f"{base}/jurors", data={"count": "2"}).status_code == 400  # no CSRF token
    made = post_form(client, session_page, f"{base}/jurors", count="3", rounds="1", attention="1")
    assert made.status_code == 302 and "batch=" in made.headers["Location"]
    page = client.get(made.headers["Location"]).get_data(as_text=True)
    assert "3 displaced jurors made." in page and "The links just made" in page
    shown = re.findall(r"<strong>(D\d+)</strong> <a class=\"person-link\" href=\"([^\"]+)\"", page)
    assert [label for label, _url in shown] == ["D001", "D002", "D003"]
    batch = re.search(r"batch=(\d+)", made.headers["Location"]).group(1)
    download = client.get(f"{base}/links/{batch}/jurors.csv")
    assert download.status_code == 200 and download.mimetype == "text/csv"
    assert "attachment" in download.headers["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(download.get_data(as_text=True))))
    assert rows == [["label", "url"], *[[label, url] for label, url in shown]]
    with db_factory() as db:
        jurors = db.scalars(select(Juror).where(Juror.jury == Jury.DISPLACED).order_by(Juror.label)).all()
        assert [(j.rounds, j.link_id) for j in jurors] == [([1], int(batch))] * 3
    assert app.test_client().get(f"{base}/links/{batch}/jurors.csv").status_code == 302  # host only

    # one juror finishes: the vote of round 1 and the attention line
    juror = Role(socketio, app, {"token": shown[0][1].rsplit("/", 1)[1]})
    snapshot = juror.last("snapshot")
    assert juror.send("vote", {"id": client_id(), "round": 1, "alias": None})["ok"]
    last = juror.send("attention", {"id": client_id(), "value": snapshot["attention"]["asks"]})
    assert last["ok"] and last["completion_code"]
    juror.client.disconnect()
    counts = re.search(r'data-jurors="(\d+)" data-finished="(\d+)"', client.get(session_page).get_data(as_text=True))
    assert counts.groups() == ("3", "1")

    bad = post_form(client, session_page, f"{base}/jurors", count="0")
    assert "The number of jurors must be from 1 to 10,000." in client.get(bad.headers["Location"]).get_data(
        as_text=True
    )
    wrong = post_form(client, session_page, f"{base}/jurors", count="2", rounds="7")
    assert "among 1, 2" in client.get(wrong.headers["Location"]).get_data(as_text=True)


@pytest.mark.each_database
def test_the_host_makes_an_open_link_and_closes_it(app, db_factory, finished):
    client = host(app)
    session_page = f"/host/sessions/{finished.session_id}"
    made = post_form(client, session_page, f"{session_page}/displaced/links", cap="5", rounds="")
    page = client.get(made.headers["Location"]).get_data(as_text=True)
    url = re.search(r"Open link made: (\S+/jury/open/[\w-]+)", page).group(1)
    token = url.rsplit("/", 1)[1]
    assert post_form(app.test_client(), f"/jury/open/{token}", f"/jury/open/{token}").status_code == 302
    page = client.get(session_page).get_data(as_text=True)
    row = re.search(r'<tr data-open-link="(\d+)">(.*?)</tr>', page, re.S)
    assert url in row.group(2) and re.search(r'class="num arrivals">1 / 5<', row.group(2))
    closed = post_form(client, session_page, f"{session_page}/displaced/links/{row.group(1)}/close")
    page = client.get(closed.headers["Location"]).get_data(as_text=True)
    assert "Open link closed after 1 arrival." in page
    assert app.test_client().get(f"/jury/open/{token}").status_code == 410
    assert client.post(f"/host/sessions/{finished.session_id + 99}/displaced/links/1/close").status_code in (400, 404)
