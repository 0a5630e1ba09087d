"""Creating sessions: from a design, with their links, and the demo."""
