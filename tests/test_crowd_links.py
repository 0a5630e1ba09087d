"""An open displaced link on a crowd platform: one juror per person (their browser, or the platform's participant id
on any device), the participant ids stored and exported, and the end of the task sending the juror back to the
platform with their completion code.

Found before: pressing Start again in the same browser made a second juror (D006 after D004), so
one person used two cap slots and could have two completion codes; nothing a platform passes on the link was kept.
"""

from __future__ import annotations

import threading
from urllib.parse import quote

import pytest
from sqlalchemy import func, select

from tests.support.apps import form_token, login
from tests.support.live import Role, client_id
from tests.support.review import play_session
from vtt.extensions import socketio
from vtt.juries.displaced import Arrival, IdParams, JuryError, arrive, check_complete_url, open_link
from vtt.models import Juror, Jury, JuryLink, VttSession

PID = "5f8a1b2c3d4e5f6a7b8c9d0e"  # a Prolific participant id: 24 hex digits
PROLIFIC_QUERY = f"PROLIFIC_PID={PID}&STUDY_ID=65aa00bb11cc22dd33ee44ff&SESSION_ID=s-0001"
DONE_URL = "https://app.prolific.com/submissions/complete?cc={code}"


@pytest.fixture
def played(backend):
    app, db_factory = backend
    return app, db_factory, play_session(app, db_factory)


def make_link(db_factory, session_id: int, cap: int | None = None, **options) -> str:
    with db_factory() as db:
        link = open_link(db, db.get(VttSession, session_id), cap, **options)
        db.commit()
        return link.token


def displaced_jurors(db_factory) -> list[Juror]:
    with db_factory() as db:
        rows = db.scalars(select(Juror).where(Juror.jury == Jury.DISPLACED).order_by(Juror.label)).all()
        db.expunge_all()
        return rows


def start(client, url: str):
    """The open link's page, then Start, as a browser does (the form posts to the page's own address)."""
    return client.post(url, data={"csrf_token": form_token(client, url)})


def juror_token(response) -> str:
    assert response.status_code == 302, response.get_data(as_text=True)
    return response.headers["Location"].rsplit("/", 1)[1]


def test_start_pressed_again_in_the_same_browser_gives_the_same_juror(played):
    """Found: the second Start made D002 for the same person (a second cap slot, a second completion code)."""
    app, db_factory, people = played
    token = make_link(db_factory, people.session_id, cap=2)
    browser = app.test_client()
    url = f"/jury/open/{token}"
    csrf = form_token(browser, url)
    first = juror_token(browser.post(url, data={"csrf_token": csrf}))
    again = juror_token(browser.post(url, data={"csrf_token": csrf}))  # the Back button, then Start again
    assert again == first
    assert juror_token(browser.get(url)) == first  # coming back to the link: straight to their own juror
    jurors = displaced_jurors(db_factory)
    assert [(j.label, j.token) for j in jurors] == [("D001", first)]
    other = app.test_client()  # another person: the second (and last) cap slot
    assert juror_token(start(other, url)) != first
    assert [j.label for j in displaced_jurors(db_factory)] == ["D001", "D002"]
    # the link is full now, and each of the two still gets their own juror back
    assert app.test_client().get(url).status_code == 410
    assert juror_token(browser.get(url)) == first
    assert juror_token(browser.post(url, data={"csrf_token": csrf})) == first


def test_the_browsers_key_is_unguessable_kept_per_link_and_a_forged_one_is_ignored(played):
    app, db_factory, people = played
    token = make_link(db_factory, people.session_id)
    other_link = make_link(db_factory, people.session_id)
    browser = app.test_client()
    page = browser.get(f"/jury/open/{token}")
    cookie = next(value for value in page.headers.getlist("Set-Cookie") if value.startswith("vtt_arrival="))
    assert f"Path=/jury/open/{token}" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert len(cookie.split(";")[0].split("=", 1)[1]) >= 32
    first = juror_token(start(browser, f"/jury/open/{token}"))
    # the other link of the same session does not know this browser: Start there is another juror
    assert juror_token(start(browser, f"/jury/open/{other_link}")) != first
    forged = app.test_client()
    forged.set_cookie("vtt_arrival", "<script>" + "x" * 70, path=f"/jury/open/{token}")
    assert forged.get(f"/jury/open/{token}").status_code == 200  # no juror of theirs: the Start page
    assert juror_token(start(forged, f"/jury/open/{token}")) not in (first,)
    assert len(displaced_jurors(db_factory)) == 3


def test_a_participant_id_brings_the_participant_back_to_their_juror_on_any_device(played):
    app, db_factory, people = played
    token = make_link(db_factory, people.session_id, cap=5)
    url = f"/jury/open/{token}?{PROLIFIC_QUERY}"
    laptop = juror_token(start(app.test_client(), url))
    phone = app.test_client()  # another device: no cookie of the laptop's, the same participant id
    csrf = form_token(phone, f"/jury/open/{token}")
    assert juror_token(phone.get(url)) == laptop
    assert juror_token(phone.post(url, data={"csrf_token": csrf})) == laptop
    (juror,) = displaced_jurors(db_factory)
    assert (juror.token, juror.participant_id, juror.platform_study_id, juror.platform_session_id) == (
        laptop,
        PID,
        "65aa00bb11cc22dd33ee44ff",
        "s-0001",
    )
    # the laptop's browser, opened by another participant: the participant id says who it is
    other = f"/jury/open/{token}?PROLIFIC_PID=600000000000000000000001&STUDY_ID=65aa00bb11cc22dd33ee44ff"
    assert juror_token(start(phone, other)) != laptop
    assert [j.participant_id for j in displaced_jurors(db_factory)] == [PID, "600000000000000000000001"]


def test_the_parameter_names_are_the_links_own(played):
    """Another platform (MTurk's workerId, hitId, assignmentId): the names come from the link, and Prolific's are
    then only other query parameters."""
    app, db_factory, people = played
    mturk = IdParams("workerId", "hitId", "assignmentId")
    token = make_link(db_factory, people.session_id, ids=mturk)
    made = juror_token(start(app.test_client(), f"/jury/open/{token}?workerId=A1B2C3&hitId=H9&assignmentId=AS7"))
    assert juror_token(app.test_client().get(f"/jury/open/{token}?workerId=A1B2C3")) == made
    juror_token(start(app.test_client(), f"/jury/open/{token}?PROLIFIC_PID={PID}"))
    jurors = displaced_jurors(db_factory)
    assert [(j.participant_id, j.platform_study_id, j.platform_session_id) for j in jurors] == [
        ("A1B2C3", "H9", "AS7"),
        (None, None, None),
    ]
    none_read = make_link(db_factory, people.session_id, ids=IdParams(None, None, None))
    juror_token(start(app.test_client(), f"/jury/open/{none_read}?{PROLIFIC_QUERY}"))
    assert displaced_jurors(db_factory)[-1].participant_id is None
    with db_factory() as db, pytest.raises(JuryError, match="parameter names"):
        open_link(db, db.get(VttSession, people.session_id), None, ids=IdParams("worker id", "hit", "a"))
    with db_factory() as db, pytest.raises(JuryError, match="differ"):
        open_link(db, db.get(VttSession, people.session_id), None, ids=IdParams("pid", "pid", None))


@pytest.mark.parametrize(
    "hostile",
    [
        "{{%PROLIFIC_PID%}}",  # the platform's placeholder, never filled in (a preview, a test link)
        "a" * 65,
        "<script>alert(1)</script>",
        "5f8a 1b2c",
        "5f8a\u00e91b2c",
        "../../etc/passwd",
    ],
)
def test_a_hostile_participant_id_is_refused_plainly_and_makes_nobody(app, db_factory, hostile):
    people = play_session(app, db_factory)
    token = make_link(db_factory, people.session_id)
    client = app.test_client()
    url = f"/jury/open/{token}?PROLIFIC_PID={quote(hostile)}"
    page = client.get(url)
    text = page.get_data(as_text=True)
    assert page.status_code == 400 and "The participant id on this link (PROLIFIC_PID) is not valid" in text
    assert "<script>alert" not in text and 'id="start"' not in text
    posted = client.post(url, data={"csrf_token": form_token(client, f"/jury/open/{token}")})
    assert posted.status_code == 400
    assert displaced_jurors(db_factory) == []
    with db_factory() as db, pytest.raises(JuryError, match="PROLIFIC_PID"):
        arrive(db, token, Arrival(participant_id=hostile))


def test_a_hostile_study_or_session_id_is_refused_too(app, db_factory):
    people = play_session(app, db_factory)
    token = make_link(db_factory, people.session_id)
    page = app.test_client().get(f"/jury/open/{token}?PROLIFIC_PID={PID}&SESSION_ID={'x' * 200}")
    assert page.status_code == 400 and "(SESSION_ID) is not valid" in page.get_data(as_text=True)
    korean = app.test_client().get(f"/jury/open/{token}?STUDY_ID=a%3Bb&lang=ko")
    assert korean.status_code == 400 and "(STUDY_ID)" in korean.get_data(as_text=True)
    assert "올바르지 않습니다" in korean.get_data(as_text=True)
    assert displaced_jurors(db_factory) == []


def test_starts_at_once_from_one_participant_make_one_juror(played):
    """Ten presses of Start at one moment, two from each of five participants, on a link capped at five: five
    jurors, one each, and both presses of a participant get the same juror (the link row is locked first)."""
    app, db_factory, people = played
    token = make_link(db_factory, people.session_id, cap=5)
    start_line = threading.Barrier(10)
    outcomes: list[tuple[str, str]] = []

    def press(participant: str) -> None:
        with db_factory() as db:
            start_line.wait()
            try:
                made = arrive(db, token, Arrival(participant_id=participant))
                db.commit()
                outcomes.append((participant, made.label))
            except Exception as error:
                outcomes.append((participant, f"{type(error).__name__}: {error}"))

    participants = [f"P{n}" for n in range(5)] * 2
    threads = [threading.Thread(target=press, args=(participant,)) for participant in participants]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(outcomes) == 10 and all(label.startswith("D") for _, label in outcomes), outcomes
    by_participant: dict[str, set[str]] = {}
    for participant, label in outcomes:
        by_participant.setdefault(participant, set()).add(label)
    assert all(len(labels) == 1 for labels in by_participant.values()), by_participant
    jurors = displaced_jurors(db_factory)
    assert sorted(j.participant_id for j in jurors) == [f"P{n}" for n in range(5)]
    assert sorted(j.label for j in jurors) == ["D001", "D002", "D003", "D004", "D005"]


def test_double_start_from_one_browser_at_once_makes_one_juror(played):
    """A double click: two Starts carrying the browser's key arrive together; one juror."""
    app, db_factory, people = played
    token = make_link(db_factory, people.session_id, cap=3)
    start_line = threading.Barrier(2)
    labels: list[str] = []

    def press() -> None:
        with db_factory() as db:
            start_line.wait()
            labels.append(arrive(db, token, Arrival(browser_key="k" * 43)).label)
            db.commit()

    threads = [threading.Thread(target=press) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert labels == ["D001", "D001"]
    with db_factory() as db:
        assert db.scalar(select(func.count()).select_from(Juror).where(Juror.jury == Jury.DISPLACED)) == 1


def test_the_participant_ids_are_in_the_jurors_export(played):
    app, db_factory, people = played
    token = make_link(db_factory, people.session_id)
    juror_token(start(app.test_client(), f"/jury/open/{token}?{PROLIFIC_QUERY}"))
    juror_token(start(app.test_client(), f"/jury/open/{token}"))  # someone who came without the platform
    from vtt.results.export import export_tables

    with db_factory() as db:
        jurors = export_tables(db, db.get(VttSession, people.session_id))["jurors.csv"]
    shown = jurors[jurors["jury"] == "displaced"].set_index("juror")
    assert shown.loc["D001", "participant_id"] == PID
    assert shown.loc["D001", "platform_study_id"] == "65aa00bb11cc22dd33ee44ff"
    assert shown.loc["D001", "platform_session_id"] == "s-0001"
    assert shown[["participant_id", "platform_study_id", "platform_session_id"]].loc["D002"].isna().all()
    assert jurors[jurors["jury"] == "live"]["participant_id"].isna().all()
    assert "browser_key" not in jurors.columns  # a login of sorts: never exported


def finish_task(app, token: str) -> str:
    juror = Role(socketio, app, {"token": token})
    snapshot = juror.last("snapshot")
    replies = [juror.send("vote", {"id": client_id(), "round": c["round"], "alias": None}) for c in snapshot["rounds"]]
    juror.client.disconnect()
    assert replies[-1]["ok"] and replies[-1]["completion_code"], replies
    return replies[-1]["completion_code"]


def test_the_end_of_the_task_sends_the_juror_back_to_the_platform_with_their_code(played):
    app, db_factory, people = played
    token = make_link(db_factory, people.session_id, complete_url=DONE_URL)
    browser = app.test_client()
    made = juror_token(start(browser, f"/jury/open/{token}?{PROLIFIC_QUERY}"))
    page = browser.get(f"/jury/{made}").get_data(as_text=True)
    assert f'id="return" href="/jury/{made}/complete"' in page
    early = browser.get(f"/jury/{made}/complete")
    assert early.status_code == 409 and "not finished" in early.get_data(as_text=True)
    code = finish_task(app, made)
    done = browser.get(f"/jury/{made}/complete")
    assert done.status_code == 302 and done.headers["Location"] == DONE_URL.replace("{code}", code)
    # no address of the request's own is followed: the only place it sends anyone is the host's URL
    sneaky = browser.get(f"/jury/{made}/complete?next=https://evil.example/&url=https://evil.example/")
    assert sneaky.headers["Location"] == DONE_URL.replace("{code}", code)
    assert app.test_client().get("/jury/no-such-juror/complete").status_code == 404
    plain = make_link(db_factory, people.session_id)  # no completion URL: the page shows the code, nothing more
    other = juror_token(start(app.test_client(), f"/jury/open/{plain}"))
    assert 'id="return"' not in app.test_client().get(f"/jury/{other}").get_data(as_text=True)
    finish_task(app, other)
    assert app.test_client().get(f"/jury/{other}/complete").status_code == 404


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("javascript:alert('{code}')", "http or https"),
        ("ftp://example.org/{code}", "http or https"),
        ("//example.org/done?cc={code}", "http or https"),
        ("https://example.org/done", "{code}"),
        ("https:///done?cc={code}", "host"),
        ("https://prolific.com@evil.example/done?cc={code}", "user name"),
        ("https://{code}.example.org/", "{code}"),
        ("https://example.org/done?cc={code}&x={other}", "braces"),
        ("https://example.org/done?cc={code} ", None),  # trailing space: stripped, accepted
        ("https://example.org/do ne?cc={code}", "spaces"),
        ("https://example.org/done?cc={code}\r\nLocation: https://evil.example", "spaces"),
        ("https://example.org/" + "a" * 2000 + "?cc={code}", "2,000"),
    ],
)
def test_completion_urls_are_checked(url, why):
    if why is None:
        assert check_complete_url(url) == url.strip()
        return
    with pytest.raises(JuryError, match=f"^completion URL: .*{why}") as refused:
        check_complete_url(url)
    assert refused.value.code == "bad_complete_url"


def test_the_command_line_sets_the_completion_url_and_the_parameter_names(app, db_factory, run):
    import json

    people = play_session(app, db_factory)
    opened = run(
        "jury",
        "displaced",
        people.code,
        "--open",
        "100",
        "--complete-url",
        DONE_URL,
        "--json",
        "--base-url",
        "https://vtt.example.org",
    )
    assert opened.exit_code == 0, opened.output
    shown = json.loads(opened.output)
    assert shown["complete_url"] == DONE_URL
    assert shown["participant_params"] == {"participant": "PROLIFIC_PID", "study": "STUDY_ID", "session": "SESSION_ID"}
    words = run("jury", "displaced", people.code, "--open", "0", "--participant-param", "workerId", "--study-param", "")
    assert words.exit_code == 0, words.output
    assert "participant id from workerId" in words.output and "session id from SESSION_ID" in words.output
    with db_factory() as db:
        links = db.scalars(select(JuryLink).order_by(JuryLink.id)).all()
        assert [(k.complete_url, k.participant_param, k.study_param, k.session_param) for k in links] == [
            (DONE_URL, "PROLIFIC_PID", "STUDY_ID", "SESSION_ID"),
            (None, "workerId", None, "SESSION_ID"),
        ]
    batch = run("jury", "displaced", people.code, "--jurors", "2", "--complete-url", DONE_URL, "--json")
    assert batch.exit_code == 0, batch.output
    bad = run("jury", "displaced", people.code, "--open", "5", "--complete-url", "javascript:alert(1)")
    assert bad.exit_code == 1 and "--complete-url: " in bad.output and "http or https" in bad.output
    wrong = run("jury", "displaced", people.code, "--open", "5", "--participant-param", "worker id")
    assert wrong.exit_code == 1 and "parameter names" in wrong.output
    with db_factory() as db:
        assert db.scalar(select(func.count()).select_from(JuryLink)) == 3  # the refused ones made nothing


@pytest.mark.each_database
def test_the_session_pages_open_link_form_takes_the_completion_url_and_the_names(app, db_factory):
    people = play_session(app, db_factory)
    host = app.test_client()
    login(host)
    session_page = f"/host/sessions/{people.session_id}"
    page = host.get(session_page).get_data(as_text=True)
    assert 'name="complete_url"' in page and 'value="PROLIFIC_PID"' in page

    def make(**fields):
        data = {"csrf_token": form_token(host, session_page), "cap": "50", "rounds": "", **fields}
        return host.get(host.post(f"{session_page}/displaced/links", data=data).headers["Location"])

    made = make(
        complete_url=DONE_URL, participant_param="PROLIFIC_PID", study_param="STUDY_ID", session_param="SESSION_ID"
    )
    assert "Open link made" in made.get_data(as_text=True)
    refused = make(complete_url="https://example.org/done", participant_param="PROLIFIC_PID")
    assert "{code}" in refused.get_data(as_text=True) and "Open link made" not in refused.get_data(as_text=True)
    named = make(complete_url="", participant_param="workerId", study_param="hitId", session_param="assignmentId")
    assert "Open link made" in named.get_data(as_text=True)
    bad_name = make(participant_param="a&b=c")
    assert "parameter names" in bad_name.get_data(as_text=True)
    with db_factory() as db:
        links = db.scalars(select(JuryLink).order_by(JuryLink.id)).all()
        assert [(k.complete_url, k.participant_param, k.study_param, k.session_param) for k in links] == [
            (DONE_URL, "PROLIFIC_PID", "STUDY_ID", "SESSION_ID"),
            (None, "workerId", "hitId", "assignmentId"),
        ]
    page = host.get(session_page).get_data(as_text=True)
    assert "returns to https://app.prolific.com/submissions/complete?cc={code}" in page


def test_two_open_links_and_a_batch_of_one_session_at_once_number_their_jurors_apart(played):
    """Start pressed at one moment on two open links of one finished session while the host makes a batch of jurors:
    every press gets a juror, every juror a label of its own.  Found on PostgreSQL: 20 of 60 such presses were HTTP
    500s (``UniqueViolation uq_juror_session_id_label``): each link locked its own row, but the labels are numbered
    across the session, so two links (or a batch) read the same next label."""
    app, db_factory, people = played
    tokens = [make_link(db_factory, people.session_id) for _ in range(2)]
    presses_per_link, batch = 6, 4
    browsers = []
    for number in range(2 * presses_per_link):  # each from an address of its own: a crowd, not a script
        browser = app.test_client()
        browser.environ_base["REMOTE_ADDR"] = f"198.51.100.{number + 1}"
        url = f"/jury/open/{tokens[number % 2]}"
        browsers.append((browser, url, form_token(browser, url)))
    host = app.test_client()
    login(host)
    session_page = f"/host/sessions/{people.session_id}"
    batch_form = {"csrf_token": form_token(host, session_page), "count": str(batch), "rounds": ""}
    start_line = threading.Barrier(len(browsers) + 1)
    statuses: list[str] = []

    def post(client, url: str, data: dict) -> None:
        start_line.wait()
        try:
            statuses.append(str(client.post(url, data=data).status_code))
        except Exception as error:  # a server error, raised through the test client
            statuses.append(f"{type(error).__name__}: {error}")

    def press(browser, url: str, csrf: str) -> None:
        post(browser, url, {"csrf_token": csrf})

    def make_batch() -> None:
        post(host, f"{session_page}/displaced/jurors", batch_form)

    threads = [threading.Thread(target=press, args=each) for each in browsers] + [threading.Thread(target=make_batch)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert statuses == ["302"] * len(threads), statuses
    labels = [j.label for j in displaced_jurors(db_factory)]
    made = len(browsers) + batch
    assert labels == [f"D{number:03d}" for number in range(1, made + 1)]
    with db_factory() as db:
        batch_link = db.scalar(select(JuryLink).where(JuryLink.token.not_in(tokens)))
        assert db.scalar(select(func.count()).select_from(Juror).where(Juror.link_id == batch_link.id)) == batch
