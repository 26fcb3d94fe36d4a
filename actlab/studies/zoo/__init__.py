"""The activation zoo (issue 36): the related work's activations, each built and checked, compared under one
matched protocol.

`entries` is the table (formula, source, build, closed form), `modules` holds the entries the registry lacks, `build`
turns entries into modules, `run` trains one (task, seed), and `analysis`, `claims`, `leaderboard`, `conclusions` (what
to conclude), `reconcile` (the comparison page's shared verdicts beside the zoo's) and `plots` make the page
(`notebooks/zoo/zoo.ipynb`; `actlab zoo` runs both notebooks).
"""
