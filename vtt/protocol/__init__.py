"""The protocol's messages: the one schema the server validates with and clients and docs are built from."""
