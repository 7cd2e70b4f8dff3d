import torch
import torch.nn as nn


class StyleTransfer:
    """Gatys-style optimisation of an image with L-BFGS."""

    def __init__(self, features: nn.Module, content_layers, style_layers):
        self.features = features.eval().requires_grad_(False)
        self.content_layers = content_layers
        self.style_layers = style_layers

    @staticmethod
    def gram(x):
        b, c, h, w = x.shape
        f = x.view(b, c, h * w)
        return f @ f.transpose(1, 2) / (c * h * w)

    def extract(self, img):
        feats = {}
        x = img
        for name, layer in self.features.named_children():
            x = layer(x)
            if name in self.content_layers or name in self.style_layers:
                feats[name] = x
        return feats

    def run(self, content, style, steps=300, style_weight=1e6):
        with torch.no_grad():
            c_t = {k: v for k, v in self.extract(content).items() if k in self.content_layers}
            s_t = {k: self.gram(v) for k, v in self.extract(style).items() if k in self.style_layers}
        img = content.clone().requires_grad_(True)
        opt = torch.optim.LBFGS([img], max_iter=20)
        history = []
        for it in range(steps // 20):
            def closure():
                opt.zero_grad()
                feats = self.extract(img)
                c_loss = sum(nn.functional.mse_loss(feats[k], c_t[k]) for k in c_t)
                s_loss = sum(nn.functional.mse_loss(self.gram(feats[k]), s_t[k]) for k in s_t)
                loss = c_loss + style_weight * s_loss
                loss.backward()
                return loss

            loss = opt.step(closure)
            history.append(float(loss))
            with torch.no_grad():
                img.clamp_(0, 1)
        return img.detach(), history
