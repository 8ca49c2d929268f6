"""The bottom layer: small helpers every stage may use (hashing, the version); imports nothing of benchcard's."""
