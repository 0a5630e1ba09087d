"""The host pages over HTTP: login, bank browser, session configuration."""

from __future__ import annotations

import re

import pytest

from tests.support.apps import HOST_PASSWORD, form_token, login
from tests.support.paths import DATA
from vtt.banks import import_bank, read_bank
from vtt.sessions.create import SessionConfig, create_session

PLAYERS = [
    {"name": "Minjun", "kind": "human", "age": 10, "stage": "middle concrete operational"},
    {"name": "지수", "kind": "human", "age": 24, "stage": "formal operational"},
    {"name": "Agent", "kind": "ai", "backends": {"mcq": "mcq-model", "open": "open-model"}},
]


@pytest.fixture
def spec_bank(db):
    bank = import_bank(db, read_bank(DATA / "spec_examples.csv"), "Spec <examples>")
    db.commit()
    return bank


@pytest.mark.each_database
def test_pages_require_the_host(client, spec_bank):
    for path in ("/host/", f"/host/banks/{spec_bank.id}", "/host/sessions/1"):
        response = client.get(path)
        assert response.status_code == 302 and "/host/login" in response.headers["Location"]
    assert client.get("/").headers["Location"].endswith("/host/")
    health = client.get("/healthz").json
    assert health["status"] == "ok" and health["loop"]["watching"] is False  # only a served app watches its loop


def test_login_rejects_wrong_password_and_forged_forms(client):
    assert login(client, "nope").status_code == 401
    assert b"Wrong password." in login(client, "nope").data
    assert client.post("/host/login", data={"password": "x", "csrf_token": "forged"}).status_code == 400
    fresh = client.application.test_client()  # no session, no token: an empty token must not match
    assert fresh.post("/host/login", data={"password": HOST_PASSWORD}).status_code == 400
    response = login(client)
    assert response.status_code == 302 and response.headers["Location"] == "/host/"


@pytest.mark.each_database
def test_logout_needs_the_form_token(host):
    assert host.post("/host/logout").status_code == 400
    assert host.get("/host/").status_code == 200  # still signed in
    assert host.post("/host/logout", data={"csrf_token": form_token(host, "/host/")}).status_code == 302
    assert host.get("/host/").status_code == 302


def test_login_redirects_only_to_local_paths(client):
    response = client.post(
        "/host/login?next=//evil.example/x", data={"password": HOST_PASSWORD, "csrf_token": form_token(client)}
    )
    assert response.headers["Location"] == "/host/"


@pytest.mark.each_database
def test_dashboard_lists_banks_and_sessions(host, spec_bank):
    page = host.get("/host/").get_data(as_text=True)
    assert "Spec &lt;examples&gt;" in page and "<examples>" not in page  # names are escaped
    assert re.search(r">5</td>", page)


def test_bank_browser_shows_questions_tags_clips_and_balance(host, spec_bank):
    page = host.get(f"/host/banks/{spec_bank.id}").get_data(as_text=True)
    assert "Who is looking at Dokyung?" in page and "Why does Heeran envy Haeyoung1?" in page
    assert 'title="TARGET, key target">Object*</span>' in page
    assert "clips/AnotherMissOh01_001_0001.mp4" in page and "3.5–7 s" in page
    assert '<li class="correct">A white coat</li>' in page
    assert 'data-element="Character" data-count="5"' in page
    assert 'data-element="Recognition" data-count="2"' in page  # "Grasping" in the file
    assert '<span data-type="mcq">2 mcq</span>' in page and '<span data-clip="scene">2 scene</span>' in page
    assert "0 untagged" in page


def test_bank_browser_filters(host, spec_bank):
    def qids(query: str) -> list[str]:
        page = host.get(f"/host/banks/{spec_bank.id}?{query}").get_data(as_text=True)
        return re.findall(r'data-qid="([^"]+)"', page)

    assert qids("element=grasping") == ["q2", "q4"]
    assert qids("element=Emotion&type=open") == ["q3", "q5"]
    assert qids("clip=scene") == ["q4", "q5"]
    assert qids("q=Dokyung") == ["q2", "q4"]
    page = host.get(f"/host/banks/{spec_bank.id}?element=Colour").get_data(as_text=True)
    assert "No questions match: “Colour” is not a CogME element." in page
    assert qids("element=Colour") == [] and qids("type=essay") == [] and qids("clip=wide") == []
    assert "the type “essay” is unknown" in host.get(f"/host/banks/{spec_bank.id}?type=essay").get_data(as_text=True)
    assert host.get("/host/banks/999").status_code == 404


def test_session_page_shows_the_configuration(host, db, spec_bank):
    config = SessionConfig.from_dict(
        {
            "name": "Pilot",
            "bank": "Spec <examples>",
            "rounds": 1,
            "questions_per_round": 5,
            "seed": 7,
            "pass_rule": "chance",
            "reveal_policy": "per-round",
            "players": PLAYERS,
        }
    )
    vtt = create_session(db, config)
    db.commit()
    page = host.get(f"/host/sessions/{vtt.id}").get_data(as_text=True)
    assert "Pilot" in page and vtt.join_code in page and "<code>7</code>" in page
    assert "chance (α = 0.05)" in page and "after every round (most-voted player)" in page
    assert 'data-player="지수"' in page and "mcq: <code>mcq-model</code>" in page
    assert page.count('data-round="1"') == 1
    assert len(re.findall(r'<td data-label="#" class="num">[1-5]</td><td data-label="qid"><code>q', page)) == 5


def test_balance_counted_by_the_database_matches_the_analysis_module(db, spec_bank, tmp_path):
    from analysis.composition import composition
    from vtt.banks import bank_records, records_table
    from vtt.banks.store import bank_composition

    untagged = tmp_path / "more.csv"
    untagged.write_text("qid,question,answer\nu1,Untagged?,yes\n", encoding="utf-8")
    import_bank(db, read_bank(untagged), "Spec <examples>")
    by_sql, by_pandas = bank_composition(db, spec_bank), composition(records_table(bank_records(db, spec_bank)))
    assert by_sql.element_counts() == by_pandas.element_counts()
    assert (
        (by_sql.types, by_sql.clips, by_sql.total, by_sql.untagged)
        == (by_pandas.types, by_pandas.clips, 6, ["u1"])
        == (by_pandas.types, {"shot": 3, "scene": 2, "none": 1}, 6, ["u1"])
    )


def test_pagination_and_literal_search(host, db, spec_bank, tmp_path):
    many = tmp_path / "many.csv"
    many.write_text(
        "qid,question,answer\n" + "".join(f"m{i:03d},Question {i} at {i}%?,yes\n" for i in range(120)), encoding="utf-8"
    )
    bank_id = import_bank(db, read_bank(many), "Many").id
    db.commit()

    def qids(query: str) -> list[str]:
        return re.findall(r'data-qid="([^"]+)"', host.get(f"/host/banks/{bank_id}?{query}").get_data(as_text=True))

    assert len(qids("")) == 50 and qids("")[0] == "m000"
    assert qids("page=3") == [f"m{i:03d}" for i in range(100, 120)]
    assert qids("page=99999999999999999999") == qids("page=1")  # out of range: first page, not a 500
    assert qids("page=7") == qids("page=3")  # past the end: the last page
    assert qids("q=1%250") == [] and qids("q=_") == []  # "%" and "_" are literal, not wildcards
    assert qids("q=100%25") == ["m100"] and len(qids("q=%25")) == 50
