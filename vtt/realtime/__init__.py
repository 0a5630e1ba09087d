"""The Socket.IO side of a live session: handlers, the process's writer, the outbox and audit log."""
