"""Korean and English: every message vtt says is in the catalogs, translated, and chosen per person."""

from __future__ import annotations

import subprocess
import sys

from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from tests.support.paths import ROOT

CATALOG = ROOT / "vtt" / "translations" / "ko" / "LC_MESSAGES" / "messages.po"


def korean_catalog():
    with CATALOG.open("rb") as handle:
        return read_po(handle)


def test_every_message_in_the_code_is_in_the_korean_catalog_and_translated():
    from babel.messages.frontend import parse_mapping_cfg

    with (ROOT / "babel.cfg").open(encoding="utf-8") as handle:
        method_map, options_map = parse_mapping_cfg(handle)
    found = {
        message if isinstance(message, str) else message[0]
        for _file, _line, message, _comments, _context in extract_from_dir(
            str(ROOT),
            method_map,
            options_map,
            keywords={"_": None, "gettext": None, "_l": None, "ngettext": (1, 2), "lazy_gettext": None},
        )
    }
    catalog = korean_catalog()
    known = {m.id if isinstance(m.id, str) else m.id[0] for m in catalog if m.id}
    assert sorted(found - known) == [], "run `make messages`, then translate the new messages"
    untranslated = [m.id for m in catalog if m.id and not (m.string if isinstance(m.string, str) else all(m.string))]
    assert untranslated == []
    assert [m.id for m in catalog if m.id and m.fuzzy] == []


def test_the_catalog_compiles(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "babel.messages.frontend",
            "compile",
            "-i",
            str(CATALOG),
            "-o",
            str(tmp_path / "messages.mo"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and (tmp_path / "messages.mo").stat().st_size > 100, done.stderr


def test_language_comes_from_the_browser_the_switch_and_is_remembered(client):
    assert "진행자 비밀번호를 입력하세요" not in client.post("/host/login", data={}).get_data(as_text=True)
    page = client.get("/host/login", headers={"Accept-Language": "ko-KR,ko;q=0.9,en;q=0.5"})
    assert '<html lang="ko">' in page.get_data(as_text=True) and "로그아웃" not in page.get_data(as_text=True)
    assert "비디오 튜링 테스트" in page.get_data(as_text=True)
    english = client.get("/host/login?lang=en", headers={"Accept-Language": "ko"})
    assert '<html lang="en">' in english.get_data(as_text=True)
    assert "vtt_lang=en" in english.headers["Set-Cookie"]
    again = client.get("/host/login", headers={"Accept-Language": "ko"})  # the cookie wins over the browser
    assert '<html lang="en">' in again.get_data(as_text=True)
    switched = client.get("/host/login?lang=ko").get_data(as_text=True)
    assert "비디오 튜링 테스트" in switched and 'href="/host/login?lang=en"' in switched


def test_no_message_is_defined_twice_in_the_catalog():
    """Babel keeps the last of two entries with one msgid without a word (GNU msgfmt refuses the file): two
    branches adding the same message each once made one such pair."""
    import re

    entries = re.findall(r'^(#~ )?msgid ((?:"(?:[^"\\]|\\.)*"\s*)+)', CATALOG.read_text(encoding="utf-8"), re.M)
    ids = ["".join(re.findall(r'"((?:[^"\\]|\\.)*)"', text)) for obsolete, text in entries if not obsolete]
    twice = sorted({message for message in ids if message and ids.count(message) > 1})
    assert twice == []
