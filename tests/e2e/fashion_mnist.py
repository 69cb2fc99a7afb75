"""Reads Fashion-MNIST test images and labels from Debian's dataset-fashion-mnist package."""

import gzip
import struct

DATASET = "/usr/share/datasets/fashion-mnist"


def load_test_set(count):
    """Returns (images, labels): `count` images as lists of 784 floats in [0, 1], and labels."""
    with gzip.open(f"{DATASET}/t10k-images-idx3-ubyte.gz", "rb") as f:
        magic, n, rows, cols = struct.unpack(">IIII", f.read(16))
        assert magic == 2051 and rows == 28 and cols == 28
        raw = f.read(count * 784)
    with gzip.open(f"{DATASET}/t10k-labels-idx1-ubyte.gz", "rb") as f:
        magic, n = struct.unpack(">II", f.read(8))
        assert magic == 2049
        labels = list(f.read(count))
    images = [[b / 255.0 for b in raw[i * 784:(i + 1) * 784]] for i in range(count)]
    return images, labels
