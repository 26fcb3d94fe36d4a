"""The published HTML site under `reports/`: the builder, its pages, and what the index leads with.

- `report`: render the site (execute and render a page, write the index); it runs no sweep: the command line
  orchestrates (`actlab.commands.site_build`);
- `manifest`: `pages.json`, the pages the index lists between builds, each entry checked;
- `pages`: a page record, the shared Jinja2 environment and the provenance footer;
- `inputs`: what the site takes from files (claim records, link targets), checked before it is published;
- `summary` and `forest`: the verdict counts and the forest plot the index opens with;
- `page`: how a report notebook shows things (claims first, tables without index, details folded);
- `gallery` and `bench_page`: the data of the activation gallery page and the benchmark page.

Layer: the top of the package below the command line: it may import anything below it except `actlab.sweep` (the
site renders; it never starts an experiment), and only `actlab.commands` imports it. Its templates live in
`actlab/templates/`.
"""
