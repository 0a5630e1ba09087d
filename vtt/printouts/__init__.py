"""Printed documents of a session: join cards and paper judgment sheets."""
