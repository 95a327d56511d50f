"""House-rule options for the admin page, read from ``engine.Options`` (never restated here)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from engine.options import CHOICES, Options
from table.contract.values import VARIANTS as VARIANTS  # importable from here too
from table.contract.values import checked_options as checked_options
from web.rules_text import GROUPS, rule_text

# Options that are consequences of the variant rather than house rules: shown, not editable.
FIXED_BY_VARIANT = frozenset({"hand_size"})


@dataclass(frozen=True)
class OptionField:
    """One row of the admin page's rules form."""

    name: str
    kind: str  # "bool", "int", "optional_int" or "choice"
    default: Any
    choices: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return rule_text(self.name).title

    @property
    def sentence(self) -> str:
        return rule_text(self.name).sentence

    @property
    def group(self) -> str:
        return rule_text(self.name).group

    @property
    def needs(self) -> str:
        return rule_text(self.name).needs


def grouped_fields(variant: str) -> list[tuple[str, str, list[OptionField]]]:
    """``option_fields(variant)`` as (group id, heading, fields) in the order of ``GROUPS``."""
    all_fields = option_fields(variant)
    return [(gid, heading, [f for f in all_fields if f.group == gid]) for gid, heading in GROUPS]


def option_fields(variant: str) -> list[OptionField]:
    """Every option of docs/rules.md §3 with ``variant``'s default, in the engine's order."""
    defaults = Options.defaults(variant)
    out: list[OptionField] = []
    for f in fields(Options):
        if f.name == "variant":
            continue
        if f.name in CHOICES:
            kind = "choice"
        elif f.type == "bool":
            kind = "bool"
        elif f.type == "int | None":
            kind = "optional_int"
        else:
            kind = "int"
        out.append(OptionField(f.name, kind, defaults[f.name], CHOICES.get(f.name, ())))
    return out


