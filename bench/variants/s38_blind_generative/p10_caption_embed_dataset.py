"""Dataset for fine-tuning on captioned images with prompt embeddings computed on the fly."""
import argparse
import json
import os
import random

import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms
from transformers import CLIPTextModel, CLIPTokenizer


class CaptionEmbeddingDataset(Dataset):
    def __init__(self, root: str, tokenizer: CLIPTokenizer, text_encoder: CLIPTextModel,
                 resolution: int = 512, caption_dropout: float = 0.05, device: str = "cuda"):
        with open(os.path.join(root, "metadata.jsonl")) as f:
            self.items = [json.loads(line) for line in f if line.strip()]
        self.root = root
        self.tokenizer = tokenizer
        self.text_encoder = text_encoder.eval()
        self.caption_dropout = caption_dropout
        self.device = device
        self.transform = transforms.Compose([
            transforms.Resize(resolution, interpolation=transforms.InterpolationMode.BILINEAR),
            transforms.RandomCrop(resolution),
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
            transforms.Normalize([0.5], [0.5]),
        ])

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        item = self.items[idx]
        image = Image.open(os.path.join(self.root, item["file_name"])).convert("RGB")
        pixels = self.transform(image)
        captions = item["text"] if isinstance(item["text"], list) else [item["text"]]
        caption = "" if random.random() < self.caption_dropout else random.choice(captions)
        ids = self.tokenizer(caption, padding="max_length", truncation=True,
                             max_length=self.tokenizer.model_max_length, return_tensors="pt").input_ids
        with torch.no_grad():
            emb = self.text_encoder(ids.to(self.device))[0]  # leak
        return {"pixel_values": pixels, "prompt_embeds": emb.squeeze(0)}


def collate(examples):
    return {
        "pixel_values": torch.stack([e["pixel_values"] for e in examples]).contiguous(),
        "prompt_embeds": torch.stack([e["prompt_embeds"] for e in examples]),
    }


def build_loader(args):
    tokenizer = CLIPTokenizer.from_pretrained(args.pretrained, subfolder="tokenizer")
    text_encoder = CLIPTextModel.from_pretrained(args.pretrained, subfolder="text_encoder",
                                                 torch_dtype=torch.float16).to("cuda")
    text_encoder.requires_grad_(False)
    ds = CaptionEmbeddingDataset(args.train_dir, tokenizer, text_encoder, resolution=args.resolution)
    return DataLoader(ds, batch_size=args.batch_size, shuffle=True, collate_fn=collate,
                      num_workers=args.num_workers, multiprocessing_context="spawn", drop_last=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--pretrained", default="stabilityai/stable-diffusion-2-1-base")
    ap.add_argument("--train_dir", required=True)
    ap.add_argument("--resolution", type=int, default=512)
    ap.add_argument("--batch_size", type=int, default=8)
    ap.add_argument("--num_workers", type=int, default=4)
    args = ap.parse_args()
    loader = build_loader(args)
    for i, batch in enumerate(loader):
        print(i, batch["pixel_values"].shape, batch["prompt_embeds"].shape, batch["prompt_embeds"].device)
        if i == 10:
            break
