"""Serving: the gevent server, the address it is reached at, work run beside the loop."""
