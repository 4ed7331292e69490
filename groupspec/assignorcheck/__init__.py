"""The assignor checker: properties of a candidate assignor, checked by seeded Hypothesis searches.

Owns checking candidate assignors (``check.py``), their loading (``load.py``), strategies, the optimum oracle
and the pytest plugin. May import ``groupspec.reference`` (the built-in assignors), nothing else of the project.
"""
