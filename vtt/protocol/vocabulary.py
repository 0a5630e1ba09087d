"""The protocol's words and limits: the host's moves, and how long or large the messages' fields may be.

Plain constants with no imports: the message schemas (``vtt.protocol.messages``) publish them, the server's rules
(``vtt.engine``) enforce them, and clients read them without loading any of the server.
"""

MAX_TEXT = 4000  # an answer, a note or a reason
MAX_EXTEND_SECONDS = 3600
MAX_SHEET_LINES = 100  # one save of a whole round's sheet (questions x players) fits
MAX_PROVENANCE = 4000  # an answer's provenance, as JSON
MAX_BACKEND = 60  # a provenance's backend name
MAX_AGENT_MESSAGE = 1000  # an agent's status message
MAX_FILE_NAME = 200
MAX_CLIP_SECONDS = 3600.0
MAX_SQL_INTEGER = 2**31 - 1  # the largest whole number an INTEGER column on PostgreSQL holds (an id, a round, a seed)
MAX_OPEN_JOIN_CAP = 100_000  # the most jurors a host may let join openly: beyond any hall
AGENT_STATUSES = ("ready", "working", "answered", "error")
# A read-aloud player's page about its voice: none for the page's language (the host reads aloud), or one after all.
SPEECH_NOTICES = ("no_voice", "voice_ok")
MAX_LANGUAGE_TAG = 35  # a BCP 47 language tag: "ko", "en-GB"
LANGUAGE_TAG = r"^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$"
ANSWER_SOURCES = ("typed", "import")  # how the host entered an AI player's answer
# A spoken answer's recording, as MediaRecorder makes it (Opus in WebM or Ogg; AAC in MP4 on Safari; WAV): the
# upload's type (parameters such as ";codecs=opus" aside) and the file's suffix on disk.
RECORDING_TYPES = {
    "audio/webm": ".webm",
    "video/webm": ".webm",
    "audio/ogg": ".ogg",
    "audio/mp4": ".m4a",
    "video/mp4": ".m4a",
    "audio/wav": ".wav",
    "audio/x-wav": ".wav",
}
MAX_RECORDING_BYTES = 8 * 1024 * 1024  # a child's answer of a few minutes in Opus is well under 1 MB
MAX_RECORDING_SECONDS = 600
MAX_TRANSCRIBER = 200  # who or what turned a recording into text: "host", "pocketsphinx 5.0.4", "http:..."
MAX_TRANSCRIPT = 2000  # a transcription backend's suggestion, cleaned and cut to this (fits an answer's MAX_TEXT)
# how sure a suggestion is, as measured for its backend (vtt/transcribe/levels.py); none: no speech heard
TRANSCRIPT_LEVELS = ("sure", "likely", "unsure", "none", "unknown")
# A device check (a player's or juror's page before the event): what the person heard of the test clip, what the
# microphone did (a spoken player's page only), and the connection's figures as the page measured them.
CHECK_SOUNDS = ("heard", "not_heard", "failed")  # failed: the test clip would not play at all
CHECK_MICROPHONES = ("ok", "not_heard", "none", "denied", "failed")  # none: no microphone or no MediaRecorder;
# not_heard: recorded and played back, but the person did not hear it
CHECK_TRANSPORTS = ("websocket", "polling")  # engine.io's transport when the page measured
CHECK_RENDITIONS = ("main", "phone")  # which rendition of the test clip the page played
MAX_CLOCK_OFFSET_MS = 86_400_000  # a day: a phone's clock set further off is reported as a day off
MAX_ROUND_TRIP_MS = 600_000
MAX_CHECK_MS = 3_600_000

# The host's moves, the words of the host message's ``action`` field (each declared with its handler in vtt.engine).
HOST_ACTIONS = (
    "open_lobby",
    "start_round",
    "set_participants",
    "show_question",
    "play_clip",
    "open_answering",
    "extend",
    "close_answering",
    "edit_answer",
    "reveal",
    "open_vote",
    "close_vote",
    "show_tally",
    "reveal_identities",
    "finish",
    "set_open_join",
    "remove_juror",
    "new_link",
    "enter_answer",
    "confirm_spoken",
)
