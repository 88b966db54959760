"""What every layer of the arena stands on, and nothing of games or bots:
text made safe for where it goes, files opened without following links,
the signals that stop the arena, the process tree read from ``/proc``."""
