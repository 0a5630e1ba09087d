"""Serve an existing install: ``python run.py [--host 0.0.0.0] [--port 5000]``."""

from gevent import monkey

monkey.patch_all()  # before anything imports sockets or threads

from vtt.cli.serve import serve  # noqa: E402

if __name__ == "__main__":
    serve()
