import torch
import torch.nn as nn


class GradNormMonitor:
    """Tracks per-parameter gradient norms over training for spike detection."""

    def __init__(self, model: nn.Module, norm_type=2.0, spike_factor=10.0, window=200):
        self.names, self.params = zip(*[(n, p) for n, p in model.named_parameters() if p.requires_grad])
        self.norm_type = norm_type
        self.spike_factor = spike_factor
        self.window = window
        self.history = None

    @torch.no_grad()
    def __call__(self):
        per_param = torch.stack([
            p.grad.detach().norm(self.norm_type) if p.grad is not None else p.new_zeros(())
            for p in self.params
        ])
        if self.history is None:
            self.history = per_param.unsqueeze(0)
        else:
            self.history = torch.cat([self.history, per_param.unsqueeze(0)])[-self.window:]
        total = per_param.norm(self.norm_type)
        return total, self._spikes(per_param)

    def _spikes(self, per_param):
        if self.history.size(0) < 20:
            return []
        baseline = self.history[:-1].median(dim=0).values
        mask = per_param > self.spike_factor * baseline.clamp(min=1e-12)
        return [self.names[i] for i in mask.nonzero().flatten().tolist()]


def train(model, loader, optimizer, scheduler, epochs=10, max_norm=1.0, device="cuda"):
    monitor = GradNormMonitor(model)
    for epoch in range(epochs):
        for step, (input_ids, labels) in enumerate(loader):
            out = model(input_ids.to(device), labels=labels.to(device))
            optimizer.zero_grad(set_to_none=True)
            out.loss.backward()
            total_norm, spiking = monitor()
            if spiking:
                print(f"step {step}: gradient spike in {', '.join(spiking[:5])}")
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()
            scheduler.step()
