"""The host acting for someone: a paper juror's sheet typed in, an AI player's answers from a file."""
