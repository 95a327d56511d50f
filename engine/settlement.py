"""Settlement of one deal (docs/rules.md §9): trick shares and remainders, loos, revoke
penalties, flushes, no-play outcomes and misdeals — pure arithmetic on what the deal recorded.

Every transfer is between a balance and the pool (or, with PEEL's flush payee, between balances),
so Σ balances + pool never changes; ``settle_deal`` checks it on every call (also under -O).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.actions import MISS
from engine.errors import ChipConservationError
from engine.options import Options
from engine.outcome import Revoke, Settlement

__all__ = ["settle_deal", "shares_for"]


def shares_for(options: Options, pool_at_play: int) -> list[int]:
    """§9.1: the value of each trick (``early_tricks_first``: the odd chips go to the first
    tricks; ``carry_to_next_pool``: every share is the floor and the rest stays in the pool)."""
    n = options.hand_size
    base, rem = divmod(pool_at_play, n)
    if options.remainder_rule == "early_tricks_first":
        return [base + (1 if t < rem else 0) for t in range(n)]
    return [base] * n


def settle_deal(
    options: Options,
    *,
    kind: str,
    players: Sequence[str],
    dealer: str,
    standers: Sequence[str],
    balances_before: Mapping[str, int],
    antes: Mapping[str, int],
    pool_at_play: int,
    loo: int,
    trick_winners: Sequence[str],
    revokes: Sequence[Revoke],
    penalties: Mapping[str, Sequence[int]],
    flush_winners: Sequence[str],
    flush_claimants: Sequence[str],
    pam_shown: Sequence[str],
    lone: str | None,
) -> Settlement:
    """The settlement of a finished deal.

    ``kind``: ``play``, ``all_pass``, ``lone_stander``, ``flush`` or ``misdeal`` (``play`` becomes
    ``void`` with ``revoke_action = void_deal`` and a revoke). ``standers`` excludes a defended
    miss. ``penalties`` holds per player one mark per loo already incurred (2 = a loo, 1 = half a
    loo: false flush claim, out of turn, operator penalty). ``flush_winners`` are the best valid
    claimants (several only with ``flush_tie = split``), elder first; ``flush_claimants`` every
    valid claimant.
    """
    o = options
    p0 = pool_at_play
    paid: dict[str, int] = {}
    loos: dict[str, list[int]] = {p: list(v) for p, v in penalties.items()}
    shares: list[int] = []
    flush_winner: str | list[str] | None = None
    payee: Sequence[str] = ()   # winners who receive the loos directly (PEEL's flush payee)
    total = sum(balances_before.values()) + p0 - sum(antes.values())

    def add_loo(p: str) -> None:
        loos.setdefault(p, []).append(2)

    if kind == "play" and revokes and o.revoke_action == "void_deal":
        kind = "void"
    if kind == "play":
        shares = shares_for(o, p0)
        revokers = {r.player for r in revokes}
        for t, w in enumerate(trick_winners):
            if w == MISS or (w in revokers and o.revoke_forfeits_tricks):
                continue  # a defended miss's or a revoker's share stays in the pool
            paid[w] = paid.get(w, 0) + shares[t]
        won = set(trick_winners)
        for p in standers:
            if p not in won:
                add_loo(p)
        for r in revokes:
            add_loo(dealer if r.player == MISS else r.player)
    elif kind == "void":
        for r in revokes:
            add_loo(dealer if r.player == MISS else r.player)
    elif kind == "all_pass":
        if o.all_pass == "dealer_takes":
            paid[dealer] = p0
    elif kind == "lone_stander":
        assert lone is not None
        paid[lone] = p0
    elif kind == "flush":
        flush_winner = flush_winners[0] if len(flush_winners) == 1 else list(flush_winners)
        each, extra = divmod(p0, len(flush_winners))
        for i, w in enumerate(flush_winners):
            paid[w] = each + (1 if i < extra else 0)
        # A valid flush that lost (inferior, or equal and beaten by the elder hand) exempts, and
        # so does Pam shown (§7.2, §8.5).
        exempt = set(pam_shown) | set(flush_claimants)
        scope = players if o.flush_loo_scope == "all" else standers
        for p in scope:
            if p not in exempt:
                add_loo(p)
        if o.flush_loo_payee == "flush_holder":
            payee = flush_winners
    elif kind == "misdeal":
        if o.misdeal == "loo_and_redeal":
            add_loo(dealer)
    looed: dict[str, int] = {}
    for p in players:
        marks = loos.get(p)
        if not marks:
            continue
        full = marks.count(2)
        single = marks.count(1)
        if o.revoke_loo_cumulative:
            amount = full * loo + single * (loo // 2)
        else:
            amount = loo if full else loo // 2  # looed is a status: once per deal
        if amount:
            looed[p] = amount
    total_paid = sum(paid.values())
    total_looed = sum(looed.values())
    balances = {p: b - antes.get(p, 0) - looed.get(p, 0) + paid.get(p, 0)
                for p, b in balances_before.items()}
    if payee:
        each, extra = divmod(total_looed, len(payee))
        for i, w in enumerate(payee):
            balances[w] += each + (1 if i < extra else 0)
        pool_after = p0 - total_paid
    else:
        pool_after = p0 - total_paid + total_looed
    after_total = sum(balances.values()) + pool_after
    if after_total != total or pool_after < 0:  # kept under python -O
        raise ChipConservationError(f"chips not conserved: {after_total} != {total}")
    return Settlement(
        kind=kind,
        trick_winners=list(trick_winners),
        revokes=list(revokes),
        flush_winner=flush_winner,
        shares=shares,
        paid={p: v for p, v in paid.items() if v},
        looed=looed,
        balances_after=balances,
        pool_after=pool_after,
        total_chips=total,
        antes=dict(antes),
        pool_at_play=p0,
    )
