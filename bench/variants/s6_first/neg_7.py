import torch
import torch.nn as nn


def infer_feature_shapes(model, input_size=(1, 3, 224, 224)):
    shapes = {}
    handles = []

    def make_probe(name):
        def probe(module, inputs, output):
            shapes[name] = tuple(output.shape)
        return probe

    for name, module in model.named_children():
        handles.append(module.register_forward_hook(make_probe(name)))

    was_training = model.training
    model.eval()
    with torch.no_grad():
        model(torch.zeros(*input_size))
    for h in handles:
        h.remove()
    model.train(was_training)
    return shapes


def build_head_for(backbone, n_classes=100):
    shapes = infer_feature_shapes(backbone)
    last_name = list(shapes)[-1]
    channels = shapes[last_name][1]
    return nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, n_classes))
