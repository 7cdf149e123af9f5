#!/usr/bin/python3
"""The PyTorch side of bench/lenet.sh: LeNet-5 on the same MNIST IDX files,
with the same model, hyperparameters and thread count as `tg train lenet`.
Prints one JSON line shaped like tg's --json summary."""
import argparse
import json
import resource
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_idx(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    ndim = magic & 0xFF
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def normalise(images):
    x = torch.from_numpy(images.astype(np.float32) / 255.0)
    return ((x - 0.1307) / 0.3081).unsqueeze(1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/mnist")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    d = a.data
    xtr = normalise(read_idx(f"{d}/train-images-idx3-ubyte"))
    ytr = torch.from_numpy(read_idx(f"{d}/train-labels-idx1-ubyte").astype(np.int64))
    xte = normalise(read_idx(f"{d}/t10k-images-idx3-ubyte"))
    yte = torch.from_numpy(read_idx(f"{d}/t10k-labels-idx1-ubyte").astype(np.int64))
    model = LeNet5()
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum)
    n = xtr.shape[0]
    train_seconds, loss_sum, loss_n = 0.0, 0.0, 0
    for _ in range(a.epochs):
        t0 = time.perf_counter()
        perm = torch.randperm(n)
        model.train()
        loss_sum, loss_n = 0.0, 0
        for i in range(0, n, a.batch):
            idx = perm[i:i + a.batch]
            opt.zero_grad()
            loss = F.cross_entropy(model(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
            loss_sum += loss.item()
            loss_n += 1
        train_seconds += time.perf_counter() - t0
    model.eval()
    eval_seconds = 1e30
    for _ in range(3):  # inference throughput: the best of 3 passes
        t0 = time.perf_counter()
        with torch.no_grad():
            correct = sum(int((model(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum())
                          for i in range(0, xte.shape[0], 1000))
        eval_seconds = min(eval_seconds, time.perf_counter() - t0)
    print(json.dumps({
        "model": "lenet", "framework": "pytorch", "torch_version": torch.__version__,
        "epochs": a.epochs, "batch": a.batch, "threads": a.threads,
        "train_seconds": round(train_seconds, 3),
        "images_per_second": round(n * a.epochs / train_seconds, 1),
        "final_train_loss": round(loss_sum / max(loss_n, 1), 5),
        "test_accuracy": correct / xte.shape[0],
        "eval_images_per_second": round(xte.shape[0] / eval_seconds, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }))


if __name__ == "__main__":
    main()
