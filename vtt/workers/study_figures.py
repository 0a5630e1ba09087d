"""``python -m vtt.workers.study_figures STUDY_ID``: a study's main tables for its page, in a process of its own.

Pooling a study's sessions is seconds of pandas; the study page asks for it (:func:`vtt.offloop.in_process`) when
the host presses "Show the pooled figures". Prints one JSON line: ``{"tables": {file: [rows]}}`` for the page's
tables (detection, whether the sessions differ, verdicts, accuracy by stage and by AI program), or
``{"nothing": why}``.
"""

from __future__ import annotations

import json
import sys

PAGE_TABLES = (
    "detection.csv",
    "sessions_differ.csv",
    "verdicts.csv",
    "accuracy_by_stage.csv",
    "accuracy_by_program.csv",
)


def main(study_id: str) -> dict:
    from analysis.study import study_tables

    from ..db import db_factory_from_env
    from ..models import Study
    from ..studies.data import read_study

    with db_factory_from_env()() as db:
        study = db.get(Study, int(study_id))
        if study is None or not study.members:
            return {"nothing": "the study has no sessions"}
        data, _exports = read_study(db, study)
    tables = study_tables(data)
    return {"tables": {name: json.loads(tables[name].to_json(orient="records")) for name in PAGE_TABLES}}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1]), ensure_ascii=False))
