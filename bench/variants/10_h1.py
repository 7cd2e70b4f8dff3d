from collections import defaultdict


class ActivationRecorder:
    def __init__(self, model):
        self.model = model
        self.acts = defaultdict(list)

    def register(self):
        for name, m in self.model.named_modules():
            def hook(mod, inp, out, name=name):
                self.acts[name].append(out.detach())  # leak
            m.register_forward_hook(hook)
