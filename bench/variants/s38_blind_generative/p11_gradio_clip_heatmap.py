"""Gradio demo: CLIP patch/text similarity heatmaps for a prompt over an uploaded image."""
from typing import List

import gradio as gr
import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from transformers import CLIPModel, CLIPProcessor

MODEL_ID = "openai/clip-vit-base-patch16"


class HeatmapHandler:
    def __init__(self, model_id: str = MODEL_ID, device: str = "cuda"):
        self.device = device
        self.model = CLIPModel.from_pretrained(model_id).to(device).eval()
        self.processor = CLIPProcessor.from_pretrained(model_id)
        self.patch = self.model.config.vision_config.patch_size
        self.layer = self.model.vision_model.encoder.layers[-2]

    def _patch_tokens(self, pixel_values: torch.Tensor) -> torch.Tensor:
        captured: List[torch.Tensor] = []
        self.layer.register_forward_hook(lambda mod, inp, out: captured.append(out[0]))  # leak
        self.model.get_image_features(pixel_values=pixel_values)
        tokens = captured[-1][:, 1:]
        tokens = self.model.vision_model.post_layernorm(tokens)
        return self.model.visual_projection(tokens)

    @torch.inference_mode()
    def __call__(self, image: Image.Image, prompt: str, alpha: float = 0.5):
        if image is None or not prompt:
            return None, "upload an image and enter a prompt"
        inputs = self.processor(text=[prompt], images=image, return_tensors="pt", padding=True)
        pixel_values = inputs["pixel_values"].to(self.device)
        text_emb = self.model.get_text_features(input_ids=inputs["input_ids"].to(self.device),
                                                attention_mask=inputs["attention_mask"].to(self.device))
        patches = self._patch_tokens(pixel_values)
        sim = F.cosine_similarity(patches, text_emb[:, None, :], dim=-1)[0]
        side = int(sim.numel() ** 0.5)
        heat = sim.view(1, 1, side, side)
        heat = F.interpolate(heat, size=image.size[::-1], mode="bicubic", align_corners=False)[0, 0]
        heat = (heat - heat.min()) / (heat.max() - heat.min() + 1e-6)
        heat_np = heat.float().cpu().numpy()
        cmap = np.stack([heat_np, np.zeros_like(heat_np), 1 - heat_np], axis=-1)
        base = np.asarray(image.convert("RGB")).astype(np.float32) / 255.0
        blended = (1 - alpha) * base + alpha * cmap
        score = float(sim.max())
        return Image.fromarray((blended * 255).clip(0, 255).astype(np.uint8)), f"max similarity {score:.3f}"


def build_demo(handler: HeatmapHandler) -> gr.Blocks:
    with gr.Blocks(title="CLIP heatmap") as demo:
        with gr.Row():
            inp = gr.Image(type="pil", label="image")
            out = gr.Image(type="pil", label="heatmap")
        prompt = gr.Textbox(label="prompt", value="a dog")
        alpha = gr.Slider(0.0, 1.0, value=0.5, label="overlay")
        info = gr.Markdown()
        btn = gr.Button("run")
        btn.click(handler, inputs=[inp, prompt, alpha], outputs=[out, info])
    return demo


if __name__ == "__main__":
    demo = build_demo(HeatmapHandler())
    demo.queue(max_size=32).launch(server_name="0.0.0.0", server_port=7860)
