"""The pages' scripts, styles and vendored files (``static/``), light for a phone on a venue's slow Wi-Fi.

* ``url_for("static", filename=...)`` names a file under a version of the whole folder,
  ``/static/v/<version>/js/jury.js``, the version a digest of every file in it.  A script's relative imports
  (``./client.js``) resolve under the same version, so every file of a page may be kept by the browser for a year
  without asking again (``immutable``): a reloaded page costs its HTML and its connection only.  A changed file
  changes the version and so every address.  An address of another version (a page from before a deploy) and the
  plain ``/static/<file>`` still get the file, revalidated each time (``no-cache`` with an ETag).
* Text files (scripts, styles, source maps, SVG) go gzip-compressed to a browser that accepts it: about a third of
  their size.  Each file's bytes and its gzip are kept in memory, made again when the file changes.
* ``module_script("js/jury.js")``, in a page's template, is its ``<script type="module">`` with a
  ``<link rel="modulepreload">`` for every module it imports, directly or not: the browser fetches them all at
  once instead of one level of imports per round trip (each 2 s on a slow 3G link).
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from flask import Flask, Response, abort, current_app, g, request, url_for
from markupsafe import Markup, escape
from werkzeug.security import safe_join

LONG_CACHE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
COMPRESSIBLE = {"text/css", "text/javascript", "application/javascript", "application/json", "image/svg+xml"}
MIN_COMPRESSED_BYTES = 512  # below this gzip's header outweighs what it saves
IMPORT = re.compile(r"""(?:^|[;\s])(?:import|export)\s[^;'"]*?from\s*["'](\.{1,2}/[^"']+)["']""", re.MULTILINE)


@dataclass(frozen=True)
class Asset:
    data: bytes
    gzipped: bytes | None
    etag: str
    mimetype: str


class StaticFolder:
    """The files of ``static/``: their version, and each one's bytes (and gzip) as of its last change."""

    def __init__(self, root: Path):
        self.root = root
        self._assets: dict[str, tuple[tuple[int, int], Asset]] = {}
        self._digests: dict[str, tuple[tuple[int, int], str]] = {}

    def version(self) -> str:
        """A digest of every file's content (each file read again only when its size or time has changed)."""
        whole = hashlib.sha256()
        for path in sorted(self.root.rglob("*")):
            if path.is_file():
                name = path.relative_to(self.root).as_posix()
                whole.update(f"{name}\0{self._digest(name, path)}\0".encode())
        return whole.hexdigest()[:12]

    def _digest(self, name: str, path: Path) -> str:
        stamp = _stamp(path)
        known = self._digests.get(name)
        if known is None or known[0] != stamp:
            known = (stamp, hashlib.sha256(path.read_bytes()).hexdigest())
            self._digests[name] = known
        return known[1]

    def asset(self, filename: str) -> Asset | None:
        found = safe_join(str(self.root), filename)
        if found is None or not os.path.isfile(found):
            return None
        path = Path(found)
        stamp = _stamp(path)
        known = self._assets.get(filename)
        if known is None or known[0] != stamp:
            data = path.read_bytes()
            mimetype = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            compress = (mimetype in COMPRESSIBLE or path.suffix == ".map") and len(data) >= MIN_COMPRESSED_BYTES
            gzipped = gzip.compress(data, compresslevel=9, mtime=0) if compress else None
            known = (stamp, Asset(data, gzipped, hashlib.sha256(data).hexdigest()[:20], mimetype))
            self._assets[filename] = known
        return known[1]

    def module_graph(self, entry: str) -> list[str]:
        """Every module ``entry`` imports, directly or through another, as static filenames (``js/client.js``)."""
        seen: list[str] = []
        todo = [entry]
        while todo:
            name = todo.pop()
            asset = self.asset(name)
            if asset is None:
                continue
            for relative in IMPORT.findall(asset.data.decode("utf-8", "replace")):
                imported = os.path.normpath(str(PurePosixPath(name).parent / relative)).replace(os.sep, "/")
                if imported != entry and imported not in seen:
                    seen.append(imported)
                    todo.append(imported)
        return seen


def _stamp(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


def _folder() -> StaticFolder:
    return current_app.extensions["vtt.static"]


def _current_version() -> str:
    if "static_version" not in g:
        g.static_version = _folder().version()
    return g.static_version


def serve_static(filename: str, version: str | None = None) -> Response:
    asset = _folder().asset(filename)
    if asset is None:
        abort(404)
    gzipped = asset.gzipped is not None and "gzip" in request.accept_encodings
    response = Response(asset.gzipped if gzipped else asset.data, mimetype=asset.mimetype)
    if gzipped:
        response.headers["Content-Encoding"] = "gzip"
    if asset.gzipped is not None:
        response.vary.add("Accept-Encoding")
    response.set_etag(asset.etag + ("-gz" if gzipped else ""))
    response.headers["Cache-Control"] = LONG_CACHE if version == _current_version() else REVALIDATE
    return response.make_conditional(request)


def module_script(filename: str) -> Markup:
    """A page's module script and a modulepreload link for each module it imports."""
    links = [
        f'<link rel="modulepreload" href="{escape(url_for("static", filename=name))}">'
        for name in _folder().module_graph(filename)
    ]
    script = f'<script type="module" src="{escape(url_for("static", filename=filename))}"></script>'
    return Markup("\n".join([*links, script]))


def init_app(app: Flask) -> None:
    """``static/`` served by :func:`serve_static`, its addresses versioned, ``module_script`` for templates."""
    app.extensions["vtt.static"] = StaticFolder(Path(app.static_folder))
    app.view_functions["static"] = serve_static
    app.add_url_rule(f"{app.static_url_path}/v/<version>/<path:filename>", endpoint="static", view_func=serve_static)

    @app.url_defaults
    def versioned_static(endpoint: str, values: dict) -> None:
        if endpoint == "static":
            values.setdefault("version", _current_version())

    app.jinja_env.globals["module_script"] = module_script
