"""Stage 6, planning: `benchcard plan`, what a run of a card will take and what it can hope to detect.

May import every stage below it (`card`, `run`, `verdict`, `stats`); never `publish` or `compare`.
"""
