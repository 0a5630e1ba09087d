"""Access and headers: the login's redirect stays on this site, the login limit counts wrong passwords only and
refuses with a styled page that says when to try again, every answer carries the security headers, cookies are
Secure over HTTPS (behind a trusted proxy too), and no page of a session breaks under the CSP in Chromium."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from flask_babel import force_locale, ngettext
from sqlalchemy import select

from tests.support.apps import HOST_PASSWORD, form_token, threaded_app
from tests.support.browser import WAIT_MS, host_console, wait_connected
from tests.support.live import make_session
from tests.support.paths import ROOT
from tests.support.served import ServedApp
from vtt.config import Settings
from vtt.views.auth import local_path

DASHBOARD = "/host/"
JSON = {"Accept": "application/json"}


def post_login(client, password: str, query: str = "", **kwargs):
    token = form_token(client)
    return client.post("/host/login", query_string=query, data={"password": password, "csrf_token": token}, **kwargs)


# 1. The redirect after login --------------------------------------------------------------------------------

# As they arrive in the query string (percent-encoded, the way a link carries them).
EVIL_QUERIES = [
    "next=/%09/evil.example",  # a tab: browsers drop it, leaving //evil.example
    "next=//evil",
    "next=/%5Cevil",  # /\evil: a backslash reads as a slash
    "next=/%5C/evil",
    "next=%5C%5Cevil",
    "next=https://evil",
    "next=https:evil",
    "next=/%0d%0a//evil",
    "next=%09//evil",
    "next=/%0a/evil",
    "next=/%20/evil",
    "next=/%E3%80%80/evil",  # an ideographic space
    "next=javascript:alert(1)",
    "next=evil.example",
    "next=",
]


def test_the_dashboard_address_is_what_the_tests_expect(app):
    from flask import url_for

    with app.test_request_context("/"):
        assert url_for("host.dashboard") == DASHBOARD


@pytest.mark.parametrize("query", EVIL_QUERIES)
def test_login_never_redirects_off_the_site(client, query):
    response = post_login(client, HOST_PASSWORD, query)
    assert response.status_code == 302
    assert response.headers["Location"] == DASHBOARD


@pytest.mark.parametrize(
    "query, location",
    [
        ("next=/host/sessions/3?x=1", "/host/sessions/3?x=1"),
        ("next=%2Fhost%2Fsessions%2F3%3Fx%3D1", "/host/sessions/3?x=1"),
        ("next=/host/sessions/3/live", "/host/sessions/3/live"),
        ("next=/host/banks/2?element=Grasping&page=2", "/host/banks/2?element=Grasping"),  # & ends the next value
        ("next=%2Fhost%2Fbanks%2F2%3Felement%3DGrasping%26page%3D2", "/host/banks/2?element=Grasping&page=2"),
        ("next=/%2509/evil", "/%09/evil"),  # a literal "%09" in a path on this site: harmless
    ],
)
def test_login_goes_back_to_a_local_page(client, query, location):
    response = post_login(client, HOST_PASSWORD, query)
    assert response.status_code == 302 and response.headers["Location"] == location


@pytest.mark.parametrize(
    "target",
    [
        "/\t/evil.example",
        "//evil",
        "/\\evil",
        "\\\\evil",
        "https://evil",
        "/\r\n//evil",
        "\t//evil",
        "/ok\x00",
        "/ok\x7f",
        "http:/evil",
        "///evil",
        " /x",
        "/x y",
    ],
)
def test_local_path_refuses(target):
    assert local_path(target) is None


@pytest.mark.parametrize("target", ["/", "/host/sessions/3?x=1", "/host/?lang=ko#top", "/a/b//c"])
def test_local_path_keeps(target):
    assert local_path(target) == target


def test_being_sent_to_login_and_back_lands_on_the_page_asked_for(client):
    asked = client.get("/host/sessions/3?x=1")
    assert asked.status_code == 302 and asked.headers["Location"].startswith("/host/login?next=")
    token = form_token(client, asked.headers["Location"])
    done = client.post(asked.headers["Location"], data={"password": HOST_PASSWORD, "csrf_token": token})
    assert done.status_code == 302 and done.headers["Location"] == "/host/sessions/3?x=1"


# 2. The login limit ---------------------------------------------------------------------------------------------


def test_the_right_password_never_counts_against_the_limit(client):
    statuses = [post_login(client, HOST_PASSWORD).status_code for _ in range(15)]
    assert statuses == [302] * 15
    assert post_login(client, "nope").status_code == 401  # still ten wrong ones allowed


def test_nine_wrong_passwords_then_the_right_one_signs_in(client):
    assert [post_login(client, "nope").status_code for _ in range(9)] == [401] * 9
    assert post_login(client, HOST_PASSWORD).status_code == 302
    assert post_login(client, "nope").status_code == 401  # the tenth wrong one
    assert post_login(client, "nope").status_code == 429  # the eleventh is refused


def retry_after(response) -> int:
    value = response.headers.get("Retry-After", "")
    assert value.isdigit(), f"Retry-After {value!r} is not a number of seconds"
    return int(value)


def test_after_ten_wrong_passwords_a_styled_page_says_when_to_try_again(client, app):
    assert [post_login(client, "nope").status_code for _ in range(10)] == [401] * 10
    response = post_login(client, HOST_PASSWORD, "next=/host/sessions/3", headers={"Accept-Language": "en"})
    page = response.get_data(as_text=True)
    assert response.status_code == 429 and response.mimetype == "text/html"
    seconds = retry_after(response)
    assert 0 < seconds <= 60
    assert '<html lang="en">' in page and 'class="topbar"' in page  # base.html
    assert '<h1 id="error-title">Too many attempts</h1>' in page
    said = re.search(r"Try again in (\d+) seconds?\.", page)
    assert said and int(said.group(1)) == seconds  # the page and the header say the same
    assert "per 1 minute" not in page and "10 per" not in page
    assert '<a class="button" href="/host/login?next=/host/sessions/3">Back to the form</a>' in page
    assert "X-RateLimit-Remaining" not in response.headers  # a guesser is not told how many tries are left
    # The sign-in page itself still opens (only POSTs are limited).
    assert client.get("/host/login").status_code == 200


def test_the_refusal_speaks_korean(client, app):
    for _ in range(10):
        post_login(client, "nope")
    response = post_login(client, "nope", headers={"Accept-Language": "ko-KR,ko;q=0.9"})
    page = response.get_data(as_text=True)
    assert response.status_code == 429 and '<html lang="ko">' in page
    seconds = retry_after(response)
    assert '<h1 id="error-title">시도 횟수 초과</h1>' in page
    assert "초 뒤에 다시 시도하세요" in page, page
    with app.test_request_context("/"), force_locale("ko"):
        words = ngettext(
            "Too many attempts from this device in a short time. Try again in %(num)d second.",
            "Too many attempts from this device in a short time. Try again in %(num)d seconds.",
            seconds,
        )
    assert "Try again" not in words and words in page and f"{seconds}초 뒤에" in page
    assert "입력 화면으로 돌아가기" in page


def test_json_clients_are_told_the_seconds_too(client):
    for _ in range(10):
        post_login(client, "nope")
    response = post_login(client, "nope", headers=JSON)
    assert response.status_code == 429 and response.mimetype == "application/json"
    body = response.json["error"]
    assert body["code"] == "too_many_requests" and body["retry_after"] == retry_after(response) > 0
    assert "per 1 minute" not in body["message"]


def test_the_open_join_limit_still_counts_every_join(client, db_factory):
    people = make_session(db_factory, rounds=1, per_round=1, jurors=0, open_join=True)
    token = form_token(client, f"/join/{people.code}")
    codes = [
        client.post(f"/join/{people.code}", data={"csrf_token": token, "nickname": f"n{i}"}).status_code
        for i in range(21)
    ]
    assert codes == [302] * 20 + [429]
    refused = client.post(f"/join/{people.code}", data={"csrf_token": token, "nickname": "late"})
    assert refused.status_code == 429 and 0 < retry_after(refused) <= 60
    assert "Too many joins right now" in refused.get_data(as_text=True)  # the join page, its form kept


# 3. Security headers ------------------------------------------------------------------------------------------


def policy(response) -> dict[str, list[str]]:
    directives = {}
    for part in response.headers["Content-Security-Policy"].split(";"):
        name, *values = part.split()
        assert name not in directives, f"{name} twice"
        directives[name] = values
    return directives


def assert_security_headers(response) -> None:
    csp = policy(response)
    assert csp["script-src"] == ["'self'"]
    assert csp["style-src"] == ["'self'"]
    assert csp["default-src"] == ["'self'"]
    assert csp["img-src"] == ["'self'", "data:", "blob:"]
    assert csp["media-src"][:2] == ["'self'", "blob:"]
    assert csp["connect-src"][0] == "'self'"
    assert all(source.startswith(("'self'", "ws://", "wss://")) for source in csp["connect-src"])
    assert csp["frame-ancestors"] == ["'none'"]
    assert csp["base-uri"] == ["'self'"] and csp["form-action"] == ["'self'"] and csp["object-src"] == ["'none'"]
    assert "'unsafe-eval'" not in response.headers["Content-Security-Policy"]
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert response.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    "path, status",
    [
        ("/host/login", 200),
        ("/", 302),
        ("/host/", 302),
        ("/no/such/page", 404),
        ("/healthz", 200),
        ("/static/css/vtt.css", 200),
        ("/join/NOSUCH", 404),
    ],
)
@pytest.mark.each_database
def test_every_answer_carries_the_security_headers(client, path, status):
    response = client.get(path)
    assert response.status_code == status
    assert_security_headers(response)


def test_error_answers_and_refusals_carry_them_too(client):
    assert_security_headers(client.put("/host/login", headers=JSON))  # 405
    assert_security_headers(client.post("/host/login", data={"password": "x"}))  # 400, no CSRF token
    for _ in range(10):
        post_login(client, "nope")
    refused = post_login(client, "nope")
    assert refused.status_code == 429
    assert_security_headers(refused)


def test_websockets_of_this_host_are_allowed(client):
    csp = policy(client.get("/host/login", base_url="http://vtt.example.org:8080"))
    assert {"ws://vtt.example.org:8080", "wss://vtt.example.org:8080"} <= set(csp["connect-src"])
    # A Host header that could smuggle a directive is left out, not copied in.
    odd = policy(client.get("/host/login", headers={"Host": "evil;script-src *"}))
    assert odd["connect-src"] == ["'self'"] and odd["script-src"] == ["'self'"]


@pytest.mark.each_database
def test_clips_keep_their_own_headers_and_get_these(app, client, tmp_path):
    folder = tmp_path / "media"
    (folder / "clips").mkdir(parents=True)
    (folder / "clips" / "ep01.mp4").write_bytes(bytes(range(256)) * 4)
    app.config["MEDIA_DIR"] = str(folder)
    part = client.get("/media/clips/ep01.mp4", headers={"Range": "bytes=10-19"})
    assert part.status_code == 206 and part.data == bytes(range(10, 20))
    assert part.headers["Content-Range"] == "bytes 10-19/1024" and part.headers["Accept-Ranges"] == "bytes"
    assert part.headers["ETag"] and part.mimetype == "video/mp4"
    assert_security_headers(part)
    again = client.get("/media/clips/ep01.mp4", headers={"If-None-Match": part.headers["ETag"]})
    assert again.status_code == 304


TEMPLATES = ROOT / "templates"


def test_no_template_has_an_inline_style_or_script():
    inline_style = re.compile(r"\sstyle\s*=|<style[\s>]", re.I)
    script = re.compile(r"<script\b([^>]*)>", re.I)
    offenders = []
    for path in sorted(TEMPLATES.rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        offenders += [f"{path.relative_to(ROOT)}: style" for _ in inline_style.finditer(text)]
        for match in script.finditer(text):
            attributes = match.group(1)
            if "src=" not in attributes and 'type="application/json"' not in attributes:
                offenders.append(f"{path.relative_to(ROOT)}: inline script")
        offenders += [f"{path.relative_to(ROOT)}: handler" for _ in re.finditer(r"\son[a-z]+\s*=\s*\"", text)]
    assert offenders == []


# 4. Cookies, HTTPS, proxies -------------------------------------------------------------------------------------


def cookie_headers(response) -> dict[str, str]:
    return {value.split("=", 1)[0]: value for value in response.headers.getlist("Set-Cookie")}


def attributes(cookie: str) -> set[str]:
    return {part.strip().split("=")[0].lower() for part in cookie.split(";")[1:]}


def test_over_plain_http_cookies_are_httponly_lax_and_not_secure(client):
    response = post_login(client, HOST_PASSWORD)
    session_cookie = cookie_headers(response)["session"]
    assert {"httponly", "path"} <= attributes(session_cookie) and "secure" not in attributes(session_cookie)
    assert "SameSite=Lax" in session_cookie
    language = cookie_headers(client.get("/host/login?lang=ko"))["vtt_lang"]
    assert "secure" not in attributes(language)


def test_over_https_every_cookie_is_secure(client):
    https = "https://localhost"
    token = form_token(client, f"{https}/host/login")
    # Over HTTPS Flask-WTF wants a same-origin Referer (Referrer-Policy: same-origin still sends it).
    response = client.post(
        "/host/login",
        base_url=https,
        headers={"Referer": f"{https}/host/login"},
        data={"password": HOST_PASSWORD, "csrf_token": token},
    )
    assert response.status_code == 302
    session_cookie = cookie_headers(response)["session"]
    assert {"secure", "httponly"} <= attributes(session_cookie) and "SameSite=Lax" in session_cookie
    assert session_cookie.count("Secure") == 1
    language = cookie_headers(client.get("/host/login?lang=ko", base_url=https))["vtt_lang"]
    assert "secure" in attributes(language)


def test_forwarded_headers_are_ignored_without_a_trusted_proxy(client, app):
    assert app.config["TRUSTED_PROXIES"] == 0
    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.5", "X-Forwarded-Host": "evil.example"}
    response = post_login(client, HOST_PASSWORD, headers=forwarded)
    assert "secure" not in attributes(cookie_headers(response)["session"])
    # Everyone "forwarded" from a different address is still one address: the limit holds.
    for number in range(10):
        assert post_login(client, "nope", headers={"X-Forwarded-For": f"203.0.113.{number}"}).status_code == 401
    assert post_login(client, "nope", headers={"X-Forwarded-For": "198.51.100.1"}).status_code == 429


@pytest.fixture
def proxied_app(database_url, monkeypatch):
    monkeypatch.setenv("VTT_TRUSTED_PROXIES", "1")
    app = threaded_app(database_url)
    yield app
    app.extensions["vtt.hub"].stop()


def test_behind_a_trusted_proxy_its_scheme_host_and_client_address_count(proxied_app):
    client = proxied_app.test_client()
    assert proxied_app.config["TRUSTED_PROXIES"] == 1
    https = {
        "X-Forwarded-Proto": "https",
        "X-Forwarded-Host": "vtt.example.org",
        "X-Forwarded-For": "203.0.113.5",
        "Referer": "https://vtt.example.org/host/login",
    }
    token = form_token(client)
    response = client.post("/host/login", headers=https, data={"password": HOST_PASSWORD, "csrf_token": token})
    assert response.status_code == 302
    assert "secure" in attributes(cookie_headers(response)["session"])
    page = client.get("/host/login", headers=https)
    assert "wss://vtt.example.org" in page.headers["Content-Security-Policy"]
    # The limit counts per real client (X-Forwarded-For as the one proxy saw it), not per proxy.
    for _ in range(10):
        assert post_login(client, "nope", headers={"X-Forwarded-For": "203.0.113.5"}).status_code == 401
    assert post_login(client, "nope", headers={"X-Forwarded-For": "203.0.113.5"}).status_code == 429
    assert post_login(client, "nope", headers={"X-Forwarded-For": "198.51.100.7"}).status_code == 401
    # A client cannot dodge it by adding its own X-Forwarded-For in front: one proxy, the last value counts.
    assert post_login(client, "nope", headers={"X-Forwarded-For": "10.9.9.9, 203.0.113.5"}).status_code == 429


@pytest.mark.parametrize("value, count", [(None, 0), ("", 0), ("0", 0), ("1", 1), (" 2 ", 2)])
def test_trusted_proxies_setting(tmp_path, value, count):
    env = {"VTT_INSTANCE_PATH": str(tmp_path), "VTT_HOST_PASSWORD": "x", "SECRET_KEY": "k"}
    if value is not None:
        env["VTT_TRUSTED_PROXIES"] = value
    settings = Settings.from_env(env)
    assert settings.trusted_proxies == count and settings.flask_config()["TRUSTED_PROXIES"] == count


@pytest.mark.parametrize("value", ["yes", "-1", "1.5"])
def test_a_wrong_trusted_proxies_value_is_refused(tmp_path, value):
    env = {
        "VTT_INSTANCE_PATH": str(tmp_path),
        "VTT_HOST_PASSWORD": "x",
        "SECRET_KEY": "k",
        "VTT_TRUSTED_PROXIES": value,
    }
    with pytest.raises(ValueError, match="VTT_TRUSTED_PROXIES"):
        Settings.from_env(env)


# 5. The pages under the CSP in Chromium -------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.each_database
def test_no_page_of_a_session_breaks_under_the_csp(browser, database_url, db_factory):
    from vtt.models import QuestionBank as Bank

    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, open_join=True)
    with db_factory() as db:
        bank_id = db.scalar(select(Bank.id).where(Bank.name == "Demo drama bank"))
    problems: list[str] = []

    def watch(page):
        page.on(
            "console",
            lambda message: (
                problems.append(f"{page.url}: {message.text}") if "Content Security Policy" in message.text else None
            ),
        )
        page.on("pageerror", lambda error: problems.append(f"{page.url}: {error}"))
        return page

    with ServedApp({"DATABASE_URL": database_url}) as served:
        url = served.url
        enforcing = SimpleNamespace(new_page=lambda **options: browser.new_page(bypass_csp=False, **options))
        host = host_console(enforcing, url, people)  # signs in, opens the console, waits for its flow buttons
        watch(host)
        host.reload()
        host.wait_for_selector("#flow button[data-action=open_lobby]", timeout=WAIT_MS)
        for path in ("/host/", f"/host/sessions/{people.session_id}", f"/host/banks/{bank_id}"):
            response = host.goto(f"{url}{path}")
            assert response.status == 200, path
            assert response.headers["content-security-policy"].startswith("default-src 'self'")
        # The bank's balance bars are sized by their classes (no style attribute): some bar has a width.
        assert host.evaluate("Math.max(...[...document.querySelectorAll('.bar')].map((b) => b.offsetWidth))") > 10
        host.goto(f"{url}/host/sessions/{people.session_id}/live")
        host.wait_for_selector("#flow button[data-action=open_lobby]", timeout=WAIT_MS)

        pages = {
            "stage": people.stage_path,
            "juror": f"/jury/{people.jurors['J1']}",
            "player": f"/play/{people.players['Grace']}",
            "join": f"/join/{people.code}",
        }
        opened = {}
        for name, path in pages.items():
            page = watch(browser.new_page(bypass_csp=False))
            assert page.goto(f"{url}{path}").status == 200, path
            opened[name] = page
        for name in ("juror", "player"):
            wait_connected(opened[name])
        # The stage's QR code (an image of this server) loaded.
        assert opened["stage"].eval_on_selector("img", "(img) => img.complete && img.naturalWidth > 0")
        # Sizes set by script through the CSSOM (how client.js's h() sizes the tally bars) apply.
        widths = opened["juror"].evaluate("""async () => { const { h } = await import('/static/js/client.js');
            const outer = h('div', { class: 'probe' }); outer.style.width = '200px';
            const bar = h('span', { style: { display: 'block', width: '50%' } });
            outer.append(bar); document.body.append(outer); return bar.getBoundingClientRect().width; }""")
        assert widths == 100
        assert problems == []

        # The check can fail: a script and an image from elsewhere are refused and reported.
        probe = watch(browser.new_page(bypass_csp=False))
        probe.goto(f"{url}/host/login")
        probe.evaluate("""() => { const s = document.createElement('script'); s.textContent = 'window.ran = 1';
            document.body.append(s); const i = document.createElement('img'); i.src = 'http://example.invalid/x.png';
            document.body.append(i); }""")
        probe.wait_for_timeout(300)
        assert probe.evaluate("window.ran === undefined")
        assert any("Content Security Policy" in line for line in problems), problems
        for page in [host, probe, *opened.values()]:
            page.close()
    assert "Traceback" not in served.output, served.output
