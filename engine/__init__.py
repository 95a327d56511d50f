"""The rules of Loo as pure, deterministic Python (no I/O, no clock, no unseeded randomness)."""
