"""Self-play actor for AlphaZero-style training: plays MCTS games and ships them to the replay store."""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, Dict, List, Tuple

import numpy as np
import torch
import torch.nn.functional as F

log = logging.getLogger("selfplay")


class InvalidPriorsError(RuntimeError):
    pass


@dataclass
class SelfPlayConfig:
    num_simulations: int = 200
    c_puct: float = 1.5
    dirichlet_alpha: float = 0.3
    noise_frac: float = 0.25
    temperature_moves: int = 15
    reload_every: int = 50
    device: str = "cuda"


class Node:
    __slots__ = ("prior", "visits", "value_sum", "children")

    def __init__(self, prior: float):
        self.prior, self.visits, self.value_sum = prior, 0, 0.0
        self.children: Dict[int, "Node"] = {}

    def value(self) -> float:
        return self.value_sum / self.visits if self.visits else 0.0


class MCTS:
    def __init__(self, net: torch.nn.Module, game: Any, cfg: SelfPlayConfig):
        self.net, self.game, self.cfg = net, game, cfg

    def _evaluate(self, state) -> Tuple[np.ndarray, float]:
        obs = torch.as_tensor(self.game.encode(state), dtype=torch.float32, device=self.cfg.device)
        with torch.no_grad():
            logits, value = self.net(obs.unsqueeze(0))
        legal = torch.as_tensor(self.game.legal_mask(state), device=logits.device)
        priors = F.softmax(logits.squeeze(0).masked_fill(~legal, float("-inf")), dim=-1)
        if not torch.isfinite(priors).all():
            raise InvalidPriorsError(f"non-finite priors at move {state.move_count}")
        return priors.cpu().numpy(), float(value)

    def _expand(self, node: Node, priors: np.ndarray) -> None:
        for a in np.flatnonzero(priors):
            node.children[int(a)] = Node(float(priors[a]))

    def search(self, root_state) -> np.ndarray:
        root = Node(1.0)
        priors, _ = self._evaluate(root_state)
        noise = np.random.dirichlet([self.cfg.dirichlet_alpha] * len(priors))
        self._expand(root, (1 - self.cfg.noise_frac) * priors + self.cfg.noise_frac * noise * (priors > 0))
        for _ in range(self.cfg.num_simulations):
            node, state, path = root, root_state, [root]
            while node.children:
                sqrt_n = math.sqrt(node.visits + 1)
                a, node = max(node.children.items(), key=lambda kv: -kv[1].value()
                              + self.cfg.c_puct * kv[1].prior * sqrt_n / (1 + kv[1].visits))
                state = self.game.next_state(state, a)
                path.append(node)
            if self.game.is_terminal(state):
                value = -self.game.terminal_value(state)
            else:
                leaf_priors, value = self._evaluate(state)
                self._expand(node, leaf_priors)
                value = -value
            for n in reversed(path):
                n.value_sum += value
                n.visits += 1
                value = -value
        visits = np.zeros(self.game.action_size, dtype=np.float32)
        for a, child in root.children.items():
            visits[a] = child.visits
        return visits / visits.sum()


class SelfPlayWorker:
    def __init__(self, net, game, replay, weight_store, cfg: SelfPlayConfig):
        self.net, self.game, self.replay, self.weights, self.cfg = net, game, replay, weight_store, cfg
        self.mcts = MCTS(net, game, cfg)
        self.games_played = 0
        self.aborted: List[Tuple[int, str]] = []

    def play_game(self) -> List[Tuple[np.ndarray, np.ndarray, float]]:
        state, trajectory = self.game.initial_state(), []
        while not self.game.is_terminal(state):
            pi = self.mcts.search(state)
            trajectory.append((self.game.encode(state), pi, self.game.to_play(state)))
            if state.move_count < self.cfg.temperature_moves:
                action = int(np.random.choice(len(pi), p=pi))
            else:
                action = int(pi.argmax())
            state = self.game.next_state(state, action)
        winner = self.game.winner(state)
        return [(obs, pi, 0.0 if winner is None else float(player == winner) * 2 - 1)
                for obs, pi, player in trajectory]

    def run(self, num_games: int) -> None:
        for g in range(num_games):
            try:
                record = self.play_game()
            except (InvalidPriorsError, FloatingPointError) as err:
                log.warning("game %d aborted: %s", g, err)
                self.aborted.append((self.games_played, repr(err)))
                continue
            self.replay.add(record)
            self.games_played += 1
            if self.games_played % self.cfg.reload_every == 0:
                self.net.load_state_dict(self.weights.latest(map_location=self.cfg.device))
                log.info("reloaded weights after %d games (%d aborted)", self.games_played, len(self.aborted))
