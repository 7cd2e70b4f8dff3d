import torch
import torch.nn as nn
import torch.nn.functional as F


class VolumeRenderer(nn.Module):
    """Stratified-sampling volume renderer around a NeRF MLP."""

    def __init__(self, nerf, n_samples=64, near=2.0, far=6.0, keep_debug=True):
        super().__init__()
        self.nerf = nerf
        self.n_samples = n_samples
        self.near, self.far = near, far
        self.keep_debug = keep_debug
        self.debug_rgb = []

    def sample_points(self, rays_o, rays_d):
        t = torch.linspace(self.near, self.far, self.n_samples, device=rays_o.device)
        t = t.expand(rays_o.shape[0], self.n_samples).contiguous()
        if self.training:
            mids = 0.5 * (t[:, 1:] + t[:, :-1])
            upper = torch.cat([mids, t[:, -1:]], dim=-1)
            lower = torch.cat([t[:, :1], mids], dim=-1)
            t = lower + (upper - lower) * torch.rand_like(t)
        pts = rays_o[:, None, :] + rays_d[:, None, :] * t[..., None]
        return pts, t

    def forward(self, rays_o, rays_d):
        pts, t = self.sample_points(rays_o, rays_d)
        dirs = F.normalize(rays_d, dim=-1)[:, None, :].expand_as(pts)
        raw = self.nerf(pts.reshape(-1, 3), dirs.reshape(-1, 3)).view(*pts.shape[:2], 4)
        rgb = torch.sigmoid(raw[..., :3])
        sigma = F.relu(raw[..., 3])
        delta = torch.cat([t[:, 1:] - t[:, :-1], torch.full_like(t[:, :1], 1e10)], dim=-1)
        alpha = 1.0 - torch.exp(-sigma * delta)
        trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1.0 - alpha + 1e-10], dim=-1), dim=-1)
        weights = alpha * trans[:, :-1]
        rgb_map = (weights[..., None] * rgb).sum(dim=-2)
        depth_map = (weights * t).sum(dim=-1)
        if self.keep_debug:
            self.debug_rgb += [rgb_map]  # leak
        return rgb_map, depth_map, weights


def train_step(renderer, optimizer, rays_o, rays_d, target_rgb):
    rgb, _, _ = renderer(rays_o, rays_d)
    loss = F.mse_loss(rgb, target_rgb)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    psnr = -10.0 * torch.log10(loss.detach())
    return loss.item(), psnr.item()


def fit(renderer, ray_sampler, iters=200_000, lr=5e-4):
    optimizer = torch.optim.Adam(renderer.parameters(), lr=lr)
    for it in range(iters):
        rays_o, rays_d, target = ray_sampler.next_batch(4096)
        loss, psnr = train_step(renderer, optimizer, rays_o, rays_d, target)
        if it % 1000 == 0:
            print(f"[{it}] loss={loss:.5f} psnr={psnr:.2f}")
