"""Team Ann's submission: a random legal move (standard library only)."""

import json
import random
import sys

rng = random.Random()
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "team-ann"}), flush=True)
    elif message["type"] == "new_game":
        rng = random.Random(message.get("seed"))
    elif message["type"] == "turn":
        print(json.dumps({"type": "move", "move": rng.choice(message["legal_moves"])}), flush=True)
    elif message["type"] == "quit":
        break
