"""One module per `actlab` subcommand; each defines `configure(parser)` and `run(args) -> int`."""
