"""Neural style transfer with L-BFGS over the input image."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


def gram(feat: torch.Tensor) -> torch.Tensor:
    b, c, h, w = feat.shape
    f = feat.view(b, c, h * w)
    return f @ f.transpose(1, 2) / (c * h * w)


class VGGFeatures(nn.Module):
    def __init__(self, layers=(3, 8, 17, 26)) -> None:
        super().__init__()
        self.vgg = torchvision.models.vgg19(weights="DEFAULT").features[: max(layers) + 1].eval()
        self.layers = set(layers)
        for p in self.vgg.parameters():
            p.requires_grad_(False)

    def forward(self, x):
        feats = []
        for i, layer in enumerate(self.vgg):
            x = layer(x)
            if i in self.layers:
                feats.append(x)
        return feats


def stylize(content: torch.Tensor, style: torch.Tensor, steps: int = 300, style_weight: float = 1e6) -> torch.Tensor:
    net = VGGFeatures().cuda()
    with torch.no_grad():
        content_feats = net(content)
        style_grams = [gram(f) for f in net(style)]
    img = content.clone().requires_grad_(True)
    optimizer = torch.optim.LBFGS([img], max_iter=1)
    history: list[float] = []
    for it in range(steps):
        def closure():
            optimizer.zero_grad()
            feats = net(img)
            c_loss = F.mse_loss(feats[-1], content_feats[-1])
            s_loss = sum(F.mse_loss(gram(f), g) for f, g in zip(feats, style_grams))
            loss = c_loss + style_weight * s_loss
            loss.backward()
            return loss

        loss = optimizer.step(closure)
        history.append(loss.item())
        with torch.no_grad():
            img.clamp_(0, 1)
        if it % 50 == 0:
            print(f"iter {it}: {history[-1]:.2f}")
    return img.detach()
