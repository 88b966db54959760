"""``arena`` and ``python -m arena``: the command line, with Ctrl-C during
start-up (while the modules load) ending in the same line as later."""

import os
import sys


def main() -> None:
    try:
        from arena.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        sys.stderr.flush()
        # Not sys.exit: an import cut short can leave the interpreter to end
        # itself by SIGINT on the way out.  Nothing is running yet to clean up.
        os._exit(130)
    cli_main()


if __name__ == "__main__":
    main()
