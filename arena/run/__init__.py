"""Running many games: the tournament file's config, the schedule, the
executors (local worker processes or Ray), the queue of specs they share and
the pool of bots they keep, the pre-flight, and the tournament and match loops
that store each record."""
