"""Tests of batch runs (src/benchcard/run/batch/)."""
