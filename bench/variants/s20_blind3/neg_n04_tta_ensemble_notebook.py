#!/usr/bin/env python
# coding: utf-8

# # Melanoma classification - inference kernel
# 5-fold EfficientNet-B3 ensemble, 8x dihedral TTA. Exported from the Kaggle notebook.

# In[1]:


import gc
import os
import glob

import cv2
import numpy as np
import pandas as pd
import timm
import torch
from torch.utils.data import Dataset, DataLoader
from tqdm.auto import tqdm


# In[2]:


class CFG:
    data_dir = "../input/siim-isic-melanoma-classification"
    weights = "../input/effb3-5fold-v7/*.pth"
    arch = "tf_efficientnet_b3_ns"
    img_size = 512
    batch_size = 32
    num_workers = 4
    tta = 8

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


# In[3]:


class MelanomaTest(Dataset):
    def __init__(self, df, img_dir, size):
        self.df = df.reset_index(drop=True)
        self.img_dir = img_dir
        self.size = size

    def __len__(self):
        return len(self.df)

    def __getitem__(self, i):
        name = self.df.image_name[i]
        img = cv2.imread(os.path.join(self.img_dir, name + ".jpg"))
        img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
        img = cv2.resize(img, (self.size, self.size), interpolation=cv2.INTER_AREA)
        img = (img.astype(np.float32) / 255.0 - MEAN) / STD
        return torch.from_numpy(img.transpose(2, 0, 1)), name


def dihedral(x, k):
    """k in [0, 8): 4 rotations x optional horizontal flip."""
    if k >= 4:
        x = x.flip(3)
    return torch.rot90(x, k % 4, dims=(2, 3))


def load_fold(path):
    net = timm.create_model(CFG.arch, pretrained=False, num_classes=1)
    sd = torch.load(path, map_location="cpu")
    sd = {k.replace("module.", ""): v for k, v in sd.items()}
    net.load_state_dict(sd)
    return net.to(DEVICE).eval()


# In[4]:


test_df = pd.read_csv(os.path.join(CFG.data_dir, "test.csv"))
test_ds = MelanomaTest(test_df, os.path.join(CFG.data_dir, "jpeg/test"), CFG.img_size)
test_loader = DataLoader(test_ds, batch_size=CFG.batch_size, shuffle=False,
                         num_workers=CFG.num_workers, pin_memory=True)
weight_paths = sorted(glob.glob(CFG.weights))
print(len(test_ds), "test images,", len(weight_paths), "folds")
folds = [load_fold(p) for p in weight_paths]


# In[5]:


probs_by_image = {}
with torch.inference_mode():
    for images, names in tqdm(test_loader):
        images = images.to(DEVICE)
        outs = []
        for net in folds:
            for k in range(CFG.tta):
                outs.append(net(dihedral(images, k)).sigmoid().squeeze(1))
        blended = torch.stack(outs).mean(0).cpu()
        for name, p in zip(names, blended.tolist()):
            probs_by_image[name] = p


# In[6]:


sub = pd.DataFrame({
    "image_name": list(probs_by_image.keys()),
    "target": [float(p) for p in probs_by_image.values()],
})
sub = test_df[["image_name"]].merge(sub, on="image_name", how="left")
print(sub.target.describe())
sub.to_csv("submission.csv", index=False)
sub.head()


# In[7]:


del folds
gc.collect()
torch.cuda.empty_cache()
