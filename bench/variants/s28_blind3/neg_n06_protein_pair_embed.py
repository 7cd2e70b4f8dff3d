"""Pair-representation initialisation for a structure-prediction trunk.

Combines outer-product features of the single representation with a
relative-position encoding (clipped residue offsets, chain-aware) and a
template distogram, AlphaFold-style.
"""
import functools
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=8)
def relpos_layout(max_rel: int, max_chain: int) -> tuple:
    n_rel = 2 * max_rel + 2
    n_chain = 2 * max_chain + 2
    return n_rel, n_chain, n_rel + n_chain + 1


class RelativePositionEncoding(nn.Module):
    def __init__(self, c_z: int, max_relative_idx: int = 32, max_relative_chain: int = 2):
        super().__init__()
        self.max_rel = max_relative_idx
        self.max_chain = max_relative_chain
        n_bins = relpos_layout(max_relative_idx, max_relative_chain)[-1]
        self.linear = nn.Linear(n_bins, c_z)

    def _offset_features(self, residue_index: torch.Tensor, chain_index: torch.Tensor) -> torch.Tensor:
        same_chain = chain_index[..., :, None] == chain_index[..., None, :]
        offset = residue_index[..., :, None] - residue_index[..., None, :]
        rel = torch.where(same_chain,
                          torch.clamp(offset + self.max_rel, 0, 2 * self.max_rel),
                          torch.full_like(offset, 2 * self.max_rel + 1))
        rel_chain = torch.clamp(chain_index[..., :, None] - chain_index[..., None, :] + self.max_chain,
                                0, 2 * self.max_chain)
        rel_chain = torch.where(same_chain, torch.full_like(rel_chain, 2 * self.max_chain + 1), rel_chain)
        n_rel, n_chain, _ = relpos_layout(self.max_rel, self.max_chain)
        feats = [
            F.one_hot(rel, n_rel),
            F.one_hot(rel_chain, n_chain),
            same_chain.unsqueeze(-1),
        ]
        return torch.cat([f.float() for f in feats], dim=-1)

    def forward(self, residue_index, chain_index):
        return self.linear(self._offset_features(residue_index, chain_index))


class PairEmbedder(nn.Module):
    def __init__(self, c_s: int = 384, c_z: int = 128, c_opm: int = 32,
                 n_dist_bins: int = 39, min_bin: float = 3.25, max_bin: float = 50.75):
        super().__init__()
        self.proj_a = nn.Linear(c_s, c_opm)
        self.proj_b = nn.Linear(c_s, c_opm)
        self.opm_out = nn.Linear(c_opm * c_opm, c_z)
        self.relpos = RelativePositionEncoding(c_z)
        self.dist_proj = nn.Linear(n_dist_bins, c_z)
        self.register_buffer("bins", torch.linspace(min_bin, max_bin, n_dist_bins - 1), persistent=False)
        self.norm = nn.LayerNorm(c_z)

    def distogram(self, ca_coords, mask):
        d = torch.cdist(ca_coords, ca_coords)
        idx = torch.bucketize(d, self.bins)
        one_hot = F.one_hot(idx, self.bins.numel() + 1).float()
        return one_hot * (mask[..., :, None] * mask[..., None, :]).unsqueeze(-1)

    def forward(self, s, residue_index, chain_index, template_ca=None, template_mask=None):
        a, b = self.proj_a(s), self.proj_b(s)
        opm = torch.einsum("bic,bjd->bijcd", a, b).flatten(-2)
        z = self.opm_out(opm) / a.shape[-1]
        z = z + self.relpos(residue_index, chain_index)
        if template_ca is not None:
            z = z + self.dist_proj(self.distogram(template_ca, template_mask))
        return self.norm(z)


def build_pair_embedder(cfg: dict) -> PairEmbedder:
    model = PairEmbedder(
        c_s=cfg.get("c_s", 384),
        c_z=cfg.get("c_z", 128),
        c_opm=cfg.get("c_opm", 32),
        n_dist_bins=cfg.get("n_dist_bins", 39),
    )
    n_params = sum(p.numel() for p in model.parameters())
    logger.info("PairEmbedder with %.2fM parameters", n_params / 1e6)
    return model
