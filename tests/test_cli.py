"""The ``vtt`` command line: db, questions import/check/list, host-login."""

from __future__ import annotations

import os
import subprocess
import sys

from click.testing import CliRunner
from sqlalchemy import func, select

from tests.support.apps import HOST_PASSWORD
from tests.support.paths import DATA
from vtt.banks import read_bank
from vtt.cli import main
from vtt.models import Event, Question, QuestionBank, QuestionTag


def test_import_then_check_prints_the_balance(run, db):
    result = run("questions", "import", str(DATA / "spec_examples.csv"), "--bank", "Spec examples")
    assert result.exit_code == 0, result.output
    assert "imported 5 questions (csv) into bank 'Spec examples'; 0 without CogME tags" in result.output
    assert "5 questions: 2 mcq, 3 open; clips: 3 shot, 2 scene" in result.output
    lines = {line.split()[0]: line.split()[1] for line in result.output.splitlines() if line.startswith("  ")}
    assert (lines["Character"], lines["Emotion"], lines["Identity"], lines["Reasoning"], lines["Recognition"]) == (
        "5",
        "2",
        "2",
        "2",
        "2",
    )
    bank = db.scalar(select(QuestionBank).where(QuestionBank.name == "Spec examples"))
    assert db.scalar(select(func.count()).select_from(Question).where(Question.bank_id == bank.id)) == 5
    keys = db.execute(
        select(Question.qid, QuestionTag.element).join(QuestionTag).where(QuestionTag.is_key).order_by(Question.qid)
    ).all()
    assert keys == [("q1", "Object"), ("q2", "Character"), ("q3", "Emotion"), ("q4", "Event"), ("q5", "Conversation")]
    assert db.scalar(select(Event.payload).where(Event.kind == "bank.imported"))["questions"] == 5
    assert run("questions", "list").output == "Spec examples\t5\n"


def test_a_bad_file_imports_nothing_and_lists_every_problem(run, db, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(
        (DATA / "spec_examples.csv").read_text(encoding="utf-8")
        + "q6,Broken?,mcq,a|b,9,,,,shot,Foo,Identity,Recall,,\n",
        encoding="utf-8",
    )
    result = run("questions", "import", str(bad), "--bank", "Bad")
    assert result.exit_code == 1
    assert "error: 3 problems; nothing was imported" in result.output
    assert "bad.csv: row 7: field 'answer': index 9 is out of range 0-1" in result.output
    assert "bad.csv: row 7: field 'targets': unknown CogME element 'Foo'" in result.output
    assert db.scalar(select(func.count()).select_from(QuestionBank)) == 0


def test_reimport_into_the_same_bank_is_refused_whole(run, db):
    assert run("questions", "import", str(DATA / "spec_examples.csv"), "--bank", "B").exit_code == 0
    again = run("questions", "import", str(DATA / "spec_examples.csv"), "--bank", "B")
    assert again.exit_code == 1 and "'q1' is already in bank 'B'" in again.output
    assert db.scalar(select(func.count()).select_from(Question)) == 5


def test_check_writes_nothing_and_reports_untagged(run, db, tmp_path):
    path = tmp_path / "dramaqa.json"
    path.write_text(
        '[{"qid": 1, "que": "Who?", "answers": ["a","b","c","d","e"], "correct_idx": 2, '
        '"vid": "v", "videoType": "shot", "q_level_mem": 2, "q_level_logic": 1}]',
        encoding="utf-8",
    )
    result = run("questions", "check", str(path))
    assert result.exit_code == 0
    assert "dramaqa.json: 1 questions, format dramaqa, no problems" in result.output
    assert "untagged: 1 (1)" in result.output
    assert db.scalar(select(func.count()).select_from(QuestionBank)) == 0


def test_db_commands(run, tmp_path, monkeypatch):
    from vtt.db import head_revision

    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    assert run("db", "current").output.strip() == "base (empty)"
    assert f"database at revision {head_revision()} " in run("db", "upgrade").output
    assert run("db", "current").output.strip() == head_revision()
    assert run("db", "downgrade", "base").output.strip() == "database at revision base"


def test_host_login_banner(run):
    output = run("host-login").output
    assert "http://127.0.0.1:5000/host/login" in output and f"Host password: {HOST_PASSWORD}" in output


def test_host_token_is_the_one_the_server_takes_and_changes_with_the_password(
    run, app, client, db_factory, monkeypatch
):
    from tests.support.live import Role, make_session
    from vtt.extensions import socketio

    token = run("host-token").output.strip()
    assert len(token) == 32
    people = make_session(db_factory, rounds=1, per_round=1, jurors=0)
    wrong = token[:-1] + ("y" if token.endswith("x") else "x")  # one character off (never the token itself)
    host = Role(socketio, app, {"code": people.code, "role": "host", "host_token": token})
    assert host.connected and host.fresh_snapshot()["role"] == "host"
    assert not Role(socketio, app, {"code": people.code, "role": "host", "host_token": wrong}).connected
    assert Role(socketio, app, {"code": people.code, "role": "stage", "host_token": token}).connected  # the host's
    assert not Role(socketio, app, {"code": people.code, "role": "stage", "host_token": wrong}).connected
    monkeypatch.setenv("VTT_HOST_PASSWORD", "a new password")
    assert run("host-token").output.strip() != token  # a new password revokes the old token


def test_host_login_follows_the_host_and_port(lan_address, monkeypatch):
    monkeypatch.delenv("VTT_BASE_URL", raising=False)
    runner = CliRunner()

    def console(*args: str) -> str:
        result = runner.invoke(main, ["host-login", *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output.splitlines()[0]

    assert console("--port", "8081") == "Host console: http://127.0.0.1:8081/host/login"
    # Listening on every interface: print the address phones on the LAN can reach.
    assert console("--host", "0.0.0.0", "--port", "8081") == "Host console: http://192.168.7.23:8081/host/login"
    assert console("--host", "::") == "Host console: http://192.168.7.23:5000/host/login"
    assert console("--url", "http://vtt.lan:9000/", "--port", "8081") == "Host console: http://vtt.lan:9000/host/login"
    monkeypatch.setenv("VTT_BASE_URL", "https://vtt.example.org/")
    assert console("--host", "0.0.0.0") == "Host console: https://vtt.example.org/host/login"


def _commands(group, path=()):
    import click

    for name, command in group.commands.items():
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))


def test_help_shows_no_doubled_percent_signs():
    runner = CliRunner()
    analyze = runner.invoke(main, ["analyze", "--help"])
    assert analyze.exit_code == 0 and "%%" not in analyze.output
    assert "Detection % at or below" in " ".join(analyze.output.split())
    for path, _command in [((), main), *_commands(main)]:
        result = runner.invoke(main, [*path, "--help"])
        assert result.exit_code == 0 and "%%" not in result.output, path


def test_generated_secrets_are_kept_in_the_instance_folder(instance, monkeypatch):
    from vtt.config import Settings

    monkeypatch.delenv("VTT_HOST_PASSWORD")
    first, second = Settings.from_env(), Settings.from_env()
    assert first.host_password == second.host_password and len(first.host_password) >= 12
    assert first.secret_key == second.secret_key and len(first.secret_key) == 64
    assert first.host_password_source == str(instance / "host_password")
    assert oct((instance / "host_password").stat().st_mode & 0o777) == "0o600"
    assert first.database_url == f"sqlite:///{instance / 'vtt.db'}"
    (instance / "secret_key").write_text("")  # emptied by hand: a new one is made, never ""
    assert len(Settings.from_env().secret_key) == 64
    monkeypatch.setenv("DATABASE_URL", "postgres://u@h/db")
    assert Settings.from_env().database_url == "postgresql+psycopg://u@h/db"


def test_processes_starting_together_agree_on_the_secrets(tmp_path):
    script = (
        "import os, sys; os.environ['VTT_INSTANCE_PATH'] = sys.argv[1]; os.environ.pop('VTT_HOST_PASSWORD', None);"
        "from vtt.config import Settings; s = Settings.from_env(); print(s.host_password, s.secret_key)"
    )
    folder = tmp_path / "shared-instance"
    starts = [
        subprocess.Popen([sys.executable, "-c", script, str(folder)], stdout=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    outputs = {process.communicate(timeout=60)[0].strip() for process in starts}
    assert len(outputs) == 1 and all(len(part) >= 12 for part in outputs.pop().split())
    assert sorted(p.name for p in folder.iterdir()) == ["host_password", "secret_key"]  # no staged leftovers


def test_console_script_is_installed(database_url):
    vtt = os.path.join(os.path.dirname(sys.executable), "vtt")
    result = subprocess.run(
        [vtt, "questions", "check", str(DATA / "spec_examples.csv")], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "spec_examples.csv: 5 questions, format csv, no problems" in result.stdout


def test_build_picks_a_set_under_quotas_and_writes_it(run, tmp_path):
    assert run("questions", "import", str(DATA / "spec_examples.csv"), "--bank", "Spec").exit_code == 0
    out = tmp_path / "set.csv"
    result = run(
        "questions",
        "build",
        "--bank",
        "Spec",
        "--count",
        "4",
        "--rounds",
        "2",
        "--mcq",
        "2",
        "--shot",
        "2",
        "--seed",
        "5",
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.output
    assert "4 questions from 'Spec' in 2 rounds (seed 5)" in result.output
    assert "  round 1 #1 " in result.output and "  round 2 #2 " in result.output
    assert any(
        line.startswith("Character") and line.split()[1:4] == ["5", "100.0", "4"] for line in result.output.splitlines()
    )
    written = read_bank(out).records
    assert len(written) == 4 and sorted(r.round for r in written) == [1, 1, 2, 2]
    assert sum(r.type == "mcq" for r in written) == 2 and sum(r.clip == "shot" for r in written) == 2
    again = run(
        "questions",
        "build",
        "--bank",
        "Spec",
        "--count",
        "4",
        "--rounds",
        "2",
        "--mcq",
        "2",
        "--shot",
        "2",
        "--seed",
        "5",
    )
    assert again.output.splitlines()[1:5] == result.output.splitlines()[1:5]  # same seed, same set


def test_build_names_what_the_bank_lacks(run):
    assert run("questions", "import", str(DATA / "spec_examples.csv"), "--bank", "Spec").exit_code == 0
    result = run("questions", "build", "--bank", "Spec", "--count", "4", "--rounds", "2", "--mcq", "3")
    assert result.exit_code == 1 and "error: bank has 2 mcq questions, the set needs 3" in result.output
    assert "error: no question bank named 'Nope'" in run("questions", "build", "--bank", "Nope").output


def test_tagging_an_imported_benchmark_from_a_csv(run, db, tmp_path):
    bank_file = tmp_path / "dramaqa.json"
    bank_file.write_text(
        '[{"qid": 1, "que": "Who?", "answers": ["a","b"], "correct_idx": 0, "videoType": "shot"},'
        ' {"qid": 2, "que": "Why?", "answers": ["a","b"], "correct_idx": 1, "videoType": "scene"}]',
        encoding="utf-8",
    )
    assert run("questions", "import", str(bank_file), "--bank", "DQA").exit_code == 0
    bad = tmp_path / "bad_tags.csv"
    bad.write_text(
        "qid,targets,contents,thinking\n1,Character*,Identity,Recall\n9,Place,Identity,Recall\n"
        "2,Character,,Reasoning\n",
        encoding="utf-8",
    )
    result = run("questions", "tag", str(bad), "--bank", "DQA")
    assert result.exit_code == 1 and "error: 1 problem; no tag was changed" in result.output
    assert "bad_tags.csv: row 4: field 'contents': needs 1-3 CONTENT tags, has 0" in result.output
    bad.write_text(
        "qid,targets,contents,thinking\n1,Character*,Identity,Recall\n9,Place,Identity,Recall\n", encoding="utf-8"
    )
    result = run("questions", "tag", str(bad), "--bank", "DQA")
    assert "bad_tags.csv: row 3: field 'qid': '9' is not in bank 'DQA'" in result.output
    assert db.scalar(select(func.count()).select_from(QuestionTag)) == 0
    good = tmp_path / "tags.csv"
    good.write_text(
        "qid,targets,contents,thinking\n1,Character*;Behavior,Identity,Grasping\n"
        "2,Character;Emotion*,Motivation,Reasoning\n",
        encoding="utf-8",
    )
    assert run("questions", "tag", str(good), "--bank", "DQA").output == "tagged 2 questions in bank 'DQA'\n"
    good.write_text("qid,targets,contents,thinking\n1,Object*,Feature,Recall\n", encoding="utf-8")
    assert run("questions", "tag", str(good), "--bank", "DQA").exit_code == 0  # re-tagging replaces
    tags = db.execute(
        select(Question.qid, QuestionTag.module, QuestionTag.element, QuestionTag.is_key)
        .join(QuestionTag)
        .order_by(Question.qid, QuestionTag.position)
    ).all()
    assert tags == [
        ("1", "target", "Object", True),
        ("1", "content", "Feature", False),
        ("1", "thinking", "Recall", False),
        ("2", "target", "Character", False),
        ("2", "target", "Emotion", True),
        ("2", "content", "Motivation", False),
        ("2", "thinking", "Reasoning", False),
    ]


def test_database_trouble_is_one_line_not_a_traceback(tmp_path, monkeypatch):
    runner = CliRunner()

    def error_of(url: str, *args: str) -> str:
        monkeypatch.setenv("DATABASE_URL", url)
        result = runner.invoke(main, list(args) or ["questions", "list"])
        assert result.exit_code == 1 and "Traceback" not in result.output
        return result.output.strip()

    assert error_of(f"sqlite:///{tmp_path}/missing/dir/x.db") == (
        f"Error: cannot use the database at sqlite:///{tmp_path}/missing/dir/x.db: unable to open database file"
    )
    assert error_of(f"sqlite:///{tmp_path}/empty.db") == (
        f"Error: the database at sqlite:///{tmp_path}/empty.db has no vtt tables yet: run `vtt db upgrade` "
        "(no such table: question_bank)"
    )
    assert error_of("nosuchdialect://x/y").startswith("Error: DATABASE_URL is not a usable database URL")
    assert error_of(f"sqlite:///{tmp_path}/empty.db", "db", "upgrade", "0099") == (
        "Error: migration: Can't locate revision identified by '0099'"
    )
