"""Stage 1, the card: its values, the validating YAML reader, the fixtures, the seal and `benchcard check`.

May import `benchcard._util`, `errors`, `project` and `scoring` (a card validates its scoring spec), nothing higher.
"""
