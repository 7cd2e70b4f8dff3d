from collections import OrderedDict

import torch
import torchvision
from torchvision.models.detection import fasterrcnn_resnet50_fpn


def to_device(images, targets, device):
    images = [img.to(device) for img in images]
    targets = [{k: v.to(device) for k, v in t.items()} for t in targets]
    return images, targets


def train_one_epoch(model, optimizer, data_loader, device, epoch, print_freq=20):
    model.train()
    running = OrderedDict()
    for it, (images, targets) in enumerate(data_loader):
        images, targets = to_device(images, targets, device)
        loss_dict = model(images, targets)
        losses = sum(loss for loss in loss_dict.values())
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
        for k, v in loss_dict.items():
            running[k] = running.get(k, 0.0) + float(v.detach().cpu())
        if it % print_freq == 0:
            msg = "  ".join(f"{k}: {v / (it + 1):.4f}" for k, v in running.items())
            print(f"Epoch [{epoch}] it {it}  {msg}")
    return {k: v / max(1, len(data_loader)) for k, v in running.items()}


def collate(batch):
    return tuple(zip(*batch))


def main(num_epochs=12):
    device = torch.device("cuda")
    model = fasterrcnn_resnet50_fpn(weights=None, num_classes=91).to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=0.02, momentum=0.9, weight_decay=1e-4)
    lr_sched = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[8, 11], gamma=0.1)
    ds = torchvision.datasets.CocoDetection("data/coco/train2017", "data/coco/ann/instances_train2017.json")
    ds = torchvision.datasets.wrap_dataset_for_transforms_v2(ds)
    loader = torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True, num_workers=4, collate_fn=collate)
    for epoch in range(num_epochs):
        stats = train_one_epoch(model, optimizer, loader, device, epoch)
        lr_sched.step()
        print(epoch, stats)


if __name__ == "__main__":
    main()
