"""Socket.IO packets that cannot be read become a refusal for their sender, not a traceback in the log.

python-socketio raises while decoding a packet whose JSON is broken, too deep (a 100,000-deep list) or holds a
10,000-digit number; the exception ends in engine.io's log and the client waits for an ack that never comes.
Here such a packet is read as the event :data:`MALFORMED` with its reason and whether it asked for an ack (its ack
id precedes the JSON and is kept), so that ``vtt.realtime.handlers`` answers it with ``{code: "malformed"}``, or
closes the connection of a client that asked for no answer; a connect packet that cannot be read carries a
:class:`Malformed` auth, which the connect handler refuses.
"""

from __future__ import annotations

from dataclasses import dataclass

from socketio import packet

MALFORMED = "malformed"
_READABLE = (packet.CONNECT, packet.DISCONNECT, packet.EVENT, packet.ACK)


@dataclass(frozen=True)
class Malformed:
    """What a packet that cannot be read decodes to: why."""

    reason: str


class ServerPacket(packet.Packet):
    """The server's packet class (``serializer=ServerPacket``)."""

    def decode(self, encoded_packet):
        try:
            attachments = super().decode(encoded_packet)
        except RecursionError:
            self._unreadable("its JSON is nested too deeply")
            return 0
        except (ValueError, TypeError) as error:
            self._unreadable(_reason(error))
            return 0
        if self.packet_type not in _READABLE:  # binary packets and connect errors are not part of this protocol
            self._unreadable(f"packet type {self.packet_type} is not accepted from clients")
            return 0
        return attachments

    def _unreadable(self, reason: str) -> None:
        if self.packet_type == packet.CONNECT:
            self.data = Malformed(reason)
        else:
            self.packet_type = packet.EVENT
            self.data = [MALFORMED, reason, self.id is not None]


def _reason(error: Exception) -> str:
    text = str(error)
    if "integer" in text or "digits" in text:
        return "a number in it is too large"
    if isinstance(error, ValueError) and hasattr(error, "msg"):  # json.JSONDecodeError
        return f"it is not valid JSON ({error.msg} at character {error.pos})"
    return f"it cannot be read ({text[:80]})"
