import torch
from torch import nn
import torchvision


class FeatureExtractor:
    """Grabs intermediate ResNet features for a feature-distillation loss."""

    def __init__(self, model: nn.Module, layer_names):
        self.model = model
        self.features = {}
        self._handles = []
        for name, module in model.named_modules():
            if name in layer_names:
                module._fx_name = name
                self._handles.append(module.register_forward_hook(self._hook))

    def _hook(self, module, inp, out):
        self.features[module._fx_name] = out

    def latest(self, name):
        return self.features[name]

    def remove(self):
        for h in self._handles:
            h.remove()
        self.features.clear()


def distill_loss(student_feats, teacher_feats):
    return sum(torch.mean((s - t) ** 2) for s, t in zip(student_feats, teacher_feats))


def main():
    device = torch.device("cuda")
    teacher = torchvision.models.resnet50(weights="IMAGENET1K_V2").to(device).eval()
    student = torchvision.models.resnet18(num_classes=1000).to(device)
    layers = ["layer2", "layer3"]
    s_ext = FeatureExtractor(student, layers)
    t_ext = FeatureExtractor(teacher, layers)
    proj = nn.ModuleDict({
        "layer2": nn.Conv2d(128, 512, 1), "layer3": nn.Conv2d(256, 1024, 1)
    }).to(device)
    opt = torch.optim.SGD(list(student.parameters()) + list(proj.parameters()), lr=0.05, momentum=0.9)
    loader = torch.utils.data.DataLoader(
        torchvision.datasets.FakeData(size=2000, transform=torchvision.transforms.ToTensor()),
        batch_size=32, num_workers=4,
    )
    try:
        for step, (x, y) in enumerate(loader):
            x, y = x.to(device), y.to(device)
            with torch.no_grad():
                teacher(x)
            logits = student(x)
            kd = distill_loss([proj[n](s_ext.latest(n)) for n in layers], [t_ext.latest(n) for n in layers])
            loss = nn.functional.cross_entropy(logits, y) + 0.5 * kd
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if step % 50 == 0:
                print(step, float(loss))
    finally:
        s_ext.remove()
        t_ext.remove()


if __name__ == "__main__":
    main()
