"""The pages' view rules under Node: `node --test tests/js/` (``make test-js``), so that ``make test`` runs them."""

import json
import re
import shutil
import subprocess

from tests.support.machine import require_programs
from tests.support.paths import ROOT

CASES = json.loads((ROOT / "tests" / "data" / "view_cases.json").read_text(encoding="utf-8"))


def test_the_pages_view_rules_pass_the_shared_cases():
    require_programs("node", install="install Node.js: it runs the pages' tests (tests/js)")
    node = shutil.which("node")
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
