"""Files a host downloads, made in memory: a zip of several, or one PDF or zip as an attachment."""

from __future__ import annotations

import io
import zipfile

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
