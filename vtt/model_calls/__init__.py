"""Calling a model: the one client the AI players, the AI jurors, the judge and the transcription client share.

* :mod:`.endpoints`: an endpoint's address as given (``http:URL`` or a bare URL), the chat-completions and
  transcriptions endpoints of it, and the address without credentials that is shown and recorded.
* :mod:`.http`: the HTTP call, with its timeout and its size limit: a chat completion (async, aiohttp) and a form
  POST (blocking, for the transcription client, which runs off the event loop); the failures they raise.
* :mod:`.replies`: reading a model's reply text (``<think>`` blocks, its length, what may follow its answer) and
  trimming it to be stored. Every JSON body is read with :mod:`vtt.protocol.strict_json`.
* :mod:`.runs`: the settings a run of calls takes, one call's outcome, the concurrent run that stops after
  ``max_failures`` failures in a row, and the run's summary.

It imports nothing of the server, of the agents, the juries, the judge or the transcription client (they import it;
tests/test_layers.py holds it to that), and aiohttp only when a call is made.

Why not the ``openai`` package: docs/design.md ("Calling models").
"""
