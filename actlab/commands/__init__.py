"""One module per `actlab` subcommand; each defines `configure(parser)` and `run(args) -> int`.

Beside them, what the commands that build the site share: `site_build` (sweeps, then pages, then the index) and
`publish_claims` (a page's claims staged per build, published only when its notebook ran to the end).
"""
