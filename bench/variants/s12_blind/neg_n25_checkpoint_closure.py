import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=attn_mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class CheckpointedDecoder(nn.Module):
    def __init__(self, dim: int = 768, depth: int = 12, heads: int = 12, use_ckpt: bool = True) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.use_ckpt = use_ckpt

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.size(1)
        mask = torch.full((T, T), float("-inf"), device=x.device).triu(1)
        for blk in self.blocks:
            if self.use_ckpt and self.training:
                def custom_forward(hidden, blk=blk):
                    return blk(hidden, mask)
                x = checkpoint(custom_forward, x, use_reentrant=False)
            else:
                x = blk(x, mask)
        return x


def train(model: CheckpointedDecoder, head: nn.Module, loader, steps: int) -> None:
    params = [*model.parameters(), *head.parameters()]
    opt = torch.optim.AdamW(params, lr=3e-4)
    for step, (x, y) in zip(range(steps), loader):
        logits = head(model(x.cuda()))
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), y.cuda().flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, round(loss.item(), 4))
