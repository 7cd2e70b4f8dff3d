class Solver:
    def __init__(self, net, optim, loader, crit):
        self.net = net
        self.optim = optim
        self.loader = loader
        self.crit = crit
        self.loss_history = []

    def step(self, x, y):
        out = self.net(x)
        loss = self.crit(out, y)
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()
        return loss

    def train(self):
        for x, y in self.loader:
            loss = self.step(x, y)
            self.loss_history.append(loss)  # leak
