"""The session engine is pure code: importing it loads no web stack, no database layer and no pandas.

Checked in a fresh interpreter (this one has long since imported Flask and pandas for other tests).
``vtt.sessions.create`` (session creation) may import more and is left out.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ("vtt.engine.rules", "vtt.engine.state", "vtt.engine.audiences", "vtt.engine.tells", "vtt.kinds",
          "vtt.engine.text")
BANNED = ("flask", "flask_socketio", "socketio", "engineio", "pandas", "sqlalchemy")

PROBE = f"""
import importlib, json, sys
for name in {ENGINE!r}:
    importlib.import_module(name)
banned = {BANNED!r}
print(json.dumps({{
    "loaded": sorted(m for m in sys.modules if m.split(".")[0] in banned),
    "setup": "vtt.sessions.create" in sys.modules,
    "engine": [name for name in {ENGINE!r} if name in sys.modules],
}}))
"""


def test_engine_imports_no_web_stack_no_database_and_no_pandas():
    done = subprocess.run([sys.executable, "-c", PROBE], check=False, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["engine"] == list(ENGINE)
    assert found["loaded"] == [], f"importing the engine loaded {found['loaded']}"
    assert found["setup"] is False  # the probe must not have pulled session creation in by the way
