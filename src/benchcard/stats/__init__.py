"""Stage 0, the statistics: pure functions over numpy arrays (paired gaps, sign flips, resampling, the crossed
model and its worst-case p, decisions, simulation, agreement). Imports nothing of benchcard's but itself.
"""
