"""`analysis` stands alone: DataFrames in, numbers and PDFs out, nothing from the app."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import analysis


def test_analysis_imports_nothing_from_vtt_or_the_web_stack():
    modules = [f"analysis.{m.name}" for m in pkgutil.iter_modules(analysis.__path__)]
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('vtt', 'flask', 'flask_socketio', "
        "'sqlalchemy')))"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert len(modules) >= 10
    assert result.stdout.strip() == "[]"
