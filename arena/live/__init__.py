"""The live web view, ``arena serve``: a read-only page over a results
directory, updated as the tournament plays (:mod:`.state` reads, :mod:`.server`
serves, :mod:`.background` runs it beside ``arena run --serve``)."""
