import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from stats import ActivationStats


def conv_bn(ci, co, stride=1):
    return nn.Sequential(nn.Conv2d(ci, co, 3, stride, 1, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True))


class Net(nn.Module):
    def __init__(self, num_classes=10):
        super(Net, self).__init__()
        self.features = nn.Sequential(
            conv_bn(1, 32), conv_bn(32, 32, 2),
            conv_bn(32, 64), conv_bn(64, 64, 2),
            conv_bn(64, 128), nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, num_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def test(model, loader, device):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            correct += model(x).argmax(1).eq(y).sum().item()
    return 100.0 * correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=20)
    parser.add_argument('--batch-size', type=int, default=128)
    parser.add_argument('--lr', type=float, default=0.5)
    parser.add_argument('--report-every', type=int, default=100)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    train_ds = TensorDataset(torch.randn(30000, 1, 28, 28), torch.randint(0, 10, (30000,)))
    test_ds = TensorDataset(torch.randn(5000, 1, 28, 28), torch.randint(0, 10, (5000,)))
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=2)
    test_loader = DataLoader(test_ds, batch_size=1000)

    model = Net().to(device)
    act_stats = ActivationStats(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr,
                                                    total_steps=args.epochs * len(train_loader))

    it = 0
    for epoch in range(args.epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            it += 1
            if it % args.report_every == 0:
                print('iter %d  loss %.4f' % (it, loss.item()))
                print(act_stats.report(args.report_every))
                dead = act_stats.dead_layers(args.report_every)
                if dead:
                    print('warning: near-constant outputs in', ', '.join(dead))
        print('epoch %d  test acc %.2f%%' % (epoch, test(model, test_loader, device)))

    act_stats.remove()
    torch.save(model.state_dict(), 'net.pt')


if __name__ == '__main__':
    main()
