"""Caption an image with a trained Show-Attend-Tell model and plot attention.

Attention maps are grabbed with a forward hook on the attention sub-module
for the duration of one greedy decode; the hook is removed afterwards.
"""
import argparse
import json

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
import numpy as np
import skimage.transform
import torch
import torch.nn.functional as F
import torchvision.transforms as transforms
from PIL import Image

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def load_image(path):
    img = Image.open(path).convert('RGB').resize((256, 256))
    tf = transforms.Compose([
        transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])
    return img, tf(img).unsqueeze(0)


def greedy_caption(encoder, decoder, image, word_map, max_len=50):
    rev_word_map = {v: k for k, v in word_map.items()}
    maps = []

    def grab_alpha(module, inputs, output):
        _, alpha = output
        maps.append(alpha.detach().cpu())

    handle = decoder.attention.register_forward_hook(grab_alpha)
    try:
        with torch.no_grad():
            enc = encoder(image.to(device))
            enc = enc.view(1, -1, enc.size(-1))
            h, c = decoder.init_hidden_state(enc)
            word = torch.LongTensor([word_map['<start>']]).to(device)
            words = []
            for _ in range(max_len):
                emb = decoder.embedding(word)
                awe, _ = decoder.attention(enc, h)
                awe = torch.sigmoid(decoder.f_beta(h)) * awe
                h, c = decoder.decode_step(torch.cat([emb, awe], dim=1), (h, c))
                scores = F.log_softmax(decoder.fc(h), dim=1)
                word = scores.argmax(dim=1)
                token = rev_word_map[word.item()]
                if token == '<end>':
                    break
                words.append(token)
    finally:
        handle.remove()
    return words, maps


def visualize_att(img, words, maps, out_path, enc_size=14, smooth=True):
    n = len(words)
    cols = 5
    rows = int(np.ceil(n / float(cols)))
    plt.figure(figsize=(cols * 3, rows * 3))
    for t, (w, a) in enumerate(zip(words, maps)):
        plt.subplot(rows, cols, t + 1)
        plt.text(0, 1, '%s' % w, color='black', backgroundcolor='white', fontsize=12)
        plt.imshow(img)
        a = a.view(enc_size, enc_size).numpy()
        if smooth:
            a = skimage.transform.pyramid_expand(a, upscale=24, sigma=8)
        else:
            a = skimage.transform.resize(a, [enc_size * 24, enc_size * 24])
        plt.imshow(a, alpha=0.6, cmap='Greys_r')
        plt.axis('off')
    plt.savefig(out_path, bbox_inches='tight')
    plt.close()


def main():
    parser = argparse.ArgumentParser(description='Show, Attend, and Tell - caption')
    parser.add_argument('--img', '-i', nargs='+', help='path(s) to image')
    parser.add_argument('--model', '-m', help='path to model')
    parser.add_argument('--word_map', '-wm', help='path to word map JSON')
    parser.add_argument('--out_dir', default='att_vis')
    args = parser.parse_args()

    checkpoint = torch.load(args.model, map_location=str(device))
    decoder = checkpoint['decoder'].to(device).eval()
    encoder = checkpoint['encoder'].to(device).eval()
    with open(args.word_map, 'r') as j:
        word_map = json.load(j)

    for k, path in enumerate(args.img):
        img, x = load_image(path)
        words, maps = greedy_caption(encoder, decoder, x, word_map)
        print('%s: %s' % (path, ' '.join(words)))
        visualize_att(img, words, maps, '%s/att_%03d.png' % (args.out_dir, k))


if __name__ == '__main__':
    main()
