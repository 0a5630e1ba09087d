"""The live session on the database: state loading, effect writing, batches, tallies.

Free of Flask and Socket.IO, so the Socket.IO writer, the CLI and the benchmarks share it.
"""
