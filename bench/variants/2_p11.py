class GANTrainer:
    def __init__(self, G, D, opt_g, opt_d, loader, criterion):
        self.G, self.D = G, D
        self.opt_g, self.opt_d = opt_g, opt_d
        self.loader = loader
        self.criterion = criterion
        self.d_losses = []
        self.g_losses = []

    def train(self, epochs):
        for epoch in range(epochs):
            for real, _ in self.loader:
                fake = self.G(real)
                d_loss = self.criterion(self.D(real), 1) + self.criterion(self.D(fake.detach()), 0)
                self.opt_d.zero_grad()
                d_loss.backward()
                self.opt_d.step()
                g_loss = self.criterion(self.D(fake), 1)
                self.opt_g.zero_grad()
                g_loss.backward()
                self.opt_g.step()
                self.d_losses.append(d_loss)  # leak
                self.g_losses.append(g_loss)
