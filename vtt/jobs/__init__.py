"""Background work every process sees: a job is a row (:class:`vtt.jobs.model.Job`), run by worker processes that
``vtt serve`` starts (:mod:`vtt.jobs.workers`), at most ``VTT_JOBS`` at once per instance folder.

The database is the queue and the record: any server process shows any job (its kind, session, state, progress,
start and end, error and output), a job whose process died is marked dead with the reason, and a host can cancel a
job or run it again.  docs/design.md says why this is a table of the project's own rather than a task queue.
"""
