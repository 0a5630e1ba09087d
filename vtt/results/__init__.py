"""A session's results: its data as DataFrames, the results page's figures, grading, reports."""
