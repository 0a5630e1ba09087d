"""Files a host downloads: a worker's file streamed from the disk (:func:`send_built`), or, for small ones made in
memory, a zip of several or one PDF or zip as an attachment."""

from __future__ import annotations

import io
import shutil
import zipfile
from pathlib import Path

from flask import send_file


def zip_files(files: dict[str, bytes]) -> bytes:
    """``{name in the archive: data}`` as one deflated zip."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def download(data: bytes, filename: str):
    return send_file(
        io.BytesIO(data),
        as_attachment=True,
        download_name=filename,
        mimetype="application/pdf" if filename.endswith(".pdf") else "application/zip",
    )


def send_built(path: Path, filename: str, made: Path | None = None):
    """The finished file a worker wrote at ``path``, streamed from the disk (conditional, byte ranges) and never kept
    private to a cache.  Once the response has it open its name goes, with ``made`` (the worker's folder): a
    download leaves nothing under the instance folder, and a kill while sending leaves nothing either."""
    try:
        response = send_file(
            path,
            as_attachment=True,
            download_name=filename,
            mimetype="application/pdf" if filename.endswith(".pdf") else "application/zip",
            conditional=True,
            max_age=0,
        )
    finally:
        if made is not None and made.is_dir():
            shutil.rmtree(made, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    response.headers["Cache-Control"] = "private, no-store"  # children's voices and marks stay off shared caches
    return response
