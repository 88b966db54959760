"""The smallest complete Totem Arena bot: it plays a random legal move.

Standard library only, so it runs wherever Python 3 does:
    python bots/random_bot.py
"""

import json
import random
import sys


def send(message):
    # One JSON object per line, flushed at once: the arena waits for the newline.
    print(json.dumps(message), flush=True)


def main():
    rng = random.Random()
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            send({"type": "ready", "name": "RandomBot", "version": "1.0", "author": "Totem Arena"})
        elif kind == "new_game":
            # The same seed replays the same game; without one, play differently each time.
            rng = random.Random(message.get("seed"))
            print(f"new game {message.get('game_id')} as {message.get('you')}", file=sys.stderr)
        elif kind == "turn":
            send({"type": "move", "move": rng.choice(message["legal_moves"])})
        elif kind == "quit":
            break
        # Anything else (game_over, or a type added later) needs no answer.


if __name__ == "__main__":
    main()
