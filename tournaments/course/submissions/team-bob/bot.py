"""Team Bob's submission: the first legal move, as the arena lists them."""

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "team-bob"}), flush=True)
    elif message["type"] == "turn":
        print(json.dumps({"type": "move", "move": message["legal_moves"][0]}), flush=True)
    elif message["type"] == "quit":
        break
