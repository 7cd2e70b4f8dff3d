"""Gradio handler that shows per-layer feature norms of a ViT classifier for an uploaded image."""
from typing import Dict, List, Tuple

import gradio as gr
import numpy as np
import torch
import torch.nn as nn
from PIL import Image
from transformers import AutoImageProcessor, ViTForImageClassification


class FeatureNormHandler:
    def __init__(self, model_id: str = "google/vit-base-patch16-224", device: str = "cuda",
                 layers: Tuple[int, ...] = (3, 6, 9, 11)):
        self.device = device
        self.model = ViTForImageClassification.from_pretrained(model_id).to(device).eval()
        self.processor = AutoImageProcessor.from_pretrained(model_id)
        self.layer_ids = layers
        self.blocks: List[nn.Module] = [self.model.vit.encoder.layer[i] for i in layers]

    def _run_with_taps(self, pixel_values: torch.Tensor):
        taps: Dict[int, torch.Tensor] = {}
        handles = []
        try:
            for lid, block in zip(self.layer_ids, self.blocks):
                def tap(mod, inp, out, lid=lid):
                    hidden = out[0] if isinstance(out, tuple) else out
                    taps[lid] = hidden[:, 1:].norm(dim=-1).float().cpu()
                handles.append(block.register_forward_hook(tap))
            logits = self.model(pixel_values=pixel_values).logits
        finally:
            for h in handles:
                h.remove()
        return logits, taps

    @torch.inference_mode()
    def __call__(self, image: Image.Image, top_k: int = 5):
        if image is None:
            return [], {}
        inputs = self.processor(images=image.convert("RGB"), return_tensors="pt")
        logits, taps = self._run_with_taps(inputs["pixel_values"].to(self.device))
        probs = logits.softmax(-1)[0]
        top = probs.topk(int(top_k))
        labels = {self.model.config.id2label[int(i)]: float(p) for p, i in zip(top.values, top.indices)}
        gallery = []
        for lid in self.layer_ids:
            norms = taps[lid][0]
            side = int(norms.numel() ** 0.5)
            grid = norms.view(side, side).numpy()
            grid = (grid - grid.min()) / (np.ptp(grid) + 1e-6)
            img = Image.fromarray((grid * 255).astype(np.uint8)).resize(image.size, Image.BICUBIC)
            gallery.append((img, f"layer {lid}"))
        return gallery, labels


def build_demo(handler: FeatureNormHandler) -> gr.Interface:
    return gr.Interface(
        fn=handler,
        inputs=[gr.Image(type="pil"), gr.Slider(1, 10, value=5, step=1, label="top-k")],
        outputs=[gr.Gallery(label="token norms"), gr.Label(label="prediction")],
        title="ViT feature norms",
        allow_flagging="never",
    )


if __name__ == "__main__":
    build_demo(FeatureNormHandler()).queue(max_size=16).launch(server_name="0.0.0.0")
