"""What the tests share, one home per helper (the fixtures built on them are in tests/conftest.py).

- ``paths``: the repository's root, the tests' data files.
- ``machine``: what a test needs from the machine; required when CI=true, a skip saying what to install elsewhere.
- ``waiting``: polling a condition up to a deadline instead of sleeping.
- ``apps``: the app in threading mode for a test process, the host's password form and API token.
- ``served``: ``python run.py`` (gevent) in a subprocess, and a host signed in to it over HTTP.
- ``live``: a small session and its people over Socket.IO.  ``engine``: the session engine over plain data.
- ``review``: a session played to the end, the graders' marks.  ``judge``, ``whisper``: local stand-ins for a
  chat-completions judge and a transcriptions server.
- ``session_setup``: the host's new-session form and a design.  ``spoken``, ``audio``: spoken players and their takes.
- ``agent``, ``media``, ``recordings``: ``vtt agent`` runs, test clips, spoken takes laid on disk.
- ``browser``, ``browser_engines``, ``sleeping_phone``: Chromium through Playwright, Firefox ESR and WebKitGTK, and
  a phone that sleeps.  ``nginx``: nginx in front of several processes.
- ``cogme_cases``, ``case_study``, ``templates``: the analysis tests' worked examples, case study and report templates.
"""
