"""Report files on disk: a session's (:mod:`.session`) and a study's (:mod:`.study`) PDFs and CSVs, drawn by
``analysis`` from the tables the database gives, with the cover facts only the database knows (:mod:`.session_info`).

``vtt report`` and ``vtt study report`` write them into a folder; the results and study pages have a worker process
write them (:mod:`vtt.workers`).
"""
