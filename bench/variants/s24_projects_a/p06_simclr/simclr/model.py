"""ResNet-18 encoder with projection head and the NT-Xent objective."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class SimCLRNet(nn.Module):
    def __init__(self, proj_dim: int = 128, cifar_stem: bool = True):
        super().__init__()
        backbone = torchvision.models.resnet18(weights=None)
        if cifar_stem:
            backbone.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
            backbone.maxpool = nn.Identity()
        feat_dim = backbone.fc.in_features
        backbone.fc = nn.Identity()
        self.encoder = backbone
        self.projector = nn.Sequential(
            nn.Linear(feat_dim, feat_dim), nn.BatchNorm1d(feat_dim), nn.ReLU(inplace=True),
            nn.Linear(feat_dim, proj_dim),
        )

    def forward(self, x: torch.Tensor):
        h = self.encoder(x)
        return h, self.projector(h)


def nt_xent(z1: torch.Tensor, z2: torch.Tensor, temperature: float = 0.5) -> torch.Tensor:
    """Normalised temperature-scaled cross entropy over 2N views."""
    n = z1.shape[0]
    z = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
    sim = z @ z.t() / temperature
    sim.fill_diagonal_(float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
    return F.cross_entropy(sim, targets)


class TwoViewTransform:
    def __init__(self, size: int = 32):
        T = torchvision.transforms
        self.base = T.Compose([
            T.RandomResizedCrop(size, scale=(0.2, 1.0)),
            T.RandomHorizontalFlip(),
            T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8),
            T.RandomGrayscale(p=0.2),
            T.ToTensor(),
            T.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)),
        ])

    def __call__(self, x):
        return self.base(x), self.base(x)
