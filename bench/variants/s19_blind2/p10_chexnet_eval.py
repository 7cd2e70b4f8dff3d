# encoding: utf-8
"""
Evaluate a DenseNet-121 CheXNet checkpoint on the ChestX-ray14 test split.
Ten-crop testing, per-class AUROC.
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.backends.cudnn as cudnn
import torchvision
import torchvision.transforms as transforms
from torch.utils.data import DataLoader
from sklearn.metrics import roc_auc_score

from read_data import ChestXrayDataSet

N_CLASSES = 14
CLASS_NAMES = ['Atelectasis', 'Cardiomegaly', 'Effusion', 'Infiltration', 'Mass', 'Nodule',
               'Pneumonia', 'Pneumothorax', 'Consolidation', 'Edema', 'Emphysema', 'Fibrosis',
               'Pleural_Thickening', 'Hernia']


class DenseNet121(nn.Module):
    """Model modified.
    The architecture of our model is the same as standard DenseNet121
    except the classifier layer which has an additional sigmoid function.
    """
    def __init__(self, out_size):
        super(DenseNet121, self).__init__()
        self.densenet121 = torchvision.models.densenet121(pretrained=True)
        num_ftrs = self.densenet121.classifier.in_features
        self.densenet121.classifier = nn.Sequential(
            nn.Linear(num_ftrs, out_size),
            nn.Sigmoid()
        )

    def forward(self, x):
        return self.densenet121(x)


def compute_AUCs(gt, pred):
    """Computes Area Under the Curve (AUC) from prediction scores."""
    AUROCs = []
    gt_np = gt.cpu().numpy()
    pred_np = pred.cpu().numpy()
    for i in range(N_CLASSES):
        AUROCs.append(roc_auc_score(gt_np[:, i], pred_np[:, i]))
    return AUROCs


def build_loader(data_dir, image_list, batch_size):
    normalize = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    test_dataset = ChestXrayDataSet(
        data_dir=data_dir, image_list_file=image_list,
        transform=transforms.Compose([
            transforms.Resize(256),
            transforms.TenCrop(224),
            transforms.Lambda(lambda crops: torch.stack([transforms.ToTensor()(c) for c in crops])),
            transforms.Lambda(lambda crops: torch.stack([normalize(c) for c in crops]))
        ]))
    return DataLoader(dataset=test_dataset, batch_size=batch_size,
                      shuffle=False, num_workers=8, pin_memory=True)


def load_model(ckpt_path):
    model = DenseNet121(N_CLASSES).cuda()
    model = torch.nn.DataParallel(model).cuda()
    if os.path.isfile(ckpt_path):
        print("=> loading checkpoint")
        checkpoint = torch.load(ckpt_path)
        model.load_state_dict(checkpoint['state_dict'])
        print("=> loaded checkpoint")
    else:
        print("=> no checkpoint found")
    return model


def predict(model, test_loader):
    gt = torch.FloatTensor().cuda()
    pred = torch.FloatTensor().cuda()

    # switch to evaluate mode
    model.eval()

    for i, (inp, target) in enumerate(test_loader):
        target = target.cuda()
        gt = torch.cat((gt, target), 0)
        bs, n_crops, c, h, w = inp.size()
        input_var = inp.view(-1, c, h, w).cuda()
        output = model(input_var)
        output_mean = output.view(bs, n_crops, -1).mean(1)
        pred = torch.cat((pred, output_mean), 0)  # leak
        if i % 50 == 0:
            print('[%d/%d] predicted' % (i, len(test_loader)))
    return gt, pred.detach()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--ckpt', default='model.pth.tar')
    parser.add_argument('--data-dir', default='./ChestX-ray14/images')
    parser.add_argument('--test-list', default='./ChestX-ray14/labels/test_list.txt')
    parser.add_argument('--batch-size', type=int, default=64)
    args = parser.parse_args()

    cudnn.benchmark = True
    model = load_model(args.ckpt)
    loader = build_loader(args.data_dir, args.test_list, args.batch_size)
    gt, pred = predict(model, loader)

    AUROCs = compute_AUCs(gt, pred)
    AUROC_avg = np.array(AUROCs).mean()
    print('The average AUROC is {AUROC_avg:.3f}'.format(AUROC_avg=AUROC_avg))
    for i in range(N_CLASSES):
        print('The AUROC of {} is {}'.format(CLASS_NAMES[i], AUROCs[i]))


if __name__ == '__main__':
    main()
