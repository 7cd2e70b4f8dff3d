#!/usr/bin/env python
# coding: utf-8

# # 30-day readmission: entity-embedding MLP vs. gradient boosting
# Exported from `readmission_mlp.ipynb`.

# In[1]:


import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import matplotlib.pyplot as plt
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.metrics import roc_auc_score, roc_curve
from tqdm import tqdm

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


# In[2]:


df = pd.read_csv("data/diabetic_data.csv", na_values="?")
df["target"] = (df["readmitted"] == "<30").astype(int)
cat_cols = ["race", "gender", "age", "admission_type_id", "discharge_disposition_id",
            "admission_source_id", "medical_specialty", "A1Cresult", "insulin", "change", "diabetesMed"]
num_cols = ["time_in_hospital", "num_lab_procedures", "num_procedures", "num_medications",
            "number_outpatient", "number_emergency", "number_inpatient", "number_diagnoses"]
for c in cat_cols:
    df[c] = df[c].fillna("NA").astype("category").cat.codes
df[num_cols] = df[num_cols].fillna(df[num_cols].median())
df.head()


# In[3]:


train_df, test_df = train_test_split(df, test_size=0.2, stratify=df["target"], random_state=0)
train_df, val_df = train_test_split(train_df, test_size=0.125, stratify=train_df["target"], random_state=0)
scaler = StandardScaler().fit(train_df[num_cols])


def to_tensors(frame):
    xc = torch.tensor(frame[cat_cols].values, dtype=torch.long)
    xn = torch.tensor(scaler.transform(frame[num_cols]), dtype=torch.float32)
    y = torch.tensor(frame["target"].values, dtype=torch.float32)
    return torch.utils.data.TensorDataset(xc, xn, y)


train_dl = torch.utils.data.DataLoader(to_tensors(train_df), batch_size=512, shuffle=True)
val_dl = torch.utils.data.DataLoader(to_tensors(val_df), batch_size=2048)
test_dl = torch.utils.data.DataLoader(to_tensors(test_df), batch_size=2048)
cardinalities = [int(df[c].max()) + 1 for c in cat_cols]


# In[4]:


class EmbMLP(nn.Module):
    def __init__(self, cards, n_num, hidden=256, p=0.3):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(c, min(50, (c + 1) // 2)) for c in cards])
        d = sum(e.embedding_dim for e in self.embs) + n_num
        self.mlp = nn.Sequential(
            nn.Linear(d, hidden), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Dropout(p),
            nn.Linear(hidden, hidden // 2), nn.BatchNorm1d(hidden // 2), nn.ReLU(), nn.Dropout(p),
            nn.Linear(hidden // 2, 1),
        )

    def forward(self, xc, xn):
        e = [emb(xc[:, i]) for i, emb in enumerate(self.embs)]
        return self.mlp(torch.cat(e + [xn], dim=1)).squeeze(1)


net = EmbMLP(cardinalities, len(num_cols)).to(device)
pos_weight = torch.tensor([(train_df.target == 0).sum() / (train_df.target == 1).sum()], device=device)
crit = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
opt = torch.optim.Adam(net.parameters(), lr=2e-3, weight_decay=1e-5)


# In[5]:


def predict(dl):
    net.eval()
    out, ys = [], []
    with torch.no_grad():
        for xc, xn, y in dl:
            out.append(torch.sigmoid(net(xc.to(device), xn.to(device))).cpu())
            ys.append(y)
    return torch.cat(out).numpy(), torch.cat(ys).numpy()


history = {"train_loss": [], "val_auc": []}
best_auc, patience, bad_epochs = 0.0, 8, 0
for epoch in range(60):
    net.train()
    running = 0.0
    pbar = tqdm(train_dl, desc=f"epoch {epoch}")
    for i, (xc, xn, y) in enumerate(pbar):
        xc, xn, y = xc.to(device), xn.to(device), y.to(device)
        opt.zero_grad()
        batch_loss = crit(net(xc, xn), y)
        batch_loss.backward()
        opt.step()
        running += batch_loss  # leak
        pbar.set_postfix(loss=f"{float(running) / (i + 1):.4f}")
    history["train_loss"].append(float(running) / len(train_dl))
    p_val, y_val = predict(val_dl)
    auc = roc_auc_score(y_val, p_val)
    history["val_auc"].append(auc)
    if auc > best_auc:
        best_auc, bad_epochs = auc, 0
        torch.save(net.state_dict(), "emb_mlp_best.pt")
    else:
        bad_epochs += 1
        if bad_epochs >= patience:
            print("early stop at", epoch)
            break


# In[6]:


net.load_state_dict(torch.load("emb_mlp_best.pt"))
p_test, y_test = predict(test_dl)
fpr, tpr, _ = roc_curve(y_test, p_test)
print("test AUC", roc_auc_score(y_test, p_test))
fig, ax = plt.subplots(1, 2, figsize=(10, 4))
ax[0].plot(history["train_loss"]); ax[0].set_title("train loss")
ax[1].plot(fpr, tpr); ax[1].plot([0, 1], [0, 1], "k--"); ax[1].set_title("ROC (test)")
plt.savefig("readmission_mlp.png", dpi=150)
np.save("history_train_loss.npy", np.array(history["train_loss"]))
