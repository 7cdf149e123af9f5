"""A ResNet-18 training step (torchvision's architecture, written once over
the library's nn names) in tensorgraph eager, tensorgraph tg.function and
PyTorch, interleaved round after round; JSON lines with the medians.

    PYTHONPATH=build/python /usr/bin/python3 bench/resnet_train.py [--batch 8] [--size 112]
        [--threads 2] [--rounds 5]

A step is zero_grad, forward, cross-entropy, backward and an SGD step
with momentum. The convolutions' gradients dominate: 3x3 input gradients
(Winograd's product), weight gradients (one GEMM per chunk of images)."""
import argparse
import json
import statistics
import time


def resnet18(lib, nn, classes=10):
    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

        def forward(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return self.relu(y + (x if self.down is None else self.down(x)))

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, classes)]
    return nn.Sequential(*layers)


class Mode:
    def __init__(self, name, lib, compiled, batch, size):
        import importlib
        nn = importlib.import_module(lib.__name__ + ".nn")
        F = importlib.import_module(lib.__name__ + ".nn.functional")
        lib.manual_seed(0)
        self.model = resnet18(lib, nn)
        self.opt = lib.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.x = lib.randn(batch, 3, size, size)
        self.y = lib.randint(0, 10, (batch,))
        loss = lambda x, y: F.cross_entropy(self.model(x), y)  # noqa: E731
        self.loss = lib.function(loss) if compiled else loss
        self.name = name

    def step(self):
        self.opt.zero_grad()
        loss = self.loss(self.x, self.y)
        loss.backward()
        self.opt.step()
        return float(loss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--size", type=int, default=112)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    import tensorgraph as tg
    tg.set_num_threads(a.threads)
    modes = [Mode("eager", tg, False, a.batch, a.size), Mode("function", tg, True, a.batch, a.size)]
    try:
        import torch
        torch.set_num_threads(a.threads)
        modes.append(Mode("torch", torch, False, a.batch, a.size))
    except ImportError:
        pass
    losses = {m.name: [m.step() for _ in range(2)] for m in modes}  # warm up, trace
    times = {m.name: [] for m in modes}
    for _ in range(a.rounds):
        for m in modes:
            t = time.perf_counter()
            m.step()
            times[m.name].append((time.perf_counter() - t) * 1e3)
    eager = statistics.median(times["eager"])
    for m in modes:
        med = statistics.median(times[m.name])
        print(json.dumps({"bench": "resnet_train", "mode": m.name, "batch": a.batch,
                          "size": a.size, "threads": a.threads, "ms": round(med, 1),
                          "ratio_to_eager": round(med / eager, 3),
                          "runs_ms": [round(t, 1) for t in times[m.name]],
                          "first_losses": [round(v, 4) for v in losses[m.name]]}), flush=True)


if __name__ == "__main__":
    main()
