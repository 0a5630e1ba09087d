"""``python -m vtt.workers.study_report STUDY_ID LANGUAGE OUT_FILE``: a study's report as one zip, built by a job.

The study page's download: ``study_report.pdf`` (in LANGUAGE), every table and the all-sessions export, as ``vtt
study report`` writes them, zipped (deflated) into OUT_FILE (a temporary name until it is complete; the server
streams it from the disk).  Returns ``{"files": count}``; a study with nothing to report raises its reason.
"""

from __future__ import annotations

import json
import sys
import tempfile
import zipfile
from pathlib import Path


def main(study_id: str, language: str, out: str) -> dict:
    from ..db import db_factory_from_env
    from ..models import Study
    from ..offloop import written_whole
    from ..reports.study import write_study

    with db_factory_from_env()() as db, tempfile.TemporaryDirectory() as folder:
        study = db.get(Study, int(study_id))
        if study is None:
            raise ValueError(f"no study {study_id}")
        write_study(db, study.name, Path(folder), language)  # a StudyProblem (a ValueError) says why not
        files = sorted(path for path in Path(folder).iterdir() if path.is_file())
        with written_whole(Path(out)) as partial, zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in files:
                archive.write(path, path.name)
    return {"files": len(files)}


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:4])))
