"""``arena`` and ``python -m arena``: the command line, with Ctrl-C during
start-up (while the modules load) ending in the same line as later."""

import os
import signal
import sys

from arena.base import stop_signals


def main() -> None:
    # Held while the modules load: a KeyboardInterrupt raised inside an
    # import can be caught by a library's own fallback (multiprocess's) and
    # end in another error.  Released once the arena's handler is in place,
    # one that came meanwhile is the one line.
    signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals.STOP_SIGNALS)
    try:
        from arena.cli import main as cli_main

        stop_signals.install()
        signal.pthread_sigmask(signal.SIG_UNBLOCK, stop_signals.STOP_SIGNALS)
    except KeyboardInterrupt:
        _interrupted()
    cli_main()


def _interrupted() -> None:
    sys.stderr.write("error: interrupted\n")
    sys.stderr.flush()
    # Not sys.exit: an import cut short can leave the interpreter to end
    # itself by SIGINT on the way out.  Nothing is running yet to clean up.
    os._exit(130)


if __name__ == "__main__":
    main()
