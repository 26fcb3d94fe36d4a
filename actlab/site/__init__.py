"""The report site's pieces that are not pages: what the index shows above its claims table.

`summary` counts verdicts (overall and per study) and `forest` draws the claims' forest plot. Both read the
claim records `actlab.record_claim` wrote (checked by `actlab.report_inputs`) and nothing else, so the index
cannot show a number no run produced. This package sits at the top of actlab's layers: it may import
anything below it (stats, studies' records), and nothing imports it except the report builder.
"""
