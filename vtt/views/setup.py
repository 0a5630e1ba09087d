"""Creating a session in the host console: the form becomes the same design document ``vtt session create`` reads.

Validation is :mod:`vtt.sessions.create`'s (``SessionConfig.from_dict``, ``create_session``, the juror helpers);
this module only turns form fields into that document and puts each problem back next to the field it names.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from sqlalchemy import func, select
from werkzeug.datastructures import FileStorage, MultiDict

from ..banks.upload import upload_name
from ..extensions import request_db
from ..models import ClipPlayback, PassRule, Question, QuestionBank, RevealPolicy, ScoringMethod, Study, VttSession
from ..offloop import off_loop
from ..on_behalf.paper_jurors import PAPER_GROUP
from ..problems import InputError, Problem, summarize
from ..sessions.create import ANSWER_MODES, SessionConfig, create_session, numbered_jurors, read_jurors_csv
from ..studies import pooled_detection
from .auth import host_required

bp = Blueprint("setup", __name__, url_prefix="/host")

# One checkbox per answer mode (mode_text, mode_spoken, mode_read_aloud), and "modes", a hidden field that says the
# boxes were on the form (an unticked box is not sent: without the field, as from an older form, the default holds).
MODE_FIELDS = ("modes", *(f"mode_{mode}" for mode in ANSWER_MODES))
PLAYER_FIELDS = ("name", "kind", "age", "stage", "mcq", "open", *MODE_FIELDS)
BLANK_PLAYER = {**dict.fromkeys(PLAYER_FIELDS, ""), "mode_text": "on"}  # a new row answers by text
JUROR_FIELDS = ("label", "age_band", "sex", "expert", "paper")  # paper: ticked for a juror without a device
BLANK_PLAYER_ROWS = 5
BLANK_JUROR_ROWS = 4
MAX_FORM_ROWS = 1000  # rows read from a posted form (setup.py refuses more jurors than this anyway)
EXPERT_CHOICES = {"": None, "yes": True, "no": False}
DEFAULTS = {
    "rounds": "5",
    "questions_per_round": "6",
    "reveal_policy": RevealPolicy.END.value,
    "pass_rule": PassRule.HUMAN_TIE.value,
    "pass_alpha": "0.05",
    "pass_threshold_pct": "70",
    "ai_votes_per_juror": "1",
    "scoring_method": ScoringMethod.COGSCI2024.value,
    "jurors_source": "count",
    "jurors_count": "16",
    "clip_playback": ClipPlayback.HOST.value,
    "language": "",  # the questions' language: players' pages read aloud and are shown in it; spoken answers too
}
WHOLE_NUMBERS = ("rounds", "questions_per_round", "seed", "answer_seconds", "vote_seconds", "ai_votes_per_juror")
DECIMALS = ("pass_alpha", "pass_threshold_pct")


@dataclass
class SetupForm:
    """The posted (or blank) form: its values for re-display, and the problems found, by form field."""

    values: dict[str, str]
    players: list[dict[str, str]]
    jurors: list[dict[str, str]]
    errors: dict[str, list[str]] = field(default_factory=dict)
    problems: list[tuple[str, Problem]] = field(default_factory=list)  # (form field, problem), for the summary

    @classmethod
    def blank(cls, bank: str = "") -> SetupForm:
        return cls(
            {**DEFAULTS, "bank": bank},
            [dict(BLANK_PLAYER) for _ in range(BLANK_PLAYER_ROWS)],
            [dict.fromkeys(JUROR_FIELDS, "") for _ in range(BLANK_JUROR_ROWS)],
        )

    @classmethod
    def posted(cls, form: MultiDict) -> SetupForm:
        values = {
            key: form.get(key, "").strip()
            for key in (*DEFAULTS, "name", "bank", "seed", "answer_seconds", "vote_seconds", "round_themes")
        }
        values["round_themes"] = form.get("round_themes", "")
        values["open_join"] = "on" if form.get("open_join") else ""
        return cls(values, _rows(form, "players", PLAYER_FIELDS), _rows(form, "jurors", JUROR_FIELDS))

    def add(self, key: str, problem: Problem) -> None:
        self.errors.setdefault(key, []).append(problem.message)
        self.problems.append((key, problem))

    def design(self, juror_file: FileStorage | None) -> tuple[dict[str, Any], list[int], list[int]]:
        """The design document, and the form row of each player and juror it lists (blank rows are left out)."""
        data: dict[str, Any] = {"name": self.values["name"], "bank": self.values["bank"]}
        for key in WHOLE_NUMBERS:
            if self.values[key]:
                data[key] = _whole(self.values[key])
        for key in DECIMALS:
            if self.values[key]:
                data[key] = _decimal(self.values[key])
        for key in ("reveal_policy", "pass_rule", "scoring_method", "clip_playback"):
            data[key] = self.values[key]
        data["open_join"] = bool(self.values["open_join"])
        if self.values["language"]:
            data["language"] = self.values["language"]
        themes = [line.strip() for line in self.values["round_themes"].splitlines()]
        while themes and not themes[-1]:
            themes.pop()
        if themes:
            data["round_themes"] = themes
        player_rows = [i for i, row in enumerate(self.players) if _filled(row, ("name", "age", "stage", "mcq", "open"))]
        data["players"] = [_player(self.players[i]) for i in player_rows]
        juror_rows: list[int] = []
        source = self.values["jurors_source"]
        if source == "list":
            juror_rows = [i for i, row in enumerate(self.jurors) if _filled(row, JUROR_FIELDS)]
            data["jurors"] = [_juror(self.jurors[i]) for i in juror_rows]
        elif source == "csv":
            data["jurors"] = self._csv_jurors(juror_file)
        else:
            data["jurors"] = self._numbered_jurors()
        return data, player_rows, juror_rows

    def _numbered_jurors(self) -> list[dict[str, Any]]:
        text = self.values["jurors_count"]
        if not (text.isascii() and text.isdigit()):  # '²' is a digit to isdigit(), not to int()
            self.add(
                "jurors_count",
                Problem("form", None, "jurors_count", _("must be a whole number, not %(value)r", value=text)),
            )
            return []
        try:
            return numbered_jurors(int(text))
        except InputError as error:
            for problem in error.problems:
                self.add("jurors_count", problem)
            return []

    def _csv_jurors(self, upload: FileStorage | None) -> list[dict[str, Any]]:
        if upload is None or not upload.filename:
            self.add("jurors_csv", Problem("form", None, "jurors_csv", _("choose a CSV file of jurors")))
            return []
        with tempfile.TemporaryDirectory(prefix="vtt-jurors-") as folder:
            path = Path(folder) / upload_name(upload.filename)  # problems name the file as the host knows it
            upload.save(path)
            try:
                return read_jurors_csv(path)
            except InputError as error:
                for line in summarize(error.problems, _("fix these first")):
                    self.add("jurors_csv", Problem(path.name, None, None, line))
                return []

    def place(self, problems: list[Problem], player_rows: list[int], juror_rows: list[int]) -> None:
        """Put each of setup.py's problems next to the form field it names."""
        for problem in problems:
            self.add(_form_key(problem.field or "", player_rows, juror_rows, self.values["jurors_source"]), problem)


def _rows(form: MultiDict, prefix: str, fields: tuple[str, ...]) -> list[dict[str, str]]:
    numbers = sorted(
        {int(match.group(1)) for key in form if (match := re.fullmatch(rf"{prefix}-(\d{{1,4}})-\w+", key))}
    )[:MAX_FORM_ROWS]
    return [{name: form.get(f"{prefix}-{n}-{name}", "").strip() for name in fields} for n in numbers]


def _filled(row: dict[str, str], names: tuple[str, ...]) -> bool:
    return any(row.get(name) for name in names)


def _whole(text: str) -> int | str:
    """A whole number, or the text as typed (setup.py then says what it must be)."""
    return int(text) if re.fullmatch(r"-?\d{1,12}", text) else text


def _decimal(text: str) -> float | str:
    """A number (a decimal comma too), or the text as typed."""
    try:
        return float(text.replace(",", "."))
    except ValueError:
        return text


def _player(row: dict[str, str]) -> dict[str, Any]:
    player: dict[str, Any] = {"name": row["name"], "kind": row["kind"] or "human"}
    if row["age"]:
        player["age"] = _whole(row["age"])
    if row["stage"]:
        player["stage"] = row["stage"]
    backends = {kind: row[kind] for kind in ("mcq", "open") if row[kind]}
    if backends:
        player["backends"] = backends
    modes = [mode for mode in ANSWER_MODES if row[f"mode_{mode}"]]
    # Absent means ["text"] (the design stays what it was before answer modes). An AI row's boxes are disabled, so
    # not sent, by the page: the default too; a mode ticked for an AI player without JavaScript is refused by name.
    if row["modes"] and modes != ["text"]:
        player["answer_modes"] = modes
    return player


def _juror(row: dict[str, str]) -> dict[str, Any]:
    juror: dict[str, Any] = {"label": row["label"]}
    for name in ("age_band", "sex"):
        if row[name]:
            juror[name] = row[name]
    if row["expert"] in EXPERT_CHOICES and EXPERT_CHOICES[row["expert"]] is not None:
        juror["expert"] = EXPERT_CHOICES[row["expert"]]
    if row[
        "paper"
    ]:  # a paper juror: the printed sheet and the host's entry form list them (vtt.on_behalf.paper_jurors)
        juror["group"] = PAPER_GROUP
    return juror


def _form_key(name: str, player_rows: list[int], juror_rows: list[int], juror_source: str) -> str:
    """``players[2].age`` -> ``players-<form row>-age``; the jurors' problems go to the field they came from."""
    match = re.fullmatch(r"(players|jurors)\[(\d+)\](?:\.(\w+))?", name)
    if match is None:
        if name == "jurors":
            return {"count": "jurors_count", "csv": "jurors_csv"}.get(juror_source, "jurors")
        return name
    section, index, field_name = match.group(1), int(match.group(2)), match.group(3) or ""
    rows = player_rows if section == "players" else juror_rows
    if section == "jurors" and juror_source != "list" or index >= len(rows):
        return "jurors" if section == "jurors" else section
    if field_name == "backends":
        field_name = ""  # the row's mcq and open programs together
    return f"{section}-{rows[index]}-{field_name}".rstrip("-")


def bank_choices() -> list[dict[str, Any]]:
    """Each bank with its size and whether its own round column deals the questions."""
    db = request_db()
    banks = db.scalars(select(QuestionBank).order_by(QuestionBank.name)).all()
    sizes = dict(db.execute(select(Question.bank_id, func.count()).group_by(Question.bank_id)).all())
    dealt: dict[int, dict[int, int]] = {}
    for bank_id, number, count in db.execute(
        select(Question.bank_id, Question.suggested_round, func.count())
        .where(Question.suggested_round.is_not(None))
        .group_by(Question.bank_id, Question.suggested_round)
    ):
        dealt.setdefault(bank_id, {})[number] = count
    return [{"name": bank.name, "questions": sizes.get(bank.id, 0), "rounds": dealt.get(bank.id, {})} for bank in banks]


@bp.route("/sessions/new", methods=["GET", "POST"])
@host_required
def new_session():
    if request.method == "GET":
        form = SetupForm.blank(request.args.get("bank", ""))
        return _render(form, planned=_plan(request.args))
    form = SetupForm.posted(request.form)
    data, player_rows, juror_rows = form.design(request.files.get("jurors_csv"))
    db = request_db()
    try:
        config = SessionConfig.from_dict(data, source="form")
        if not form.problems:  # jurors that could not be read: the rest is checked, nothing is created
            created = create_session(db, config, actor="host")
            db.commit()
    except InputError as error:
        db.rollback()
        form.place(error.problems, player_rows, juror_rows)
    if form.problems:
        return _render(form), 422
    flash(_("Session %(name)s created: join code %(code)s.", name=created.name, code=created.join_code), "success")
    problems = _clip_preflight(created)
    if problems:
        flash(
            _(
                "Not every clip of this session will play (the live console lists each clip, with a preview): "
                "%(problems)s",
                problems=" ".join(problems),
            ),
            "error",
        )
    return redirect(url_for("host.session_config", session_id=created.id))


def _clip_preflight(created: VttSession) -> list[str]:
    """The new session's clips checked as `vtt media check` does, beside the event loop; what is wrong, grouped."""
    from ..media.check import check_clips
    from ..media.preflight import preflight_lines, session_refs

    refs = [ref for _where, ref in session_refs(request_db(), created.id)]
    return preflight_lines(created.name, off_loop(check_clips, Path(current_app.config["MEDIA_DIR"]), refs))


def _render(form: SetupForm, planned: dict | None = None) -> str:
    return render_template(
        "host/new_session.html",
        form=form,
        banks=bank_choices(),
        scoring_methods=[(method.value, method.value) for method in ScoringMethod],
        planned=planned or _plan({}),
    )


# The plan form's fields, their defaults (the VTT case study's design) and bounds.
PLAN_FIELDS = {
    "jurors": ("16", 1, 10_000),
    "rounds": ("5", 1, 100),
    "players": ("5", 2, 50),
    "ai": ("1", 1, 49),
    "ai_votes": ("1", 1, 49),
}


def _plan(args) -> dict:
    """The setup page's plan form (GET ``plan_*`` fields) and, when it was sent, the plan of its design
    (``analysis.planner``, beside the event loop): what a jury of that size can show at the assumed rate."""
    values = {name: args.get(f"plan_{name}", default) for name, (default, _low, _high) in PLAN_FIELDS.items()}
    values |= {
        "pass_rule": args.get("plan_pass_rule", PassRule.HUMAN_TIE.value),
        "rate": args.get("plan_rate", ""),
        "study": args.get("plan_study", ""),
    }
    from analysis.planner import DEFAULT_RATE, Design, plan  # numpy and scipy: loaded with the setup page

    studies = request_db().scalars(select(Study).order_by(Study.name)).all()
    case_rate = round(100 * DEFAULT_RATE, 1)
    rate, source = case_rate, _("the VTT case study's mean detection")
    study = next((s for s in studies if str(s.id) == values["study"]), None)
    if study is not None:
        pooled = pooled_detection(request_db(), study)
        if pooled["rate_pct"] is not None:
            rate = pooled["rate_pct"]
            source = _("the pooled detection of %(study)s (%(hits)s of %(votes)s votes)", study=study.name, **pooled)
    problems = []
    numbers = {}
    for name, (_default, low, high) in PLAN_FIELDS.items():
        text = str(values[name]).strip()
        if not (text.isascii() and text.isdigit() and low <= int(text) <= high):
            problems.append(
                _("%(field)s must be a whole number from %(low)s to %(high)s", field=name, low=low, high=high)
            )
        else:
            numbers[name] = int(text)
    if values["rate"].strip():
        try:
            rate, source = float(values["rate"]), _("the rate you gave")
        except ValueError:
            problems.append(_("the rate must be a percentage"))
    if values["pass_rule"] not in {rule.value for rule in PassRule}:
        problems.append(_("unknown pass rule"))
    result = None
    if "plan" in args and not problems:
        try:
            design = Design(
                numbers["jurors"],
                numbers["rounds"],
                numbers["players"],
                numbers["ai"],
                numbers["ai_votes"],
                values["pass_rule"],
                0.05,
                70.0,
            )
            result = off_loop(plan, design, rate / 100).to_dict()
        except ValueError as error:
            problems.append(str(error))
    return {
        "fields": values,
        "rate": rate,
        "source": source,
        "problems": problems,
        "result": result,
        "studies": studies,
        "case_rate": case_rate,
    }
