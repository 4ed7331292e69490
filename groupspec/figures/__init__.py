"""The documentation's pictures, every one drawn from the specification's or the simulator's own runs.

Owns ``make docs-figures`` (``python -m groupspec.figures``): it runs the simulator's stories of the
protocol's history and the model's state graphs, and writes

* ``docs/figures/*.svg`` — swim-lane diagrams (:mod:`.swimlane`) and per-partition ownership strips
  (:mod:`.strips`) of each story, the group's status diagram drawn from the model's reachable state graph
  (:mod:`.statediagram`), and each broken variant's counterexample (:mod:`.stories`);
* ``docs/figures/*.md`` — the numbers the Learn chapters quote, as small tables included in the pages;
* ``docs/figures/plot-*.svg`` — plots of the sweep pipeline's rows (:mod:`.plots`, computed by
  :mod:`groupspec.pipeline.runs` without Spark, one seed per point);
* ``docs/assets/explorer/graphs/*.json`` — the state graphs the browser explorer walks
  (:func:`groupspec.checker.export.export_graph`).

SVG is written by hand (:mod:`.svg`), so the same run gives the same bytes on every machine and
``python -m groupspec.figures --check`` (run by the tests) can tell a stale figure from a fresh one.

May import: ``groupspec.model``, ``groupspec.reference``, ``groupspec.checker``, ``groupspec.pipeline`` (its
grid and runs only: no Spark).
"""
