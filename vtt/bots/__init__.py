"""Simulated people for ``vtt simulate``, the tests and the benchmarks: clients of the one protocol."""
