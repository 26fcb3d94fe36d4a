"""The activation zoo (issue 36): the related work's activations, each built and checked, compared under one
matched protocol.

Modules: `entries` (the table: formula, source, how actlab builds each, its closed form), `modules` (the entries the
registry lacks), `build` (entries to modules, derived ones through the comparison's specs), `run` (one (task, seed):
every entry through the comparison engine, step- and compute-time-matched), `analysis` (aggregates, the pairwise
decision matrix, ranks), `claims` ("X beats ReLU" where X's paper says so), `plots`. Notebooks:
`notebooks/zoo/run.ipynb` (one run) and `notebooks/zoo/zoo.ipynb` (the page); `actlab zoo` runs both.
"""
