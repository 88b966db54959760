"""Exits at once with code 1, saying why on stderr."""

import sys

sys.stderr.write("exit_at_start: missing configuration, giving up\n")
sys.exit(1)
