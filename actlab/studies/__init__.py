"""The three paper studies: the logic behind `notebooks/<study>/`, one subpackage per paper.

Why here and not in the notebooks: the notebooks only call, tabulate and plot; what a run trains,
what a report computes and the decision rules' inputs live in code that tests can reach.
"""
