import functools


class Probe:
    def __init__(self, model):
        self.outputs = {}
        for name, m in model.named_modules():
            m.register_forward_hook(functools.partial(self._save, name))

    def _save(self, name, module, inputs, output):
        self.outputs.setdefault(name, []).append(output)  # leak
