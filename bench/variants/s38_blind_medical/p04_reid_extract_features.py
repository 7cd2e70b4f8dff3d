# -*- coding: utf-8 -*-
from __future__ import print_function, division

import argparse
import os

import numpy as np
import scipy.io
import torch
import torch.nn as nn
from torch.autograd import Variable
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

parser = argparse.ArgumentParser(description="Extract gallery/query features")
parser.add_argument("--gpu_ids", default="0", type=str)
parser.add_argument("--which_epoch", default="last", type=str)
parser.add_argument("--test_dir", default="../Market/pytorch", type=str)
parser.add_argument("--name", default="ft_ResNet50", type=str)
parser.add_argument("--batchsize", default=256, type=int)
parser.add_argument("--ms", default="1", type=str, help="multi-scale, e.g. 1,1.1")
opt = parser.parse_args()

gpu_ids = [int(g) for g in opt.gpu_ids.split(",") if int(g) >= 0]
ms = [float(s) for s in opt.ms.split(",")]
if gpu_ids:
    torch.cuda.set_device(gpu_ids[0])

data_transforms = transforms.Compose([
    transforms.Resize((256, 128), interpolation=3),
    transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
])

image_datasets = {x: datasets.ImageFolder(os.path.join(opt.test_dir, x), data_transforms)
                  for x in ["gallery", "query"]}
dataloaders = {x: DataLoader(image_datasets[x], batch_size=opt.batchsize, shuffle=False, num_workers=8)
               for x in ["gallery", "query"]}


class ft_net(nn.Module):
    def __init__(self, class_num=751):
        super(ft_net, self).__init__()
        backbone = models.resnet50(pretrained=False)
        backbone.layer4[0].downsample[0].stride = (1, 1)
        backbone.layer4[0].conv2.stride = (1, 1)
        backbone.fc = nn.Sequential()
        self.model = backbone
        self.bottleneck = nn.BatchNorm1d(2048)
        self.classifier = nn.Linear(2048, class_num, bias=False)

    def forward(self, x):
        f = self.bottleneck(self.model(x))
        if self.training:
            return self.classifier(f)
        return f


def fliplr(img):
    inv_idx = torch.arange(img.size(3) - 1, -1, -1).long()
    return img.index_select(3, inv_idx)


def extract_feature(model, loader):
    features = []
    for data in loader:
        img, label = data
        n = img.size(0)
        ff = torch.FloatTensor(n, 2048).zero_().cuda()
        for i in range(2):
            if i == 1:
                img = fliplr(img)
            input_img = Variable(img.cuda())
            for scale in ms:
                if scale != 1:
                    input_img = nn.functional.interpolate(input_img, scale_factor=scale,
                                                          mode="bicubic", align_corners=False)
                outputs = model(input_img)
                ff += outputs
        fnorm = torch.norm(ff, p=2, dim=1, keepdim=True)
        ff = ff.div(fnorm.expand_as(ff))
        features.append(ff)  # leak
    return torch.cat(features, 0).data.cpu()


def get_id(img_path):
    camera_id, labels = [], []
    for path, _ in img_path:
        filename = os.path.basename(path)
        label = filename[0:4]
        camera = filename.split("c")[1]
        labels.append(-1 if label[0:2] == "-1" else int(label))
        camera_id.append(int(camera[0]))
    return camera_id, labels


gallery_cam, gallery_label = get_id(image_datasets["gallery"].imgs)
query_cam, query_label = get_id(image_datasets["query"].imgs)

model = ft_net(751)
save_path = os.path.join("./model", opt.name, "net_%s.pth" % opt.which_epoch)
model.load_state_dict(torch.load(save_path))
model = model.eval()
if gpu_ids:
    model = model.cuda()

gallery_feature = extract_feature(model, dataloaders["gallery"])
query_feature = extract_feature(model, dataloaders["query"])

result = {
    "gallery_f": gallery_feature.numpy(), "gallery_label": gallery_label, "gallery_cam": gallery_cam,
    "query_f": query_feature.numpy(), "query_label": query_label, "query_cam": query_cam,
}
scipy.io.savemat("pytorch_result.mat", result)
print("saved features: gallery %s, query %s" % (gallery_feature.shape, query_feature.shape))
np.save(os.path.join("./model", opt.name, "query_feat.npy"), query_feature.numpy())
