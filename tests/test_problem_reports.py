"""Problems that read well at any scale: each kind once with its count and first rows; every one in a CSV."""

from __future__ import annotations

import csv
import json

from vtt.problems import SUMMARY_LINES, Problem, summarize

TVQA_TEST_LINE = {
    "a0": "He laughs",
    "a1": "He leaves",
    "a2": "He cries",
    "a3": "He sings",
    "a4": "He sleeps",
    "vid_name": "s01e01_seg01_clip_00",
    "show_name": "The Big Bang Theory",
    "ts": "NaN-NaN",
}


def write_test_split(path, rows: int, **changes) -> None:
    """A TVQA test split as published: no answer_idx, integer qids, NaN-NaN timestamps."""
    with path.open("w", encoding="utf-8") as handle:
        for qid in range(rows):
            line = {**TVQA_TEST_LINE, "qid": qid, "q": f"What does Sheldon do ({qid})?", **changes}
            handle.write(json.dumps(line) + "\n")


def test_a_problem_on_every_one_of_100000_rows_is_a_few_lines(run, database_url, tmp_path):
    split = tmp_path / "tvqa_val.jsonl"
    write_test_split(split, 100_000, answer_idx=9)  # a key out of range on every line
    out = tmp_path / "problems.csv"
    result = run("questions", "check", str(split), "--problems-out", str(out))
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) < 40, lines[:50]
    assert lines[0] == "error: 100,000 problems; the file is not valid"  # NaN-NaN spans are quirks, not problems
    assert (
        f"  tvqa_val.jsonl: 100,000 lines (1, 2, 3, 4, 5, ...; all of them in {out}): field 'answer_idx': "
        "index 9 is out of range 0-4" in lines
    ), lines
    assert "reading" not in result.output  # not a terminal: no progress text at all
    with out.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 100_000 and list(rows[0]) == ["file", "row", "field", "value", "message"]
    assert rows[0] == {
        "file": "tvqa_val.jsonl",
        "row": "1",
        "field": "answer_idx",
        "value": "9",
        "message": "index 9 is out of range 0-4",
    }


def test_a_split_without_keys_is_one_line_and_imports_with_the_flag(run, database_url, tmp_path):
    split = tmp_path / "tvqa_test_public.jsonl"
    write_test_split(split, 7_623)
    refused = run("questions", "check", str(split))
    assert refused.exit_code == 1
    assert refused.output.strip().splitlines() == [
        "error: 1 problem; the file is not valid; --allow-missing-keys takes questions without a key",
        "  tvqa_test_public.jsonl: field 'answer_idx': no question has a key (7,623 lines; a test split?): "
        "take questions without a key to import them, and their answers are then graded by hand or left out "
        "of accuracy",
    ]
    checked = run("questions", "check", str(split), "--allow-missing-keys")
    assert checked.exit_code == 0, checked.output
    assert (
        "tvqa_test_public.jsonl: 7623 questions, format tvqa, no problems; 7,623 without a key (their answers "
        "are graded by hand or left out of accuracy)"
    ) in checked.output
    imported = run("questions", "import", str(split), "--allow-missing-keys", "--bank", "TVQA test")
    assert imported.exit_code == 0 and "7,623 without a key" in imported.output
    assert run("questions", "list").output.strip() == "TVQA test\t7623\t(7623 without a key)"


def test_a_file_where_only_some_lines_lack_a_key_is_an_error_unless_allowed(run, database_url, tmp_path):
    split = tmp_path / "tvqa_mixed.jsonl"
    lines = [
        {**TVQA_TEST_LINE, "qid": n, "q": f"Why ({n})?", **({} if n in (2, 5) else {"answer_idx": 0})} for n in range(8)
    ]
    split.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    refused = run("questions", "check", str(split))
    assert refused.exit_code == 1
    assert (
        "  tvqa_mixed.jsonl: 2 lines (3, 6): field 'answer_idx': is empty; give the 0-based index or the text "
        "of the correct option"
    ) in refused.output.splitlines()
    allowed = run("questions", "import", str(split), "--allow-missing-keys", "--bank", "mixed")
    assert allowed.exit_code == 0 and "2 without a key" in allowed.output


def test_one_problem_reads_as_before_and_a_few_repeats_name_every_row():
    one = [Problem("bank.csv", 3, "answer", "is empty")]
    assert summarize(one, "see problems.csv") == ["bank.csv: row 3: field 'answer': is empty"]
    three = [Problem("bank.csv", row, "clip", "must be 'shot' or 'scene', not 'wide'") for row in (2, 5, 9)]
    summary = summarize(three, "see problems.csv")
    assert summary == ["bank.csv: 3 rows (2, 5, 9): field 'clip': must be 'shot' or 'scene', not 'wide'"]


def test_many_kinds_of_problem_are_capped_with_a_pointer_to_the_csv():
    problems = [Problem("bank.csv", row, "question", f"is {row} characters too long") for row in range(2, 102)]
    lines = summarize(problems, "see problems.csv")
    assert len(lines) == SUMMARY_LINES + 1
    assert lines[0] == "bank.csv: row 2: field 'question': is 2 characters too long"
    assert lines[-1] == f"... and {100 - SUMMARY_LINES} more kinds of problem (see problems.csv)"


def test_import_writes_the_problem_csv_and_imports_nothing(run, database_url, tmp_path):
    split = tmp_path / "test.jsonl"
    write_test_split(split, 12, answer_idx="x")
    out = tmp_path / "p.csv"
    result = run("questions", "import", str(split), "--problems-out", str(out))
    assert result.exit_code == 1 and "nothing was imported" in result.output
    assert len(out.read_text(encoding="utf-8").strip().splitlines()) == 1 + 12
    assert run("questions", "list").output.strip() == "no banks yet"


def keyed(qid, **changes):
    return {**TVQA_TEST_LINE, "qid": qid, "q": f"What does Sheldon do ({qid})?", "answer_idx": 1, **changes}


def test_quirks_of_published_files_are_counted_warnings_and_strict_refuses_them(run, database_url, tmp_path):
    lines = [
        keyed(0),
        keyed(1, ts="12.5-12.5"),
        keyed(2, a0="  He laughs "),
        keyed(3, q="What does Sheldon do (0)?"),
        keyed(4, ts="3.0-9.5"),
        keyed(5),
    ]
    split = tmp_path / "tvqa_val.jsonl"
    split.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    checked = run("questions", "check", str(split))
    assert checked.exit_code == 0, checked.output
    assert "tvqa_val.jsonl: 6 questions, format tvqa, no problems" in checked.output
    quirks = checked.stderr
    assert "warning: 13 known quirks of published files, imported as noted (--strict refuses them):" in quirks
    for expected in [
        "tvqa_val.jsonl: 4 lines (1, 3, 4, 6): field 'ts': is NaN: no localised span, the whole clip plays",
        "tvqa_val.jsonl: line 2: field 'ts': a zero-length span (12.5-12.5): the whole clip plays",
        "tvqa_val.jsonl: line 3: field 'a0..a4': options had stray whitespace (trimmed)",
        "tvqa_val.jsonl: line 4: field 'q': the same text as line 1",
        "tvqa_val.jsonl: 6 lines (1, 2, 3, 4, 5, ...; --strict lists them as problems): field 'qid': "
        "is a number; kept as text",
    ]:
        assert expected in quirks, quirks

    imported = run("questions", "import", str(split), "--bank", "val")
    assert imported.exit_code == 0 and "imported 6 questions" in imported.output
    from vtt.banks import bank_by_name, bank_records
    from vtt.db import make_db_factory, make_engine

    engine = make_engine(database_url)
    with make_db_factory(engine)() as db:
        records = {r.qid: r for r in bank_records(db, bank_by_name(db, "val"))}
    engine.dispose()
    assert (records["0"].start, records["0"].end) == (None, None)  # the whole clip
    assert (records["1"].start, records["1"].end) == (None, None)
    assert (records["4"].start, records["4"].end) == (3.0, 9.5)
    assert records["2"].choices[0] == "He laughs"

    strict = run("questions", "check", str(split), "--strict")
    assert strict.exit_code == 1
    assert "(a quirk, refused as asked)" in strict.output and "error: " in strict.output


def test_on_a_terminal_a_progress_bar_runs_and_clears_its_line_before_the_verdict(database_url, tmp_path):
    """The command in a pseudo-terminal (80 x 24), as a person runs it."""
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import sys
    import termios
    from pathlib import Path

    split = tmp_path / "tvqa_val.jsonl"
    write_test_split(split, 60_000, answer_idx=9)
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    vtt = Path(sys.executable).parent / "vtt"
    process = subprocess.Popen(
        [str(vtt), "questions", "check", str(split)],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env={**os.environ, "DATABASE_URL": database_url},
        close_fds=True,
    )
    os.close(terminal)
    output = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        output += chunk
    assert process.wait(120) == 1
    os.close(controller)
    text = output.decode("utf-8", "replace")
    assert "reading tvqa_val.jsonl" in text and "%|" in text  # the bar ran
    before, _, verdict = text.partition("error: 60,000 problems")
    assert verdict and before.rstrip(" ").endswith("\r")  # its line was blanked before the verdict began
