"""A reference alpha-beta bot for OXONO and YOXII.

Iterative deepening negamax with alpha-beta pruning, a transposition table
keyed by the engine's states (immutable values that hash equal when equal,
which is what Zobrist keys give a C engine), move ordering (the table's move,
immediate wins, two killer moves per ply, the history heuristic), a leaf check
for a win on the next move (a one-ply tactical quiescence), and a static
evaluation written for each game (``bots.oxono_eval``, ``bots.yoxii_eval``).

Run it with ``python -m bots.alphabeta``.  Options (the ``options`` mapping of
``hello``): ``time_fraction`` (0.01-1, share of the time manager's budget),
``depth`` (deepest iteration), ``nodes`` (node budget per move), ``seed``
(tie-breaks among equal root moves), ``prune_values`` (YOXII: below the root,
try only the lowest and the highest piece value in reserve; default true),
``lmr`` (late move reductions; default true).
"""

from __future__ import annotations

import time
from typing import Any

import engine
from bots.harness import Deadline, Searcher, options_number, run_bot
from bots.knowledge import WIN, for_game
from bots.yoxii_eval import extreme_values

__all__ = ["AlphaBeta", "main"]

#: Scores beyond this are wins or losses found by search, not evaluations.
MATE_BOUND = WIN - 1000
_EXACT, _LOWER, _UPPER = 0, 1, 2
#: Entries kept in the transposition table (and the leaf cache) before it is cleared.
_TT_LIMIT = 250_000
#: Moves searched at full depth before late move reductions begin (the table's
#: move, the killers and the best of the history).
_LMR_AFTER = 4
#: A leaf whose player to move wins at once, in the leaf cache (any value beyond evaluations).
_WIN_ON_MOVE = WIN


class _OutOfTime(Exception):
    pass


class AlphaBeta(Searcher):
    name = "AlphaBeta"

    def __init__(self, game: engine.Game[Any], options: dict[str, Any]) -> None:
        super().__init__(game, options)
        self.knowledge = for_game(game)
        prune = options.get("prune_values", True)
        #: Below the root, YOXII moves keep only the lowest and highest value in reserve.
        self.narrow = extreme_values if game.name == "yoxii" and prune is not False else None
        self.lmr = options.get("lmr", True) is not False
        self.max_depth = int(options_number(options, "depth", 64, 1, 64) or 64)
        nodes = options_number(options, "nodes", None, 1, 1e12)
        self.max_nodes = int(nodes) if nodes is not None else None
        self.tt: dict[Any, tuple[int, int, int, str | None]] = {}
        #: Static value of leaves met before, or _WIN_ON_MOVE.
        self.leaves: dict[Any, int] = {}
        self.history: dict[str, int] = {}
        self.killers: list[list[str | None]] = []
        self.nodes = 0
        self.deadline = Deadline.unlimited()
        self.node_limit = 0

    def new_game(self, seed: int | None) -> None:
        super().new_game(seed)
        self.tt.clear()
        self.leaves.clear()
        self.history.clear()

    def after_move(self) -> None:
        # Clearing a large table takes a while: on the opponent's time.
        if len(self.tt) > _TT_LIMIT:
            self.tt.clear()
        if len(self.leaves) > _TT_LIMIT:
            self.leaves.clear()

    # -- the search --------------------------------------------------------

    def choose(self, state: Any, legal: list[str], last_move: str | None, deadline: Deadline) -> tuple[str, dict[str, Any]]:
        self.deadline = deadline
        self.nodes = 0
        self.node_limit = self.max_nodes or (1 << 62)
        # Old history would drown the new position's; halve it each move.
        self.history = {m: h >> 1 for m, h in self.history.items() if h > 1}
        self.killers = [[None, None] for _ in range(80)]
        wins = self.knowledge.winning_moves(state)
        if wins:
            return wins[0], {"score": WIN - 1, "depth": 1, "nodes": 1, "pv": [wins[0]]}
        root_moves = list(legal)
        self.rng.shuffle(root_moves)  # equal moves are then chosen at random under the seed
        best, score, depth_done = root_moves[0], 0, 0
        iteration_times: list[float] = []
        for depth in range(1, self.max_depth + 1):
            started = time.monotonic()
            new_score, new_best, complete = self._root(state, root_moves, depth)
            if not complete:
                if new_score > -WIN - 1 and new_best != best:
                    score, best = new_score, new_best
                break
            score, best, depth_done = new_score, new_best, depth
            iteration_times.append(time.monotonic() - started)
            # The best move first at the next depth: its score sets the window.
            root_moves.remove(best)
            root_moves.insert(0, best)
            if abs(score) >= MATE_BOUND or len(root_moves) == 1:
                break
            if deadline.passed_soft() or self._next_iteration_too_long(iteration_times):
                break
        info = {"score": score, "depth": depth_done, "nodes": self.nodes, "pv": self._pv(state, best)}
        return best, info

    def _next_iteration_too_long(self, times: list[float]) -> bool:
        """Would the next depth end after the hard limit? Its length is guessed
        from the growth between the last iterations (the effective branching factor)."""
        growth = times[-1] / times[-2] if len(times) >= 2 and times[-2] > 0.002 else 6.0
        growth = min(max(growth, 2.0), 30.0)
        return time.monotonic() + times[-1] * growth > self.deadline.hard

    def _root(self, state: Any, moves: list[str], depth: int) -> tuple[int, str, bool]:
        """Score and best move at ``depth``, and whether every move was searched.
        Cut short by the clock, the best so far is still sound once the first
        move (the last depth's best) has been searched: any move that beat it
        was searched again with a full window."""
        game = self.game
        alpha, best = -WIN - 1, moves[0]
        try:
            for move in moves:
                child = game.apply(state, move)
                if alpha > -WIN - 1:  # after the first move: null window, then again in full if it is better
                    score = -self._negamax(child, depth - 1, -alpha - 1, -alpha, 1)
                    if score <= alpha:
                        continue
                score = -self._negamax(child, depth - 1, -WIN - 1, -alpha, 1)
                if score > alpha:
                    alpha, best = score, move
        except _OutOfTime:
            return alpha, best, False
        self._store(state, depth, _EXACT, alpha, best, 0)
        return alpha, best, True

    def _negamax(self, state: Any, depth: int, alpha: int, beta: int, ply: int) -> int:
        self.nodes += 1
        if not self.nodes & 15 and (time.monotonic() >= self.deadline.hard or self.nodes >= self.node_limit):
            raise _OutOfTime
        game = self.game
        outcome = game.outcome(state)
        if outcome is not None:
            if outcome.winner is None:
                return 0
            return WIN - ply if outcome.winner == game.to_move(state) else -(WIN - ply)
        knowledge = self.knowledge
        if depth <= 0:
            # A win on the move is seen at every leaf: one ply of tactics for free.
            leaf = self.leaves.get(state)
            if leaf is None:
                leaf = self.leaves[state] = _WIN_ON_MOVE if knowledge.has_winning_move(state) else knowledge.evaluate(state)
            return WIN - ply - 1 if leaf == _WIN_ON_MOVE else leaf
        entry = self.tt.get(state)
        tt_move = None
        if entry is not None:
            e_depth, flag, e_score, tt_move = entry
            if e_depth >= depth:
                e_score = _from_tt(e_score, ply)
                if flag == _EXACT:
                    return e_score
                if flag == _LOWER and e_score >= beta:
                    return e_score
                if flag == _UPPER and e_score <= alpha:
                    return e_score
        wins = knowledge.winning_moves(state)
        if wins:
            return WIN - ply - 1
        moves = game.legal_moves(state)
        if self.narrow is not None:
            moves = self.narrow(moves)
        moves = self._ordered(moves, tt_move, ply)
        original_alpha = alpha
        best_score, best_move = -WIN - 1, moves[0]
        # Late move reductions: the moves ordered last are searched one ply
        # shallower first, and again at full depth only if they look better.
        reduce_from = _LMR_AFTER if self.lmr and depth >= 3 else len(moves)
        for index, move in enumerate(moves):
            child = game.apply(state, move)
            if not index:
                score = -self._negamax(child, depth - 1, -beta, -alpha, ply + 1)
            else:
                # Principal variation search: prove the move is no better with a
                # null window; search it again in full only when it is.
                reduced = depth - 2 if index >= reduce_from else depth - 1
                score = -self._negamax(child, reduced, -alpha - 1, -alpha, ply + 1)
                if score > alpha and reduced < depth - 1:
                    score = -self._negamax(child, depth - 1, -alpha - 1, -alpha, ply + 1)
                if alpha < score < beta:
                    score = -self._negamax(child, depth - 1, -beta, -alpha, ply + 1)
            if score > best_score:
                best_score, best_move = score, move
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        killers = self.killers[ply]
                        if killers[0] != move:
                            killers[1], killers[0] = killers[0], move
                        self.history[move] = self.history.get(move, 0) + depth * depth
                        break
        flag = _UPPER if best_score <= original_alpha else _LOWER if best_score >= beta else _EXACT
        self._store(state, depth, flag, best_score, best_move, ply)
        return best_score

    def _ordered(self, moves: list[str], tt_move: str | None, ply: int) -> list[str]:
        history = self.history
        get = history.get
        ordered = sorted(moves, key=lambda m: get(m, 0), reverse=True) if history else list(moves)
        front = [m for m in (tt_move, *self.killers[ply]) if m is not None]
        if front:
            present = set(moves)
            seen = []
            for m in front:
                if m in present and m not in seen:
                    seen.append(m)
            if seen:
                ordered = seen + [m for m in ordered if m not in seen]
        return ordered

    def _store(self, state: Any, depth: int, flag: int, score: int, move: str | None, ply: int) -> None:
        old = self.tt.get(state)
        if old is None or old[0] <= depth:
            self.tt[state] = (depth, flag, _to_tt(score, ply), move)

    def _pv(self, state: Any, first: str, limit: int = 12) -> list[str]:
        pv, seen = [first], {state}
        state = self.game.apply(state, first)
        while len(pv) < limit and not self.game.is_over(state) and state not in seen:
            seen.add(state)
            entry = self.tt.get(state)
            if entry is None or entry[3] is None or entry[3] not in self.game.legal_moves(state):
                break
            pv.append(entry[3])
            state = self.game.apply(state, entry[3])
        return pv


def _to_tt(score: int, ply: int) -> int:
    """Win scores count plies from the root; the table stores them from the node."""
    if score >= MATE_BOUND:
        return score + ply
    if score <= -MATE_BOUND:
        return score - ply
    return score


def _from_tt(score: int, ply: int) -> int:
    if score >= MATE_BOUND:
        return score - ply
    if score <= -MATE_BOUND:
        return score + ply
    return score


def main() -> None:
    run_bot(AlphaBeta)


if __name__ == "__main__":
    main()
