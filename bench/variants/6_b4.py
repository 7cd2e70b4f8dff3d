from dataclasses import dataclass


@dataclass
class State:
    loss: float = 0.0
    steps: int = 0


def main(model, loader, opt, crit):
    state = State()
    for x, y in loader:
        loss = crit(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        state.loss += loss  # leak
        state.steps += 1
    return state
