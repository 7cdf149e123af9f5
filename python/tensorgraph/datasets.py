"""tensorgraph.datasets: MNIST through the C fetcher and reader.

MNIST(root, train=True, download=True) fetches the four IDX files into root
(verified by size and SHA-256, as `tg data mnist` does) and yields
(image, label) with image float32 [1, 28, 28] already normalised as
torchvision's ToTensor() + Normalize((0.1307,), (0.3081,)), label an int64
0-d tensor. transform / target_transform, if given, are applied per item;
batches through DataLoader come straight from C (and skip them)."""
import os

from . import _C
from .utils.data import Dataset


class MNIST(Dataset):
    def __init__(self, root, train=True, transform=None, target_transform=None,
                 download=False):
        self.root, self.train = os.fspath(root), train
        self.transform, self.target_transform = transform, target_transform
        if download:
            _C._mnist_ensure(self.root, False)
        self._c = _C._mnist_dataset(self.root, bool(train))

    def __len__(self):
        return len(self._c)

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"index {index} is out of range for MNIST of {len(self)} samples")
        x, y = self._c.get([index])
        x, y = x[0], y[0]
        if self.transform is not None:
            x = self.transform(x)
        if self.target_transform is not None:
            y = self.target_transform(y)
        return x, y

    def _c_dataset(self):
        if self.transform is not None or self.target_transform is not None:
            return None
        return self._c
