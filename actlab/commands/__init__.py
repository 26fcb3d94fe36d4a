"""One module per `actlab` subcommand (`configure(parser)`, `run(args) -> int`), and what the site-building
commands share: `site_build` and `publish_claims`."""
