"""The live pages' weight on a venue's slow Wi-Fi (docs/design.md, "Page weight"): the juror page's first load
within its budget as served (gzip), every module it imports fetched at once (modulepreload), its files kept by the
browser under a versioned address, and a changed file changing that address."""

from __future__ import annotations

import gzip
import re
from html.parser import HTMLParser
from urllib.parse import urljoin

import pytest

from tests.support.live import make_session
from vtt.views.assets import StaticFolder

# The budget of docs/design.md: the juror page's HTML, scripts, styles, fonts and images on a first visit, as
# they cross the wire (a slow 3G link carries about 50 KB a second).
JUROR_PAGE_BUDGET_BYTES = 64 * 1024
IMPORTED = re.compile(r"""from\s*["']([^"']+)["']""")


class Links(HTMLParser):
    """The files a page asks for: stylesheets, module preloads, scripts, images."""

    def __init__(self):
        super().__init__()
        self.files: dict[str, str] = {}  # address -> what

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "link" and attrs.get("rel") in ("stylesheet", "modulepreload", "preload", "icon"):
            if not attrs["href"].startswith("data:"):
                self.files[attrs["href"]] = attrs["rel"]
        elif tag in ("script", "img") and attrs.get("src"):
            self.files[attrs["src"]] = tag


def served_size(response) -> int:
    return len(response.get_data())  # the body as sent: gzip when the server compressed it


def body_text(response) -> str:
    data = response.get_data()
    return (gzip.decompress(data) if response.headers.get("Content-Encoding") == "gzip" else data).decode()


def juror_page(client, db_factory):
    """The juror page's response, the files it links to (address -> what), and every module its scripts import,
    directly or not (address -> the response)."""
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    page = client.get(f"/jury/{people.jurors['J1']}", headers={"Accept-Encoding": "gzip"})
    assert page.status_code == 200
    links = Links()
    links.feed(page.get_data(as_text=True))
    base = page.request.url
    todo = [urljoin(base, address) for address, what in links.files.items() if what == "script"]
    imported = {}
    while todo:
        response = client.get(todo.pop(), headers={"Accept-Encoding": "gzip"})
        assert response.status_code == 200, response.request.url
        for name in IMPORTED.findall(body_text(response)):
            found = urljoin(response.request.url, name)
            if found not in imported:
                imported[found] = client.get(found, headers={"Accept-Encoding": "gzip"})
                todo.append(found)
    return page, {urljoin(base, address): what for address, what in links.files.items()}, imported


def test_the_juror_page_first_load_is_within_its_budget(client, db_factory):
    page, files, imported = juror_page(client, db_factory)
    sizes = {"page": served_size(page)}
    for address in {*files, *imported}:
        response = client.get(address, headers={"Accept-Encoding": "gzip"})
        assert response.status_code == 200, address
        sizes[address.removeprefix("http://localhost")] = served_size(response)
    total = sum(sizes.values())
    assert total <= JUROR_PAGE_BUDGET_BYTES, f"{total / 1024:.1f} KB: {sizes}"


def test_every_module_of_a_live_page_is_fetched_at_once_and_kept(client, db_factory):
    """A module found only by running its importer costs a round trip per level of imports (2 s on slow 3G)."""
    _page, files, imported = juror_page(client, db_factory)
    preloaded = {address for address, what in files.items() if what == "modulepreload"}
    assert imported and set(imported) <= preloaded, set(imported) - preloaded
    for address in {*files, *imported}:
        response = client.get(address, headers={"Accept-Encoding": "gzip"})
        assert response.headers.get("Content-Encoding") == "gzip", address
        assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable", address


@pytest.mark.each_database  # the versioned static route is reached on PostgreSQL too (tests/test_postgres_reach.py)
def test_an_address_of_another_version_is_revalidated_and_a_plain_one_too(client):
    with client.application.test_request_context():
        from flask import url_for

        current = url_for("static", filename="css/live.css")
    assert "/v/" in current
    kept = client.get(current)
    assert kept.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    for address in ("/static/v/0000old00000/css/live.css", "/static/css/live.css"):
        older = client.get(address)
        assert older.status_code == 200 and older.get_data() == kept.get_data()
        assert older.headers["Cache-Control"] == "no-cache"
        assert client.get(address, headers={"If-None-Match": older.headers["ETag"]}).status_code == 304
    assert client.get("/static/v/x/../../vtt/app.py").status_code == 404


@pytest.mark.parametrize("change", ["content", "new file"])
def test_a_changed_file_changes_the_version(tmp_path, change):
    (tmp_path / "js").mkdir()
    script = tmp_path / "js" / "page.js"
    script.write_text('import { h } from "./client.js";\n')
    (tmp_path / "js" / "client.js").write_text("export const h = 1;\n")
    folder = StaticFolder(tmp_path)
    before = folder.version()
    assert folder.version() == before
    if change == "content":
        script.write_text('import { h } from "./client.js";\nh;\n')
    else:
        (tmp_path / "js" / "more.js").write_text("")
    assert folder.version() != before
    assert folder.module_graph("js/page.js") == ["js/client.js"]
