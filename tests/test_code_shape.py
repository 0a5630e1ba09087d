"""The code's shape, read from the files: modules and functions of a size a reader takes in, public seams between
modules, domain code below the command line, and code and docs that name the product rather than its history."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.support.paths import ROOT

MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 120
PACKAGES = ("vtt", "analysis")
SHAPED = (*PACKAGES, "tests", "bench")  # the app, its tests and its benchmarks keep the same shape
HISTORY = re.compile(r"\b(part|issue) \d+\b|SPEC section|SPEC\.md|§", re.IGNORECASE)
CODEC_NAME = "MPEG-4 Part 2"  # a codec's own name, not a history note


def sources(*roots: str) -> list[Path]:
    return sorted(path for root in roots for path in (ROOT / root).rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_module(path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


@pytest.mark.parametrize("path", sources(*SHAPED), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_module_is_longer_than_a_reader_takes_in(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_MODULE_LINES


def test_no_function_is_longer_than_its_steps():
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path in sources(*SHAPED)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []


def test_what_crosses_a_module_boundary_is_public():
    private = []
    for path in sources(*SHAPED):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and imported_module(path, node) != module_name(path):
                names = [alias.name for alias in node.names if alias.name.startswith("_")]
                names = [name for name in names if not name.startswith("__")]
                if names:
                    private.append(f"{path.relative_to(ROOT)}:{node.lineno} {imported_module(path, node)} {names}")
    assert private == []


# A tuple's own API: public, its underscore only keeps it apart from the field names.
TUPLE_API = {"_replace", "_asdict", "_fields", "_make"}
# python-socketio's Redis manager has no public way to make its listener end as Redis's listen() does when the
# connection dies: the one test of that replaces the library's own generator.
PRIVATE_REACHED = {"tests/test_serve_checks.py: manager._listen"}


def private_members_reached(path: Path) -> list[str]:
    """``obj._member`` where ``obj`` is another object: not ``self``/``cls`` nor ``super()``."""
    reached = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_") or node.attr.startswith("__"):
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
            continue
        if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
            continue
        if node.attr not in TUPLE_API:
            reached.append((node.lineno, ast.unparse(node)))
    return [f"{path.relative_to(ROOT)}: {expression}" for _, expression in sorted(reached)]


def test_tests_and_benchmarks_reach_other_objects_through_public_members():
    reached = [found for path in sources("tests", "bench") for found in private_members_reached(path)]
    assert sorted(set(reached) - PRIVATE_REACHED) == []


def test_domain_code_sits_below_the_command_line():
    importing_cli = []
    for path in sources("vtt"):
        if path.is_relative_to(ROOT / "vtt" / "cli"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules = []
            if isinstance(node, ast.ImportFrom):
                modules = [imported_module(path, node)]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            if any(module == "vtt.cli" or module.startswith("vtt.cli.") for module in modules):
                importing_cli.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert importing_cli == []


# Where a command line is the only way in, its messages may name its options: the AI player's process (vtt agent),
# preparing clips from a folder (vtt media), serving (vtt serve), the command lines printed for others to run
# (links) and the simulation (vtt simulate); the juries' request example quotes `vtt jury ai` for the docs.
OPTION_WORDS_ALLOWED = ("vtt/agents/", "vtt/media/", "vtt/serving/", "vtt/sessions/links.py")
OPTION_WORDS_ALLOWED += ("vtt/sessions/simulation.py", "vtt/juries/request_example.py")
OPTION_WORD = re.compile(r"(?<![\w-])--[a-z][a-z-]+")


def option_words(path: Path) -> list[str]:
    """The command-line options a module's strings (not its docstrings or comments) name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        f"{path.relative_to(ROOT)}:{node.lineno}: {word}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        for word in OPTION_WORD.findall(node.value)
    ]


def test_domain_errors_name_no_command_line_option():
    """A domain's message reaches the web forms, the jobs and the command line alike: it names the setting in plain
    words, and the command line puts its option before it (vtt.cli.tools.with_option)."""
    found = [
        word
        for path in sources(*PACKAGES)
        if not path.is_relative_to(ROOT / "vtt" / "cli")
        and not str(path.relative_to(ROOT)).startswith(OPTION_WORDS_ALLOWED)
        for word in option_words(path)
    ]
    assert found == []


def test_code_and_docs_name_the_product_not_its_history():
    files = [
        *sources(*PACKAGES, "tests", "bench", "migrations", "scripts"),
        *(ROOT / "static" / "js").glob("*.js"),
        *(ROOT / "templates").rglob("*.html"),
        *(ROOT / "docs").glob("*.md"),
        ROOT / "README.md",
        ROOT / "Makefile",
        ROOT / "pyproject.toml",
    ]
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in files
        if path != Path(__file__)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if HISTORY.search(line.replace(CODEC_NAME, ""))
    ]
    assert found == []
