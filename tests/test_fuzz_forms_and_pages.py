"""Hypothesis fuzz of every HTTP form and GET route: never an HTTP 500, a clear refusal, and nothing written for
what was refused.  The values and sessions are in ``tests/support/fuzz.py``."""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from tests.support.apps import HOST_PASSWORD, threaded_app
from tests.support.fuzz import (
    FUZZ,
    Room,
    changed,
    table_counts,
)
from tests.support.live import client_id

# --- 2. HTTP forms and pages -----------------------------------------------------------------------------------

FORM_TEXT = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=40),
    st.sampled_from(
        [
            "",
            " ",
            "\x00",
            "a\x00b",
            "0",
            "1",
            "2",
            "5",
            "6",
            "-1",
            "1.5",
            "1,5",
            "1e9",
            "nan",
            "inf",
            "²",
            "٣",
            "１２",
            "9" * 13,
            "9" * 40,
            "x" * 31,
            "x" * 41,
            "x" * 61,
            "x" * 65,
            "x" * 201,
            "x" * 5000,
            "on",
            "yes",
            "no",
            "true",
            "A",
            "B",
            "C",
            "abstain",
            "J1",
            "human",
            "ai",
            "mcq",
            "open",
            "list",
            "csv",
            "count",
            "auto",
            "leave",
            "<b>",
            "http://",
            "https://evil.example",
            "//evil",
            "/host/",
            "\r\n",
            "한국어",
            "😀",
        ]
    ),
)
# Numbers as a form may carry them: str.isdigit() holds for '²' (int() refuses it), '٣' and '１２' are digits too.
NUMBERISH = st.one_of(
    st.sampled_from(
        [
            "²",
            "³²",
            "٣",
            "１２",
            "⁵",
            "0",
            "-0",
            "+1",
            "01",
            " 1 ",
            "1_000",
            "9" * 19,
            "9" * 40,
            "-9" * 10,
            "1e3",
            "0x10",
            "½",
            "Ⅻ",
            "𝟙",
        ]
    ),
    st.integers(-(2**70), 2**70).map(str),
)
FORM_VALUE = st.one_of(FORM_TEXT, NUMBERISH)
UPLOAD = st.tuples(
    st.one_of(
        st.binary(max_size=300),
        st.sampled_from(
            [
                b"",
                b"\x00" * 50,
                b"\xff\xfe\x00",
                b'qid,question\n1,"x\n',
                b"PK\x03\x04" + b"\x00" * 40,
                b'{"a":',
                b"[1,2,3]",
                b"\xef\xbb\xbfqid,question,answer\nq1,x,y\n",
                "ä,ö\n\x00".encode("utf-16"),
                b"qid,question,choices,answer\nq1,What?,a|b,9\n",
            ]
        ),
    ),
    st.one_of(
        st.sampled_from(
            [
                "bank.csv",
                "bank.json",
                "bank.jsonl",
                "bank.xlsx",
                "bank.tsv",
                "x",
                ".csv",
                "../../etc/passwd.csv",
                "a\x00b.csv",
                "j.csv",
                "p.jsonl",
                "p.json",
                "",
                "x" * 300 + ".csv",
            ]
        ),
        st.text(st.characters(exclude_categories=("Cs",)), max_size=20),
    ),
)


@pytest.fixture
def site(database_url, db_factory):
    """An app with CSRF off, a signed-in host, and a session played to its first vote
    (answers to an open question, to grade; a vote open, for the paper form)."""
    app = threaded_app(database_url, WTF_CSRF_ENABLED=False)
    client = app.test_client()
    assert client.post("/host/login", data={"password": HOST_PASSWORD}).status_code == 302
    room = Room(app, client, db_factory)
    host_role, players = room.roles["host"], (room.roles["player"], room.roles["ai"])
    for move in ("open_lobby", "start_round"):
        host_role.host(move)
    for _ in range(2):
        host_role.host("show_question")
        host_role.host("open_answering")
        question = host_role.fresh_snapshot()["question"]
        for player in players:
            answer = {"choice": 1} if question["type"] == "mcq" else {"text": "she is jealous"}
            assert player.send("answer", {"id": client_id(), "question": question["id"], **answer})["ok"]
        host_role.host("close_answering")
        host_role.host("reveal")
    host_role.host("open_vote")
    yield app, client, room
    app.extensions["vtt.hub"].stop()


def _form_fields(draw, names: list[str]) -> dict[str, Any]:
    """Some of ``names`` (missing fields too), each arbitrary text, sometimes given twice."""
    fields: dict[str, Any] = {}
    for name in names:
        if draw(st.integers(0, 3)):
            fields[name] = draw(st.one_of(FORM_VALUE, st.lists(FORM_VALUE, min_size=2, max_size=3)))
    for name in draw(st.lists(st.one_of(FORM_TEXT, st.sampled_from(["players-99999-name", "jurors-1-x"])), max_size=2)):
        fields[name] = draw(FORM_TEXT)
    return fields


def _file(draw, field: str) -> dict[str, Any]:
    if not draw(st.booleans()):
        return {}
    content, name = draw(UPLOAD)
    return {field: (io.BytesIO(content), name)}


FORMS = (
    "login",
    "logout",
    "upload",
    "base_url",
    "participants",
    "new_link",
    "new_session",
    "join",
    "grader",
    "mark",
    "final",
    "settle",
    "paper",
    "agent_answer",
)


def form_request(draw, form: str, room: Room) -> tuple[str, dict[str, Any]]:
    sid = draw(st.one_of(st.just(room.people.session_id), st.sampled_from([0, 999_999, 2**31])))
    pid = draw(st.one_of(st.sampled_from(sorted(room.people.player_ids.values())), st.just(999_999)))
    lines = [f"line-{q}-{a}-{f}" for q in (1, 2) for a in "ABC" for f in ("note", "likeness", "ai")]
    match form:
        case "login":
            return f"/host/login?next={draw(FORM_TEXT)}", _form_fields(draw, ["password"])
        case "logout":
            return "/host/logout", {}
        case "upload":
            return "/host/banks/upload", {
                **_form_fields(draw, ["bank", "format", "strict", "allow_missing_keys"]),
                **_file(draw, "file"),
            }
        case "base_url":
            return "/host/join-base-url", _form_fields(draw, ["base_url", "next", "reset"])
        case "participants":
            number = draw(st.sampled_from([1, 2, 3, 0, 10**6]))
            fields = _form_fields(draw, ["players"])
            if draw(st.booleans()):
                fields["players"] = [
                    str(p) for p in draw(st.lists(st.sampled_from(sorted(room.people.player_ids.values())), max_size=3))
                ] + draw(st.lists(FORM_VALUE, max_size=2))
            return f"/host/sessions/{sid}/rounds/{number}/participants", fields
        case "new_link":
            fields = _form_fields(draw, ["player", "juror"])
            if draw(st.booleans()):
                fields = draw(st.sampled_from([{"player": str(pid)}, {"juror": "J2"}, {"juror": "nobody"}]))
            return f"/host/sessions/{sid}/new-link", fields
        case "new_session":
            names = [
                "name",
                "bank",
                "rounds",
                "questions_per_round",
                "seed",
                "answer_seconds",
                "vote_seconds",
                "ai_votes_per_juror",
                "pass_alpha",
                "pass_threshold_pct",
                "reveal_policy",
                "pass_rule",
                "scoring_method",
                "clip_playback",
                "jurors_source",
                "jurors_count",
                "round_themes",
                "open_join",
                *[f"players-{n}-{f}" for n in (0, 1, 9999) for f in ("name", "kind", "age", "stage", "mcq", "open")],
                *[f"jurors-{n}-{f}" for n in (0, 1) for f in ("label", "age_band", "sex", "expert", "paper")],
            ]
            fields = _form_fields(draw, names)
            if draw(st.booleans()):  # close to a form that is accepted, one field off
                base = {
                    "name": client_id("form"),
                    "bank": "Demo drama bank",
                    "rounds": "1",
                    "questions_per_round": "1",
                    "jurors_source": draw(st.sampled_from(["count", "list", "csv"])),
                    "jurors_count": "2",
                    "players-0-name": "Ann",
                    "players-0-kind": "human",
                    "players-1-name": "Bot",
                    "players-1-kind": "ai",
                    "jurors-0-label": "J1",
                    "reveal_policy": "end",
                    "pass_rule": "human_tie",
                    "scoring_method": "cogsci2024",
                    "clip_playback": "host",
                }
                fields = {**base, **dict(list(fields.items())[:1])}
                if draw(st.booleans()):
                    fields["jurors_count"] = draw(FORM_VALUE)
            return "/host/sessions/new", {**fields, **_file(draw, "jurors_csv")}
        case "join":
            code = draw(st.one_of(st.just(room.people.code), FORM_TEXT.filter(lambda t: t.strip("/") == t and t)))
            return f"/join/{_quote(code)}", _form_fields(draw, ["nickname", "door"])
        case "grader":
            return f"/host/sessions/{sid}/grading/grader", _form_fields(draw, ["grader", "action"])
        case "mark" | "final" | "settle":
            fields = _form_fields(
                draw,
                ["answer_id", "correct", "accuracy", "comprehensiveness", "depth", "evidence", "coherence", "show"],
            )
            if draw(st.booleans()):
                fields["answer_id"] = str(draw(st.integers(1, 8)))
            return f"/host/sessions/{sid}/grading/{form}", fields
        case "paper":
            fields = _form_fields(
                draw,
                [
                    "juror",
                    "round",
                    "entry",
                    *lines,
                    *[f"vote-{s}-{f}" for s in (1, 2) for f in ("alias", "confidence", "reason")],
                ],
            )
            return f"/host/sessions/{sid}/paper", fields
        case "agent_answer":
            return f"/host/sessions/{sid}/agents/{pid}/answer", {**_form_fields(draw, ["entry"]), **_file(draw, "file")}
    raise AssertionError(form)


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


# A refusal's status: nothing may have been written (409 of the paper form may follow a part that was saved).
REFUSALS = {400, 401, 403, 404, 405, 413, 422, 429}


def post_and_check(client, db_factory, path: str, fields: dict[str, Any], *, json_reply: bool = False):
    before = table_counts(db_factory)
    headers = {"Accept": "application/json"} if json_reply else {}
    response = client.post(path, data=fields, headers=headers, content_type="multipart/form-data")
    note(f"POST {path} {fields!r} -> {response.status_code}")
    assert response.status_code < 500, f"POST {path} {fields!r}: {response.status_code}"
    if response.status_code in REFUSALS:
        after = table_counts(db_factory)
        assert after == before, f"refused POST {path} ({response.status_code}) wrote {changed(before, after)}"
    return response


@settings(FUZZ, max_examples=400)
@given(data=st.data())
def test_every_form_refuses_bad_input_clearly_and_writes_nothing(site, db_factory, data):
    app, client, room = site
    form = data.draw(st.sampled_from(FORMS), label="form")
    path, fields = form_request(data.draw, form, room)
    signed_in = form != "logout" and data.draw(st.integers(0, 9), label="signed in") > 0
    with client.session_transaction() as cookie:
        cookie.clear()
        if signed_in:
            cookie["host"] = True
        if form in ("mark", "final", "settle") and data.draw(st.booleans(), label="grader"):
            cookie["grader"] = data.draw(FORM_TEXT, label="grader name")
    post_and_check(client, db_factory, path, fields, json_reply=data.draw(st.booleans(), label="json"))


GET_ROUTES = (
    "/play/{t}",
    "/jury/{t}",
    "/join/{t}",
    "/stage/{t}",
    "/stage/{t}/join-qr.svg",
    "/host/banks/{n}",
    "/host/sessions/{n}",
    "/host/sessions/new",
    "/host/sessions/{n}/grading/",
    "/host/sessions/{n}/results/",
    "/host/sessions/{n}/results/files/{t}",
    "/host/sessions/{n}/results/export.zip",
    "/host/sessions/{n}/join-cards.pdf",
    "/host/sessions/{n}/paper-sheets.pdf",
    "/host/sessions/{n}/paper",
    "/host/sessions/{n}/live",
    "/host/sessions/{n}/clips",
    "/media/{t}",
    "/healthz",
    "/host/login",
    "/host/",
    "/{t}",
    "/host/{t}",
)
QUERY_KEYS = (
    "next",
    "bank",
    "element",
    "type",
    "clip",
    "q",
    "page",
    "show",
    "juror",
    "round",
    "lang",
    "key",
    "door",
    "rendition",
    "reset",
)


@settings(FUZZ, max_examples=200)
@given(data=st.data())
def test_every_page_with_any_path_and_query_is_not_a_server_error(site, data):
    from urllib.parse import urlencode

    app, client, room = site
    route = data.draw(st.sampled_from(GET_ROUTES), label="route")
    text = data.draw(
        st.one_of(
            FORM_TEXT.filter(bool),
            st.sampled_from(
                [
                    room.people.code,
                    room.people.players["Mina"],
                    room.people.jurors["J1"],
                    "report.pdf",
                    "tallies.pdf",
                    "report-csv.zip",
                    "clips/ep01_s003.mp4",
                    "../../etc/passwd",
                    "%00",
                    "..",
                    "a/../../b",
                ]
            ),
        ),
        label="text",
    )
    number = data.draw(
        st.one_of(st.just(room.people.session_id), st.sampled_from([0, 1, 2, 999_999, 2**63 - 1, 2**63, 10**30])),
        label="number",
    )
    path = route.format(
        t=_quote(text) if "media" not in route else text.replace("?", "%3F").replace("#", "%23"), n=number
    )
    query = data.draw(
        st.dictionaries(st.one_of(st.sampled_from(QUERY_KEYS), FORM_TEXT), FORM_TEXT, max_size=3), label="query"
    )
    if query.get("lang") is None and route.endswith("files/{t}"):
        query["lang"] = data.draw(st.sampled_from(["en", "ko", "xx", ""]), label="lang")
    with client.session_transaction() as cookie:
        cookie["host"] = data.draw(st.integers(0, 9), label="signed in") > 0
    response = client.get(f"{path}?{urlencode(query)}" if query else path)
    note(f"GET {path} {query!r} -> {response.status_code}")
    assert response.status_code < 500, f"GET {path}?{urlencode(query)}: {response.status_code}"


BEYOND_64_BITS = 2**63  # the bounded <int:...> of vtt.app.RowId: beyond it a route does not match


@pytest.mark.parametrize(
    "method, path",
    [
        ("GET", "/host/sessions/{n}/results/"),
        ("GET", "/host/sessions/{n}/live"),
        ("POST", "/host/sessions/1/agents/{n}/answer"),
    ],
)
def test_an_id_beyond_64_bits_is_not_found(site, method, path):
    _app, client, _room = site
    response = client.open(path.format(n=BEYOND_64_BITS), method=method)
    assert response.status_code == 404
