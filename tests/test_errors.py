"""Error responses: styled pages in both languages, JSON for JSON clients (404, 400, 405, 429, 500)."""

from __future__ import annotations

import re

import pytest
from flask_babel import force_locale, gettext

from tests.support.apps import form_token

JSON = {"Accept": "application/json"}


def expected(app, message: str, language: str) -> str:
    """``message`` as the catalog of ``language`` has it (whatever the translation pass has done so far)."""
    with app.test_request_context("/"), force_locale(language):
        return gettext(message)


@pytest.mark.parametrize("language", ["en", "ko"])
def test_not_found_is_a_styled_page_in_the_visitors_language(client, app, language):
    response = client.get(f"/no/such/page?lang={language}")
    page = response.get_data(as_text=True)
    assert response.status_code == 404 and response.mimetype == "text/html"
    assert f'<html lang="{language}">' in page and 'class="topbar"' in page  # through base.html
    title = expected(app, "Page not found", language)
    assert f'<h1 id="error-title">{title}</h1>' in page and f"<title>404 · {title} · vtt</title>" in page
    assert expected(app, "Go to the home page", language) in page
    assert "Werkzeug" not in page and "The requested URL was not found" not in page


def test_korean_browsers_get_the_korean_page_without_asking(client, app):
    page = client.get("/nowhere", headers={"Accept-Language": "ko-KR,ko;q=0.9"}).get_data(as_text=True)
    assert '<html lang="ko">' in page and expected(app, "Page not found", "ko") in page


def test_json_clients_get_json_errors(client, app):
    response = client.get("/no/such/page", headers=JSON)
    assert response.status_code == 404 and response.mimetype == "application/json"
    assert response.json == {
        "error": {
            "code": "not_found",
            "message": expected(
                app, "Nothing is at this address. Check the link, or start again from the home page.", "en"
            ),
        }
    }
    assert client.get("/api/anything").json["error"]["code"] == "not_found"  # an API path, whatever it accepts
    korean = client.get("/api/anything?lang=ko").json["error"]["message"]
    assert korean == expected(
        app, "Nothing is at this address. Check the link, or start again from the home page.", "ko"
    )
    # A browser's Accept (HTML first, */* after) still gets the page.
    browser = client.get("/nowhere", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert browser.mimetype == "text/html"


def test_a_form_without_its_token_is_a_400_that_says_why(client, app):
    response = client.post("/host/login", data={"password": "x"})
    assert response.status_code == 400 and response.mimetype == "text/html"
    assert expected(
        app, "This form has expired or came from another page. Reload the page and send it again.", "en"
    ) in response.get_data(as_text=True)
    response = client.post("/host/login", data={"password": "x"}, headers=JSON)
    assert response.status_code == 400 and response.json["error"]["code"] == "csrf_failed"


def test_a_wrong_method_keeps_its_allow_header(client):
    response = client.put("/host/login", headers=JSON)
    assert response.status_code == 405 and response.json["error"]["code"] == "method_not_allowed"
    assert set(re.split(r",\s*", response.headers["Allow"])) >= {"GET", "POST"}


def test_the_login_limit_is_a_styled_429_with_retry_after(client, app):
    token = form_token(client)
    statuses = [
        client.post("/host/login", data={"password": "nope", "csrf_token": token}).status_code for _ in range(11)
    ]
    assert statuses == [401] * 10 + [429]
    response = client.post("/host/login?lang=ko", data={"password": "nope", "csrf_token": token})
    page = response.get_data(as_text=True)
    assert response.status_code == 429 and '<html lang="ko">' in page
    assert expected(app, "Too many attempts", "ko") in page and int(response.headers["Retry-After"]) > 0
    response = client.post("/host/login", data={"password": "nope", "csrf_token": token}, headers=JSON)
    assert response.status_code == 429 and response.json["error"]["code"] == "too_many_requests"


def test_an_unexpected_error_is_a_styled_500_or_json(app, caplog):
    def broken():
        raise RuntimeError("a bug")

    app.add_url_rule("/broken", "broken", broken)
    app.add_url_rule("/api/broken", "api_broken", broken)
    app.config["PROPAGATE_EXCEPTIONS"] = False  # as in production, where TESTING is off
    client = app.test_client()
    response = client.get("/broken?lang=en")
    page = response.get_data(as_text=True)
    assert response.status_code == 500 and '<h1 id="error-title">Something went wrong</h1>' in page
    assert "a bug" not in page  # no internals shown
    assert "RuntimeError: a bug" in caplog.text  # but logged
    response = client.get("/api/broken")
    assert response.status_code == 500 and response.json["error"]["code"] == "internal_server_error"
