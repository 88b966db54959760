"""One game: the spec that asks for it and the record it ends in, the clock,
the opening it starts from, the referee that plays it move by move, and the
positions of a recorded game.  Imports only engine/ and arena.bot."""
