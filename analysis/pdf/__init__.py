"""The PDF toolkit the session and study reports are built with (ReportLab).

:mod:`.text` (user text as markup, the characters the font cannot draw), :mod:`.look` (paragraph and player
styles), :mod:`.numbers` (numbers, p-values, intervals as printed), :mod:`.layout` (the page, a grid of radars, a
block kept whole on a page), :mod:`.tables` (ruled tables), :mod:`.cover` and :mod:`.document` (the PDF with its
footer and bookmarks).
"""
