"""Reading results: the store (the only writer of games.jsonl), standings
(computing), tables (rendering), statistics, forfeits, terminal replays and
the HTML report.  Pure functions of GameRecords, apart from the store."""
