"""The table controller: gpiozero seats, the referee loop, the SQLite ledger and the CLI."""
