"""The pages' view rules under Node: `node --test tests/js/` (``make test-js``), so that ``make test`` runs them."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import IN_CI

ROOT = Path(__file__).resolve().parent.parent
CASES = json.loads((ROOT / "tests" / "data" / "view_cases.json").read_text(encoding="utf-8"))


def test_the_pages_view_rules_pass_the_shared_cases():
    node = shutil.which("node")
    if node is None:
        if IN_CI:
            pytest.fail("node is needed in CI: it runs the pages' tests (tests/js)")
        pytest.skip("node is not installed")
    run = subprocess.run(
        [node, "--test", "--test-reporter=tap", "tests/js/"],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = run.stdout + run.stderr
    assert run.returncode == 0, report
    counts = {name: int(number) for name, number in re.findall(r"^# (pass|fail) (\d+)$", run.stdout, re.MULTILINE)}
    assert counts["fail"] == 0 and counts["pass"] >= len(CASES), report
