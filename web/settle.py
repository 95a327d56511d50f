"""End of night: who pays whom, in the fewest transfers.

The fewest transfers that settle net results equals (players with a non-zero result) minus (the
largest number of groups, each summing to zero, that those players can be split into). That is an
exact subset search, fine for a table (at most 17 seats -> 2^17 subsets); larger inputs fall back to
the greedy largest-debtor-to-largest-creditor rule, which is at most one group off per group.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from table.contract.values import parse_chip_value as parse_chip_value  # importable from here too

EXACT_LIMIT = 17


@dataclass(frozen=True)
class Transfer:
    payer: str
    payee: str
    chips: int


def money(chips: int, chip_value: Decimal) -> str:
    amount = (chip_value * chips).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return str(amount.copy_abs() if amount == 0 else amount)  # never "-0.00" (a chip value of 0)


def with_currency(amount: str, currency: str) -> str:
    """Money as people write it: "£0.70", "-£0.70" (``amount`` as `money` gives it)."""
    if not currency:
        return amount
    return f"-{currency}{amount[1:]}" if amount.startswith("-") else f"{currency}{amount}"


def net_results(history: dict[str, list[int]], chips_in: dict[str, int] | None = None) -> dict[str, int]:
    """Each player's chips now minus the chips they brought: ``chips_in`` (starting chips plus
    buy-ins, rebuys and cash-outs), else the chips at the start of the night. A rebuy of 20 is
    money paid in, not a win: counting it as one made the results of a night not sum to zero."""
    return {name: (chips[-1] - (chips_in[name] if chips_in and name in chips_in else chips[0])) if chips else 0
            for name, chips in history.items()}


def _greedy(items: list[tuple[str, int]]) -> list[Transfer]:
    debtors = sorted(((-v, n) for n, v in items if v < 0), reverse=True)
    creditors = sorted(((v, n) for n, v in items if v > 0), reverse=True)
    out: list[Transfer] = []
    i = j = 0
    debt = [d for d, _ in debtors]
    cred = [c for c, _ in creditors]
    while i < len(debt) and j < len(cred):
        amount = min(debt[i], cred[j])
        out.append(Transfer(debtors[i][1], creditors[j][1], amount))
        debt[i] -= amount
        cred[j] -= amount
        if debt[i] == 0:
            i += 1
        if cred[j] == 0:
            j += 1
    return out


def fewest_transfers(net: dict[str, int]) -> list[Transfer]:
    """Transfers that bring every net result to zero, as few as possible (see module docstring).

    The results must sum to zero: the pool left at the end of the night has already been split
    (``end_residue``), so chips are conserved among the players.
    """
    if sum(net.values()) != 0:
        raise ValueError(f"net results sum to {sum(net.values())}, not 0: the night is not settled")
    items = sorted(((n, v) for n, v in net.items() if v != 0), key=lambda nv: (-abs(nv[1]), nv[0]))
    n = len(items)
    if n > EXACT_LIMIT:
        return _greedy(items)
    values = [v for _, v in items]
    full = (1 << n) - 1
    total = [0] * (1 << n)
    for mask in range(1, 1 << n):
        low = mask & -mask
        total[mask] = total[mask ^ low] + values[low.bit_length() - 1]
    # best[mask] = most zero-sum groups a zero-sum `mask` splits into (−1 when mask is not zero-sum).
    # Growing masks one member at a time: best[mask] = max over members m of best[mask − m],
    # plus one when mask itself sums to zero (a classic O(2^n · n) formulation).
    best = [0] * (1 << n)
    choice = [0] * (1 << n)
    for mask in range(1, 1 << n):
        b, c = -1, 0
        m = mask
        while m:
            low = m & -m
            m ^= low
            if best[mask ^ low] > b:
                b, c = best[mask ^ low], low
        best[mask] = b + (1 if total[mask] == 0 else 0)
        choice[mask] = c
    # Recover the groups: along the chain of choices every zero-sum mask closes one group.
    groups: list[int] = []
    mask, start = full, full
    while mask:
        prev = mask ^ choice[mask]
        if total[prev] == 0:
            groups.append(start ^ prev)
            start = prev
        mask = prev
    out: list[Transfer] = []
    for g in groups:
        out.extend(_greedy([items[i] for i in range(n) if g >> i & 1]))
    return out
