"""The command line prints links to where the server really serves: ``<instance>/serving.json``.

``vtt serve`` (and run.py) note host, port, scheme and pid there at start and remove it at a clean stop;
``vtt session show`` and ``vtt host-login`` use it after --url/--base-url and VTT_BASE_URL, while its
process runs, before the old default http://127.0.0.1:5000.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.served import ServedApp
from tests.support.waiting import wait_until
from vtt.banks import import_bank, read_bank
from vtt.serving import record as serving_record
from vtt.sessions.demo import BANK_FILE, SESSION_FILE


@pytest.fixture
def demo_code(run, db):
    import_bank(db, read_bank(BANK_FILE), "Demo drama bank")
    db.commit()
    return json.loads(run("session", "create", str(SESSION_FILE), "--json").output)["code"]


def starts(lines: list[str], prefix: str) -> bool:
    """Some line starts with ``prefix`` (a stage link ends in its key)."""
    return any(line.startswith(prefix) for line in lines)


def record(instance, port: int, pid: int, host: str = "127.0.0.1") -> None:
    instance.mkdir(parents=True, exist_ok=True)
    (instance / "serving.json").write_text(json.dumps({"host": host, "port": port, "scheme": "http", "pid": pid}))


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid  # reaped: no process has this id (until the system reuses it, long after this test)


def links(run, code: str, *args: str) -> tuple[list[str], str]:
    show = run("session", "show", code, *args)
    login = run("host-login")
    assert show.exit_code == 0 and login.exit_code == 0, show.output + login.output
    return show.output.splitlines(), login.output.splitlines()[0]


def test_a_running_servers_record_gives_the_links(run, demo_code, instance, monkeypatch):
    monkeypatch.delenv("VTT_BASE_URL", raising=False)
    record(instance, 5101, os.getpid())
    show, login = links(run, demo_code)
    assert starts(show, f"stage screen: http://127.0.0.1:5101/stage/{demo_code}?key=")
    assert f"open join:    http://127.0.0.1:5101/join/{demo_code}" in show
    assert not any(":5000/" in line for line in show)
    assert login == "Host console: http://127.0.0.1:5101/host/login"
    # The demo's four-year-old has the page read aloud: the host sees it beside the link; a text player has nothing.
    assert next(line for line in show if "김민준" in line).endswith("(text, read_aloud)")
    assert "(" not in next(line for line in show if "Grace" in line)
    # An explicit address still wins, and so do --host/--port.
    assert starts(
        run("session", "show", demo_code, "--base-url", "http://vtt.lan:9000").output.splitlines(),
        f"stage screen: http://vtt.lan:9000/stage/{demo_code}?key=",
    )
    assert run("host-login", "--url", "http://vtt.lan:9000").output.startswith(
        "Host console: http://vtt.lan:9000/host/login"
    )
    assert run("host-login", "--port", "8081").output.startswith("Host console: http://127.0.0.1:8081/host/login")


def test_a_server_on_all_interfaces_gives_the_lan_address(run, demo_code, instance, monkeypatch, lan_address):
    monkeypatch.delenv("VTT_BASE_URL", raising=False)
    record(instance, 5101, os.getpid(), host="0.0.0.0")
    show, login = links(run, demo_code)
    assert starts(show, f"stage screen: http://192.168.7.23:5101/stage/{demo_code}?key=")
    assert login == "Host console: http://192.168.7.23:5101/host/login"


def test_the_record_of_a_stopped_server_is_ignored(run, demo_code, instance, monkeypatch):
    monkeypatch.delenv("VTT_BASE_URL", raising=False)
    record(instance, 5101, dead_pid())
    show, login = links(run, demo_code)
    assert starts(show, f"stage screen: http://127.0.0.1:5000/stage/{demo_code}?key=")
    assert login == "Host console: http://127.0.0.1:5000/host/login"
    (instance / "serving.json").write_text("{not json")  # a damaged record too
    assert links(run, demo_code)[1] == "Host console: http://127.0.0.1:5000/host/login"


def test_vtt_base_url_wins_over_the_record(run, demo_code, instance, monkeypatch):
    monkeypatch.setenv("VTT_BASE_URL", "https://vtt.example.org/")
    record(instance, 5101, os.getpid())
    show, login = links(run, demo_code)
    assert starts(show, f"stage screen: https://vtt.example.org/stage/{demo_code}?key=")
    assert login == "Host console: https://vtt.example.org/host/login"


def test_record_and_forget_are_atomic_and_only_forget_their_own(tmp_path):
    path = serving_record.record_serving(tmp_path, "127.0.0.1", 5101)
    assert json.loads(path.read_text()) == {"host": "127.0.0.1", "port": 5101, "scheme": "http", "pid": os.getpid()}
    assert [p.name for p in tmp_path.iterdir()] == ["serving.json"]  # nothing staged left behind
    assert serving_record.served_base_url(tmp_path) == "http://127.0.0.1:5101"
    record(tmp_path, 5202, dead_pid())  # another server wrote its own since: not ours to remove
    serving_record.forget_serving(tmp_path)
    assert path.exists()
    serving_record.record_serving(tmp_path, "127.0.0.1", 5101)
    serving_record.forget_serving(tmp_path)
    assert not path.exists()


def test_run_py_records_where_it_serves_and_removes_it_at_a_stop(database_url, instance):
    with ServedApp({"DATABASE_URL": database_url}) as served:
        noted = json.loads((instance / "serving.json").read_text())
        assert noted == {"host": "127.0.0.1", "port": served.port, "scheme": "http", "pid": served.process.pid}
        env = {**os.environ, "DATABASE_URL": database_url}
        env.pop("VTT_BASE_URL", None)
        login = subprocess.run(
            [sys.executable, "-m", "vtt.cli", "host-login"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        assert login.startswith(f"Host console: {served.url}/host/login")
    # terminated (SIGTERM): the record went with it
    wait_until(
        lambda: not (instance / "serving.json").exists(),
        timeout=15,
        message="the stopped server to remove serving.json",
    )
