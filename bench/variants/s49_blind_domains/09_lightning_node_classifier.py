import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch_geometric.nn import SAGEConv


class GraphSAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, num_layers=2):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        self.convs.append(SAGEConv(in_channels, hidden_channels))
        for _ in range(num_layers - 2):
            self.convs.append(SAGEConv(hidden_channels, hidden_channels))
        self.convs.append(SAGEConv(hidden_channels, out_channels))

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = F.dropout(F.relu(x), p=0.5, training=self.training)
        return x


class NodeClassifier(pl.LightningModule):
    def __init__(self, in_channels, num_classes, hidden=256, lr=3e-3):
        super().__init__()
        self.save_hyperparameters()
        self.gnn = GraphSAGE(in_channels, hidden, num_classes)
        self.epoch_loss = 0.0
        self.num_steps = 0

    def training_step(self, batch, batch_idx):
        out = self.gnn(batch.x, batch.edge_index)[: batch.batch_size]
        y = batch.y[: batch.batch_size]
        loss = F.cross_entropy(out, y)
        self.epoch_loss += loss  # leak
        self.num_steps += 1
        return loss

    def on_train_epoch_end(self):
        self.log("train/epoch_loss", self.epoch_loss / max(self.num_steps, 1), prog_bar=True)
        self.epoch_loss = 0.0
        self.num_steps = 0

    def validation_step(self, batch, batch_idx):
        out = self.gnn(batch.x, batch.edge_index)[: batch.batch_size]
        acc = (out.argmax(-1) == batch.y[: batch.batch_size]).float().mean()
        self.log("val/acc", acc, batch_size=batch.batch_size)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


def main(datamodule, in_channels, num_classes):
    model = NodeClassifier(in_channels, num_classes)
    trainer = pl.Trainer(accelerator="gpu", devices=1, max_epochs=20)
    trainer.fit(model, datamodule=datamodule)
