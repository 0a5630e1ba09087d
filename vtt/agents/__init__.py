"""AI players: ``vtt agent`` and its backends, a client of the live protocol (``docs/agents.md``).

Nothing here imports Flask or the server: an agent runs on any machine that reaches the server
over Socket.IO.  :mod:`.runner` plays a session (reusing the bots' reconnecting
:class:`~vtt.client.connection.Connection` and :class:`~vtt.client.view.View`), :mod:`.backends` turns a
question into an answer (replay, http, python, composite), :mod:`.choices` reads an answer as an
option, :mod:`.frames` samples a clip's frames and :mod:`.delay` is the humanlike typing delay.
"""
