"""A judge that suggests grades: an OpenAI-compatible chat-completions model scores each open answer on MovieCORE's
five rubric dimensions and says correct or incorrect, one call each (``prompts.toml``, ``rubric.py``); the
suggestions are stored apart from the graders' marks and count only once a grader takes them (``suggest.py``)."""
