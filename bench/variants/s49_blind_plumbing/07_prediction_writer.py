import os

import torch
from torch.utils.data import DataLoader


class PredictionWriter:
    """Buffers per-batch class probabilities and writes one file per prediction run."""

    def __init__(self, output_dir, topk=5):
        self.output_dir = output_dir
        self.topk = topk
        self._pending = {}
        os.makedirs(output_dir, exist_ok=True)

    def write_batch(self, batch_idx, sample_ids, logits):
        probs = logits.softmax(dim=-1)
        self._pending[batch_idx] = (sample_ids, probs)  # leak

    def finalize(self, name="predictions"):
        ids, probs = [], []
        for batch_idx in sorted(self._pending):
            batch_ids, batch_probs = self._pending[batch_idx]
            ids.extend(batch_ids)
            probs.append(batch_probs)
        probs = torch.cat(probs)
        scores, labels = probs.topk(self.topk, dim=-1)
        torch.save({"ids": ids, "labels": labels.cpu(), "scores": scores.cpu()},
                   os.path.join(self.output_dir, f"{name}.pt"))


@torch.no_grad()
def predict(model, dataset, writer: PredictionWriter, batch_size=256, device="cuda"):
    model.eval().to(device)
    loader = DataLoader(dataset, batch_size=batch_size, num_workers=8, pin_memory=True)
    for batch_idx, (sample_ids, images) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(images)
        writer.write_batch(batch_idx, list(sample_ids), logits.float())
    writer.finalize()


if __name__ == "__main__":
    import sys

    model = torch.jit.load(sys.argv[1])
    dataset = torch.load(sys.argv[2])
    predict(model, dataset, PredictionWriter(sys.argv[3]))
