"""Languages: Korean and English through Flask-Babel's catalogs (``vtt/translations``).

The language is the one asked for with ``?lang=`` (then remembered in a cookie for a year, by pages only: a
report's language is its own, ``?report_lang=``), else, on a player's
page, the session's language (``g.session_language``: the questions' language, which the page reads aloud in),
else the remembered one, else the best match of the browser's Accept-Language.  Question text is shown as
written; everything vtt itself says goes through the catalogs.
"""

from __future__ import annotations

from urllib.parse import urlencode

from flask import Flask, Response, g, request
from flask_babel import Babel, get_locale
from flask_babel import lazy_gettext as _l

LANGUAGES = {"en": "English", "ko": "한국어"}
DEFAULT_LANGUAGE = "en"
COOKIE = "vtt_lang"
COOKIE_SECONDS = 365 * 24 * 3600

babel = Babel()

# The words for a session's status and a player's kind on the host's pages (the stored values are English codes).
WORDS = {
    "draft": _l("draft"),
    "lobby": _l("lobby"),
    "running": _l("running"),
    "finished": _l("finished"),
    "human": _l("human"),
    "ai": _l("AI"),
}


def word_for(code: object) -> str:
    """A status's or kind's word in the page's language (``code`` an enum member or its value)."""
    value = str(getattr(code, "value", code))
    return str(WORDS.get(value, value))


def select_language() -> str:
    asked = request.args.get("lang", "")
    if asked in LANGUAGES:
        return asked
    session_language = (g.get("session_language") or "").split("-")[0].lower()
    if session_language in LANGUAGES:
        return session_language
    kept = request.cookies.get(COOKIE, "")
    if kept in LANGUAGES:
        return kept
    return request.accept_languages.best_match(list(LANGUAGES), default=DEFAULT_LANGUAGE)


def remember_language(response: Response) -> Response:
    """A page asked for in a language keeps it; a download (a PDF, a zip) never changes the interface's."""
    asked = request.args.get("lang", "")
    if asked in LANGUAGES and response.mimetype == "text/html" and request.cookies.get(COOKIE) != asked:
        response.set_cookie(COOKIE, asked, max_age=COOKIE_SECONDS, samesite="Lax")
    return response


def language_links() -> list[dict[str, str | bool]]:
    """The page's own address in each language, for the switch every page carries."""
    current = str(get_locale())
    args = request.args.to_dict()
    links = []
    for code, name in LANGUAGES.items():
        args["lang"] = code
        links.append(
            {"code": code, "name": name, "url": f"{request.path}?{urlencode(args)}", "current": code == current}
        )
    return links


def report_language() -> str:
    """The language of a report or printout asked for with ``?report_lang=`` (its own choice, never remembered),
    else the page's."""
    asked = request.args.get("report_lang", "")
    return asked if asked in LANGUAGES else str(get_locale())


def init_app(app: Flask) -> None:
    babel.init_app(app, locale_selector=select_language)
    app.after_request(remember_language)
    app.jinja_env.globals.update(
        language_links=language_links, current_language=lambda: str(get_locale()), word_for=word_for
    )
