"""A reference Monte Carlo tree search bot for OXONO and YOXII.

UCT on the rules engine, with what makes MCTS strong in short games:

- **tactical playouts**: a playout takes a win on the move when there is one,
  and redraws (a few times) a random move that would hand the opponent a win
  on the move;
- **MCTS-Solver**: wins and losses proven in the tree are propagated up
  (a node with a winning child is won; one whose children all lose is lost),
  proven children are never explored again, and a proven win is played at once;
- **subtree reuse**: after each move the part of the tree under the move
  actually played, and under the opponent's reply, is kept for the next turn;
- a **time manager** (``bots.harness``) that spends the clock over the moves
  likely left.

Run it with ``python -m bots.mcts``.  Options (the ``options`` mapping of
``hello``): ``time_fraction`` (0.01-1, share of the time manager's budget),
``iterations`` (cap per move), ``c`` (UCT exploration constant, default 0.45
in OXONO and 0.6 in YOXII),
``seed`` (replaces the arena's per-game seed).
"""

from __future__ import annotations

import math
import time
from typing import Any

import engine
from bots.harness import Deadline, Searcher, options_number, run_bot
from bots.knowledge import for_game

__all__ = ["MCTS", "Node", "main"]

# Proven values, from the point of view of the player who moved into a node.
WON, LOST, DRAWN = 1, -1, 0
#: UCT exploration constants, from tournaments/tune-*.yaml.
_DEFAULT_C = {"oxono": 0.45, "yoxii": 0.6}
#: Random moves a playout draws before it accepts one that lets the opponent win.
_REDRAWS = 3


class Node:
    """One position of the tree.  ``wins`` counts results for ``mover``, the
    player who moved into it (a draw counts one half).  Nodes do not point
    to their parents (each iteration keeps its path), so the tree holds no
    reference cycles and a discarded subtree is freed at once, without the
    cyclic garbage collector."""

    __slots__ = ("state", "move", "children", "untried", "visits", "wins", "proven", "mover")

    def __init__(self, state: Any, move: str | None, mover: int) -> None:
        self.state = state
        self.move = move
        self.children: list[Node] = []
        self.untried: list[str] | None = None  # filled when first expanded
        self.visits = 0
        self.wins = 0.0
        self.proven: int | None = None
        self.mover = mover


class MCTS(Searcher):
    name = "MCTS"

    def __init__(self, game: engine.Game[Any], options: dict[str, Any]) -> None:
        super().__init__(game, options)
        self.knowledge = for_game(game)
        self.c = options_number(options, "c", _DEFAULT_C[game.name], 0.0, 10.0) or 0.0
        cap = options_number(options, "iterations", None, 1, 1e9)
        self.max_iterations = int(cap) if cap is not None else None
        self.root: Node | None = None
        #: Last turn's tree, freed after the move is sent rather than before.
        self.discarded: Node | None = None

    def new_game(self, seed: int | None) -> None:
        super().new_game(seed)
        self.root = None

    # -- tree ----------------------------------------------------------------

    def _node(self, state: Any, move: str | None) -> Node:
        game = self.game
        node = Node(state, move, 1 - game.to_move(state))
        outcome = game.outcome(state)
        if outcome is not None:
            node.proven = DRAWN if outcome.winner is None else WON if outcome.winner == node.mover else LOST
        return node

    def _expand_list(self, node: Node) -> list[str]:
        # When the player to move can win at once, that move is all the tree
        # needs: the node is lost for its mover as soon as it is expanded.
        wins = self.knowledge.winning_moves(node.state)
        if wins:
            return [wins[0]]
        moves = list(self.game.legal_moves(node.state))
        self.rng.shuffle(moves)
        return moves

    def _reuse(self, state: Any) -> Node:
        """The node of ``state`` in the last turn's tree (under the move played), else a new root."""
        old = self.root
        if old is not None:
            for node in (old, *old.children):
                if node.state == state:
                    return node
        return self._node(state, None)

    def choose(self, state: Any, legal: list[str], last_move: str | None, deadline: Deadline) -> tuple[str, dict[str, Any]]:
        root = self._reuse(state)
        reused = root.visits
        iterations = 0
        cap = self.max_iterations
        while root.proven is None:
            self._iterate(root)
            iterations += 1
            # An iteration is a fraction of a millisecond: the clock is read after each.
            if cap is not None and iterations >= cap or time.monotonic() >= deadline.soft:
                break
        best = self._best_child(root)
        # Keep the tree under the chosen move for the next turn.
        self.root = best
        self.discarded = root
        info = {
            "score": self._score(best),
            "iterations": iterations,
            "nodes": root.visits,
            "reused": reused,
            "pv": self._pv(best),
        }
        return best.move or legal[0], info

    def after_move(self) -> None:
        self.discarded = None  # frees the rest of the old tree (a large one takes a while)

    def _iterate(self, root: Node) -> None:
        node = root
        path = [root]
        # Selection: descend through expanded nodes by UCT until a node with
        # untried moves, a proven node, or a leaf.
        while node.proven is None:
            if node.untried is None:
                node.untried = self._expand_list(node)
            if node.untried:
                move = node.untried.pop()
                node = self._node(self.game.apply(node.state, move), move)
                path[-1].children.append(node)
                path.append(node)
                break
            node = self._select(node)
            path.append(node)
        if node.proven is not None:
            result = node.mover if node.proven == WON else 1 - node.mover if node.proven == LOST else None
            self._solve(path)
        else:
            result = self._playout(node.state)
        self._backup(path, result)

    def _select(self, node: Node) -> Node:
        log_n = math.log(node.visits + 1)
        c = self.c
        best, best_value = None, -1.0
        for child in node.children:
            if child.proven == LOST:
                continue  # never worth a visit: it loses for the player choosing it
            if child.visits == 0:
                return child
            value = child.wins / child.visits + c * math.sqrt(log_n / child.visits)
            if value > best_value:
                best, best_value = child, value
        # Every child lost: the solver has marked this node already.
        return best if best is not None else node.children[0]

    def _solve(self, path: list[Node]) -> None:
        """Propagate the proven node at the end of ``path`` up it as far as it decides the parents."""
        for i in range(len(path) - 1, 0, -1):
            node, parent = path[i], path[i - 1]
            if node.proven is None or parent.proven is not None:
                return
            if node.proven == WON:
                parent.proven = LOST  # the player to move at parent has a winning move
            elif parent.untried or any(child.proven is None for child in parent.children):
                return
            else:
                parent.proven = -max(child.proven for child in parent.children)  # type: ignore[type-var]

    @staticmethod
    def _backup(path: list[Node], winner: int | None) -> None:
        for node in path:
            node.visits += 1
            if winner is None:
                node.wins += 0.5
            elif winner == node.mover:
                node.wins += 1.0

    def _playout(self, state: Any) -> int | None:
        """Play to the end with tactical random moves; the winning seat, or None for a draw."""
        knowledge = self.knowledge
        rng = self.rng
        if knowledge.playout is not None:
            return knowledge.playout(state, rng)
        game = self.game
        apply = game.apply
        while True:
            outcome = game.outcome(state)
            if outcome is not None:
                return outcome.winner
            if knowledge.has_winning_move(state):
                return game.to_move(state)
            moves = game.legal_moves(state)
            after = apply(state, moves[int(rng.random() * len(moves))])
            for _ in range(_REDRAWS):
                if game.outcome(after) is None and not knowledge.has_winning_move(after):
                    break
                after = apply(state, moves[int(rng.random() * len(moves))])
            state = after

    # -- answer ---------------------------------------------------------------

    def _best_child(self, root: Node) -> Node:
        if root.untried is None:
            root.untried = self._expand_list(root)
        if not root.children:
            # Not even one iteration: take the first candidate (a win if there is one).
            move = root.untried.pop()
            child = self._node(self.game.apply(root.state, move), move)
            root.children.append(child)
            return child
        won = [c for c in root.children if c.proven == WON]
        if won:
            return won[0]
        alive = [c for c in root.children if c.proven != LOST] or root.children
        return max(alive, key=lambda c: (c.visits, c.wins))

    @staticmethod
    def _score(node: Node) -> float:
        """Expected result for the bot, from -1 (lost) to 1 (won)."""
        if node.proven is not None:
            return float(node.proven)
        if not node.visits:
            return 0.0
        return round(2 * node.wins / node.visits - 1, 3)

    @staticmethod
    def _pv(node: Node, limit: int = 10) -> list[str]:
        pv = []
        current: Node | None = node
        while current is not None and current.move is not None and len(pv) < limit:
            pv.append(current.move)
            won = [c for c in current.children if c.proven == WON]
            current = won[0] if won else max(current.children, key=lambda c: c.visits, default=None)
        return pv


def main() -> None:
    run_bot(MCTS)


if __name__ == "__main__":
    main()
