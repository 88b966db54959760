"""Team Cy's submission: the last legal move, and a line on stderr per game."""

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "team-cy"}), flush=True)
    elif message["type"] == "new_game":
        print(f"playing {message['game_id']} as {message['you']}", file=sys.stderr, flush=True)
    elif message["type"] == "turn":
        print(json.dumps({"type": "move", "move": message["legal_moves"][-1]}), flush=True)
    elif message["type"] == "quit":
        break
