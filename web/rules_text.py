"""Each house rule in one plain sentence, grouped the way a host thinks of them.

The engine names options for code ("club_law", "end_residue"); a host choosing them on a phone
needs to read what each does. The names, kinds and defaults still come from ``engine.Options``
(``web.options``); this module adds only words. A rule missing here falls back to its name, and a
test checks that every option has a sentence.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GROUPS", "RULES", "CHOICE_WORDS", "RuleText", "rule_text", "choice_label"]

#: (group id, heading), in page order
GROUPS: tuple[tuple[str, str], ...] = (
    ("dealing", "Dealing"),
    ("play", "Play"),
    ("payments", "Payments"),
    ("end", "End of the night"),
)


@dataclass(frozen=True)
class RuleText:
    group: str
    title: str
    sentence: str
    needs: str = ""  # a yes/no rule that must be on for this one to matter (hidden otherwise)


RULES: dict[str, RuleText] = {
    # dealing
    "hand_size": RuleText("dealing", "Cards per hand", "How many cards each player is dealt (set by the variant)."),
    "players_min": RuleText("dealing", "Fewest players", "The table refuses to start with fewer players than this."),
    "players_max": RuleText("dealing", "Most players", "The table refuses to seat more players than this."),
    "first_dealer": RuleText("dealing", "First dealer", "How the first dealer of the night is chosen."),
    "miss": RuleText("dealing", "Deal a miss", "An extra hand is dealt that a player may take instead of their own."),
    "force_miss": RuleText("dealing", "Who must take the miss", "Who is obliged to take the miss when the pool is forced.", "miss"),
    "exchange": RuleText("dealing", "Exchange cards", "Players who stand may swap cards for new ones from the stock."),
    "exchange_timing": RuleText("dealing", "When to exchange", "Whether cards are exchanged after everyone has declared, or as each declares.", "exchange"),
    "exchange_stock_exhausted": RuleText("dealing", "Stock runs out", "What happens when the stock has too few cards for an exchange.", "exchange"),
    "dealer_takes_turnup": RuleText("dealing", "Dealer takes the turn-up", "The dealer may take the turned-up trump card into his hand."),
    "misdeal": RuleText("dealing", "Misdeal", "What a misdeal costs the dealer."),
    # play
    "lead_rules": RuleText("play", "Leading rules", "Which traditional rules say what must be led."),
    "two_trumps_lead": RuleText("play", "Leading with two trumps", "Which trump must be led by a player holding two or more."),
    "second_lead_rule": RuleText("play", "After winning trick 1", "The winner of the first trick must lead a trump if he has one."),
    "must_head": RuleText("play", "Must head the trick", "A player who follows suit must play a card that beats the trick if he can."),
    "must_trump": RuleText("play", "Must trump", "A player who cannot follow suit must trump if that would win the trick."),
    "must_undertrump": RuleText("play", "Must trump even when losing", "A player who cannot follow suit must trump even if the trump cannot win."),
    "force_when_pool_is_ante_only": RuleText("play", "Forced play", "When the pool holds only the ante, everyone must play (no passing)."),
    "club_law": RuleText("play", "Club law", "When clubs are trumps, everyone must play."),
    "lone_stander": RuleText("play", "One player stands", "What happens when everyone but one player passes."),
    "pam": RuleText("play", "Pam", "One jack, called Pam, is the highest trump of all."),
    "pam_identity": RuleText("play", "Which jack is Pam", "Which jack counts as Pam.", "pam"),
    "pam_rule": RuleText("play", "How Pam plays", "Whether Pam is a trump that must follow the trump rules, or free to play at any time.", "pam"),
    "pam_be_civil": RuleText("play", "\u201cPam be civil\u201d", "When the ace of trumps is led, whether Pam's holder must hold Pam back.", "pam"),
    "pam_civil_strict": RuleText("play", "Strict civility", "Pam may not be played to the civil ace even when it is the only trump held.", "pam"),
    "flushes": RuleText("play", "Flushes", "Five cards of one suit win every trick at once when shown."),
    "flush_ranking": RuleText("play", "Best flush", "Which of two flushes is better.", "flushes"),
    "flush_tie": RuleText("play", "Equal flushes", "Who wins when two flushes are equal.", "flushes"),
    "false_flush_claim": RuleText("play", "False flush claim", "What a player who claims a flush he does not have pays.", "flushes"),
    "blaze": RuleText("play", "Blaze", "Five court cards count as a flush."),
    "out_of_turn": RuleText("play", "Card played out of turn", "Whether a card played out of turn only gets a warning or is looed."),
    "revoke_action": RuleText("play", "After a revoke", "How the deal goes on once a revoke is proven."),
    "revoke_forfeits_tricks": RuleText("play", "Revoker loses his tricks", "A player who revoked loses the tricks he won in that deal."),
    # payments
    "ante_mode": RuleText("payments", "Who puts in the ante", "Who pays into the pool before each deal."),
    "ante_amount": RuleText("payments", "Ante", "How many chips go into the pool each deal."),
    "loo_mode": RuleText("payments", "Size of a loo", "How much a player who is looed (wins no trick) pays."),
    "loo_amount": RuleText("payments", "Loo amount", "Chips a looed player pays when loos are limited."),
    "loo_cap": RuleText("payments", "Loo cap", "The most a looed player pays when loos are mixed (empty: no cap)."),
    "remainder_rule": RuleText("payments", "Odd chips", "Where the chips go that do not divide evenly between the tricks."),
    "all_pass": RuleText("payments", "Everybody passes", "Who gets the pool when every player passes."),
    "flush_loo_scope": RuleText("payments", "Who a flush looes", "Whether a flush looes only the players who stood, or everyone.", "flushes"),
    "flush_loo_payee": RuleText("payments", "Who gets a flush's loos", "Whether the loos paid to a flush go to the next pool or to the flush's holder.", "flushes"),
    "revoke_loo_cumulative": RuleText("payments", "Loos add up", "A player looed twice in one deal (a revoke and no trick) pays twice."),
    "allow_negative_balance": RuleText("payments", "Play on credit", "A player may go below zero chips and owe them."),
    # end of the night
    "deals_per_player": RuleText("end", "Deals each", "How many times each player deals before the night can end."),
    "end_rule": RuleText("end", "When the night ends", "Whether the night ends after the set deals, or plays on until a deal without a loo."),
    "end_residue": RuleText("end", "Pool left at the end", "What happens to the chips still in the pool when the night ends."),
}

#: words for the values of choice options (value -> what the host reads)
CHOICE_WORDS: dict[str, str] = {
    "lowest_card": "lowest card dealt", "highest_card": "highest card dealt", "first_jack": "first jack dealt",
    "manual": "chosen by the host", "dealer_only": "the dealer", "all_players": "every player",
    "all_players_dealer_double": "every player, the dealer twice", "limited": "a fixed amount",
    "unlimited": "what the pool holds", "mixed": "what the pool holds, up to a cap",
    "early_tricks_first": "to the early tricks", "carry_to_next_pool": "stay in the pool",
    "after_all_declare": "after everyone declares", "with_declaration": "as each player declares",
    "reshuffle_discards": "reshuffle the discards", "stop": "no more exchanges",
    "jack_of_clubs": "jack of clubs", "jack_of_trumps": "jack of trumps", "jack_of_spades": "jack of spades",
    "trump": "a trump, bound by the rules", "free": "free to play at any time",
    "automatic": "always", "on_call": "only when a player calls it", "off": "never",
    "victorian": "Victorian (trump leads)", "parlett_cassell": "Parlett / Cassell", "none": "free lead",
    "highest": "the highest", "any": "any trump", "eldest_only": "the eldest hand only", "normal": "as usual",
    "dealer_takes": "the dealer", "carry": "it stays for the next deal", "dealer_contests": "the dealer plays him",
    "takes_pool": "he takes the pool", "pam_first": "the one with Pam", "trump_first": "the one in trumps",
    "elder_hand": "the elder hand", "split": "they share", "standers": "the players who stood",
    "all": "everyone", "next_pool": "the next pool", "flush_holder": "the flush's holder",
    "play_on": "play on", "replay_from_offence": "replay from the revoke", "void_deal": "cancel the deal",
    "loo_and_redeal": "he is looed and deals again", "redeal_free": "he deals again, free",
    "lose_deal": "the next player deals", "looed": "looed", "no_penalty": "nothing",
    "warn_only": "a warning", "equal_deals_then_until_no_loo": "after equal deals, once a deal has no loo",
    "fixed_deals": "after the set deals", "split_equally": "shared equally", "to_last_dealer": "to the last dealer",
}


def rule_text(name: str) -> RuleText:
    """The words for option ``name`` (its name, unexplained, if none are written yet)."""
    return RULES.get(name) or RuleText("play", name.replace("_", " ").capitalize(), "")


def choice_label(value: object) -> str:
    """What the host reads for a choice value; yes/no for booleans; "none" for an empty number."""
    if value is True:
        return "yes"
    if value is False:
        return "no"
    if value is None:
        return "none"
    return CHOICE_WORDS.get(str(value), str(value).replace("_", " "))
