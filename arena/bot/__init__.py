"""One bot's process tree and its lines: how to start it (spec), its process
and the arena-wide reaper, cgroups and limits, the sandbox, the wire protocol,
and the player that asks it for moves.  Knows nothing of games or tournaments."""
