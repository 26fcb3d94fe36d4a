"""The published HTML site under `reports/`: the builder (`report`), its pages and what the index leads with.

Layer: the top of the package below the command line: it may import anything below it except `actlab.sweep` (the
site renders; it never starts an experiment), and only `actlab.commands` imports it. Its templates live in
`actlab/templates/`.
"""
