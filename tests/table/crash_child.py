"""The child process of test_crash: a simulated night on the real referee and ledger.

Prints ``start SEQ DIGEST`` once the ledger is open and replayed, then ``ack SEQ DIGEST`` after
every committed event (the acknowledgement: COMMIT has returned). The test kills it with SIGKILL.
"""

import sys

from table.ledger import Ledger
from table.referee import Referee
from table.simulate import DirectTransport, VirtualPlayers, run_night
from vision.event_types import VisionEvent  # plain values: no OpenCV to load on each restart


def main() -> None:
    run(sys.argv[1], int(sys.argv[2]), sys.stdout)


def run(db: str, seed: int, out: object) -> None:
    """The night; `out` gets the start line and one acknowledgement per committed event."""
    ledger = Ledger(db)
    referee = Referee(ledger, setup={"players": ["Ann", "Bea", "Cal", "Dot"], "variant": "three_card",
                                     "options": {"deals_per_player": 100}, "chips": 100, "first_dealer": 0})
    state = referee.state
    out.write(f"start {state.last_seq} {state.digest()}\n")
    out.flush()
    last = [state.last_seq]

    def on_step(_intent: object) -> None:
        if state.last_seq != last[0]:
            last[0] = state.last_seq
            out.write(f"ack {state.last_seq} {state.digest()}\n")
            out.flush()

    run_night(referee, VirtualPlayers(seed, revoke_rate=0.05), DirectTransport(referee, event_type=VisionEvent), on_step=on_step)
    out.write("done\n")
    out.flush()


if __name__ == "__main__":
    main()
