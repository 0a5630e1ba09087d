"""Processes the web starts for heavy work (``python -m vtt.workers.NAME``): they draw PDFs beside the event loop."""
