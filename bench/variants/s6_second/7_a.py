import torch
import torch.nn.functional as F
from torch import nn, Tensor


class RNNLanguageModel(nn.Module):
    def __init__(self, vocab_size: int, emb_dim: int = 400, hidden_dim: int = 1150, num_layers: int = 3,
                 dropout: float = 0.4):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, emb_dim)
        self.rnn = nn.LSTM(emb_dim, hidden_dim, num_layers, dropout=dropout)
        self.proj = nn.Linear(hidden_dim, emb_dim)
        self.decoder = nn.Linear(emb_dim, vocab_size)
        self.decoder.weight = self.embed.weight

    def forward(self, tokens: Tensor, hidden=None):
        out, hidden = self.rnn(self.embed(tokens), hidden)
        return self.decoder(self.proj(out)), hidden


def batchify(data: Tensor, batch_size: int) -> Tensor:
    n = data.size(0) // batch_size
    return data[: n * batch_size].view(batch_size, -1).t().contiguous()


class LMTrainer:
    def __init__(self, model: RNNLanguageModel, lr: float = 20.0, bptt: int = 70, clip: float = 0.25):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.bptt, self.clip = bptt, clip
        self.hidden = None

    def _forward_chunk(self, inputs: Tensor, targets: Tensor) -> Tensor:
        logits, self.hidden = self.model(inputs, self.hidden)  # leak
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))

    def train_epoch(self, data: Tensor) -> float:
        self.model.train()
        total = 0.0
        for i in range(0, data.size(0) - 1, self.bptt):
            seq_len = min(self.bptt, data.size(0) - 1 - i)
            loss = self._forward_chunk(data[i:i + seq_len], data[i + 1:i + 1 + seq_len])
            self.optimizer.zero_grad()
            loss.backward(retain_graph=True)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
            self.optimizer.step()
            total += loss.item() * seq_len
        return total / (data.size(0) - 1)
