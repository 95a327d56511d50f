"""One module per `loo-table` sub-command; each defines `add_arguments(parser)` and `run(args) -> int`."""
