"""Run a Siamese single-object tracker over a benchmark (OTB100 / LaSOT / GOT-10k val)
and write per-sequence result files in the toolkit format.
"""
import argparse
import logging
import os
import time

import cv2
import numpy as np
import torch
import torch.nn.functional as F

from siamtrack.models import build_tracker_model
from siamtrack.datasets import load_benchmark
from siamtrack.utils.bbox import cxy_wh_2_rect, get_subwindow

log = logging.getLogger("bench")


class SiamTracker:
    def __init__(self, model, cfg):
        self.model = model
        self.cfg = cfg
        self.window = torch.from_numpy(np.outer(np.hanning(cfg.score_size), np.hanning(cfg.score_size))).float()

    @torch.no_grad()
    def init(self, img, rect):
        self.center = np.array([rect[0] + rect[2] / 2, rect[1] + rect[3] / 2])
        self.size = np.array([rect[2], rect[3]])
        s_z = np.sqrt(np.prod(self.size + self.cfg.context_amount * self.size.sum()))
        self.avg_chans = np.mean(img, axis=(0, 1))
        z_crop = get_subwindow(img, self.center, self.cfg.exemplar_size, round(s_z), self.avg_chans)
        self.zf = self.model.template(z_crop.cuda())

    @torch.no_grad()
    def track(self, img):
        s_z = np.sqrt(np.prod(self.size + self.cfg.context_amount * self.size.sum()))
        s_x = s_z * self.cfg.instance_size / self.cfg.exemplar_size
        x_crop = get_subwindow(img, self.center, self.cfg.instance_size, round(s_x), self.avg_chans)
        out = self.model.track(self.zf, x_crop.cuda())
        score = F.softmax(out["cls"].flatten(2), dim=1)[:, 1].view(self.cfg.score_size, -1).cpu()
        score = score * (1 - self.cfg.window_influence) + self.window * self.cfg.window_influence
        r, c = np.unravel_index(int(score.argmax()), score.shape)
        delta = out["loc"][0, :, r, c].cpu().numpy()
        scale = s_x / self.cfg.instance_size
        self.center = self.center + delta[:2] * scale
        self.size = self.size * (1 - self.cfg.lr) + np.exp(delta[2:]) * self.size * self.cfg.lr
        return cxy_wh_2_rect(self.center, self.size), float(score[r, c])


class RunReport:
    def __init__(self):
        self.fps = {}
        self.failures = []

    def add_result(self, name, n_frames, seconds):
        self.fps[name] = n_frames / max(seconds, 1e-6)

    def add_failure(self, name, exc):
        # keep only the text: holding the exception would pin the frames of _run_sequence
        self.failures.append((name, type(exc).__name__, str(exc)))

    def summary(self):
        mean_fps = np.mean(list(self.fps.values())) if self.fps else 0.0
        lines = [f"{len(self.fps)} sequences ok, {len(self.failures)} failed, mean fps {mean_fps:.1f}"]
        lines += [f"  FAILED {name}: {kind}: {msg}" for name, kind, msg in self.failures]
        return "\n".join(lines)


class BenchmarkRunner:
    def __init__(self, tracker, dataset, out_dir):
        self.tracker = tracker
        self.dataset = dataset
        self.out_dir = out_dir
        self.report = RunReport()
        os.makedirs(out_dir, exist_ok=True)

    def _run_sequence(self, video):
        boxes, scores = [], []
        tic = time.time()
        for idx, (img_path, gt) in enumerate(video):
            img = cv2.imread(img_path)
            if idx == 0:
                self.tracker.init(img, gt)
                boxes.append(list(gt))
                scores.append(1.0)
            else:
                box, sc = self.tracker.track(img)
                boxes.append(list(box))
                scores.append(sc)
        return boxes, scores, time.time() - tic

    def _write(self, name, boxes):
        with open(os.path.join(self.out_dir, f"{name}.txt"), "w") as f:
            for b in boxes:
                f.write(",".join(f"{v:.4f}" for v in b) + "\n")

    def run(self):
        for i, video in enumerate(self.dataset):
            try:
                boxes, scores, secs = self._run_sequence(video)
            except (RuntimeError, ValueError) as err:
                log.warning("sequence %s failed: %s", video.name, err)
                self.report.add_failure(video.name, err)
                continue
            self._write(video.name, boxes)
            self.report.add_result(video.name, len(boxes), secs)
            log.info("(%3d) %-20s %4d frames  %.1f fps", i + 1, video.name, len(boxes), len(boxes) / secs)
        print(self.report.summary())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="experiments/siamrpn_r50/config.yaml")
    parser.add_argument("--snapshot", required=True)
    parser.add_argument("--dataset", default="OTB100")
    parser.add_argument("--dataset_root", default="testing_dataset")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    model, cfg = build_tracker_model(args.config)
    model.load_state_dict(torch.load(args.snapshot, map_location="cpu"))
    model = model.cuda().eval()
    dataset = load_benchmark(args.dataset, os.path.join(args.dataset_root, args.dataset))
    out_dir = os.path.join("results", args.dataset, os.path.splitext(os.path.basename(args.snapshot))[0])
    BenchmarkRunner(SiamTracker(model, cfg), dataset, out_dir).run()


if __name__ == "__main__":
    main()
