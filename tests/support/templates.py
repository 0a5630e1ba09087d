"""The reports' sentence templates as the code hands them to ``t(...)`` (analysis/words.py), read from source."""

from __future__ import annotations

import ast
from pathlib import Path


def t_templates(path: Path) -> list[str]:
    """The string literals handed to ``t(...)`` in a module, or in every module of a package (both arms of
    ``t(a if x else b)``)."""
    found = []
    modules = sorted(path.glob("*.py")) if path.is_dir() else [path]
    for node in (node for module in modules for node in ast.walk(ast.parse(module.read_text(encoding="utf-8")))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "t" and node.args:
            arg = node.args[0]
            for case in [arg.body, arg.orelse] if isinstance(arg, ast.IfExp) else [arg]:
                if isinstance(case, ast.Constant) and isinstance(case.value, str):
                    found.append(case.value)
    return found
