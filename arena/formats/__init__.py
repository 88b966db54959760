"""How bots are paired and scored: the schedule of the formats fixed in
advance, the stages of Swiss, knockout and staged tournaments, their
pairing, rounds and brackets, and the one score and tally everybody uses.
Between the game layer (one game) and the results layer (many)."""
