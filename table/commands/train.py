"""`loo-table train`: render deck artwork, train, export and quantise the card model.

The same recipe as ``python -m models.train`` (see models/README.md). It needs the training
extra (``pip install -e '.[train]'``), ``rsvg-convert`` and the deck packages; ``--tiny`` needs
none of the artwork and finishes in seconds.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from types import ModuleType

from table.cli import CommandError


def _recipe() -> ModuleType:
    """``models.train``, loaded only when the command runs: the recipe is a development tool of the
    training extra (torch), which the runtime install lacks."""
    return importlib.import_module("models.train")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _recipe().add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    for mod in ("torch", "onnx", "tqdm"):
        if importlib.util.find_spec(mod) is None:
            raise CommandError(f"the training extra is not installed ({mod} missing): pip install -e '.[train]'")
    recipe = _recipe()
    try:
        recipe.run_recipe(recipe.config_from_args(args), args.out, quantise_int8=not args.no_int8,
                   log=lambda m: print(m, file=sys.stderr, flush=True), evaluate_only=args.evaluate_only)
    except SystemExit as exc:  # the recipe's one-line reasons (missing artwork, rsvg-convert)
        if exc.code not in (0, None):
            raise CommandError(str(exc.code).removeprefix("models.train: ")) from None
    return 0
