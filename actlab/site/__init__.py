"""The published HTML site under `reports/`: the builder, its pages, and what the index leads with.

- `report`: build the site (execute and render every page, run the studies' sweeps, write the index);
- `pages`: a page record, the shared Jinja2 environment and the provenance footer;
- `inputs`: what the site takes from files (claim records, link targets), checked before it is published;
- `summary` and `forest`: the verdict counts and the forest plot the index opens with;
- `page`: how a report notebook shows things (claims first, tables without index, details folded);
- `gallery` and `bench_page`: the data of the activation gallery page and the benchmark page.

Layer: the top of the package below the command line: it may import anything below it, and only
`actlab.commands` imports it. Its templates live in `actlab/templates/`.
"""
