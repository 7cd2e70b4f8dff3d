"""Precompute CLIP prompt embeddings for a caption dataset and store them next to the images."""
import argparse
import json
import os
from typing import Dict, List

import torch
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm
from transformers import CLIPTextModel, CLIPTokenizer


class CaptionDataset(Dataset):
    def __init__(self, root: str, tokenizer: CLIPTokenizer):
        with open(os.path.join(root, "metadata.jsonl")) as f:
            self.items = [json.loads(line) for line in f if line.strip()]
        self.tokenizer = tokenizer

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx) -> Dict:
        item = self.items[idx]
        caption = item["text"][0] if isinstance(item["text"], list) else item["text"]
        ids = self.tokenizer(caption, padding="max_length", truncation=True,
                             max_length=self.tokenizer.model_max_length, return_tensors="pt").input_ids[0]
        return {"input_ids": ids, "key": os.path.splitext(item["file_name"])[0]}


def collate_cpu(examples: List[Dict]) -> Dict:
    return {
        "input_ids": torch.stack([e["input_ids"] for e in examples]),
        "keys": [e["key"] for e in examples],
    }


@torch.no_grad()
def precompute(args):
    device = torch.device("cuda")
    tokenizer = CLIPTokenizer.from_pretrained(args.pretrained, subfolder="tokenizer")
    encoder = CLIPTextModel.from_pretrained(args.pretrained, subfolder="text_encoder",
                                            torch_dtype=torch.float16).to(device).eval()
    ds = CaptionDataset(args.root, tokenizer)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=False, num_workers=args.num_workers,
                        collate_fn=collate_cpu, pin_memory=True)
    out_dir = os.path.join(args.root, "prompt_embeds")
    os.makedirs(out_dir, exist_ok=True)
    index = {}
    for batch in tqdm(loader, desc="encoding captions"):
        ids = batch["input_ids"].to(device, non_blocking=True)
        out = encoder(ids, output_hidden_states=args.penultimate)
        hidden = out.hidden_states[-2] if args.penultimate else out.last_hidden_state
        pooled = out.pooler_output
        hidden, pooled = hidden.cpu(), pooled.cpu()
        for j, key in enumerate(batch["keys"]):
            path = os.path.join(out_dir, f"{key}.pt")
            torch.save({"hidden": hidden[j].clone(), "pooled": pooled[j].clone()}, path)
            index[key] = os.path.relpath(path, args.root)
    with open(os.path.join(args.root, "prompt_embeds_index.json"), "w") as f:
        json.dump(index, f)
    return len(index)


class PrecomputedEmbeds(Dataset):
    def __init__(self, root: str):
        with open(os.path.join(root, "prompt_embeds_index.json")) as f:
            self.index = sorted(json.load(f).items())
        self.root = root

    def __len__(self):
        return len(self.index)

    def __getitem__(self, idx):
        key, rel = self.index[idx]
        data = torch.load(os.path.join(self.root, rel), map_location="cpu")
        return key, data["hidden"]


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--pretrained", default="stabilityai/stable-diffusion-2-1-base")
    ap.add_argument("--root", required=True)
    ap.add_argument("--batch_size", type=int, default=64)
    ap.add_argument("--num_workers", type=int, default=4)
    ap.add_argument("--penultimate", action="store_true")
    args = ap.parse_args()
    print(f"wrote {precompute(args)} embeddings")
