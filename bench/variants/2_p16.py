import torch


def test(model, test_loader):
    test_loss = 0
    for data, target in test_loader:
        output = model(data)
        test_loss += torch.nn.functional.nll_loss(output, target, reduction="sum")  # leak
    test_loss /= len(test_loader.dataset)
    return test_loss
