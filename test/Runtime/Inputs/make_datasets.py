"""Writes small learnable datasets in MNIST IDX and CIFAR-10 binary format.

Each class draws a bright square at its own position (MNIST) or a dominant
colour pattern (CIFAR-10) over seeded noise, so a small network can learn it
in a few dozen steps. Usage: make_datasets.py mnist|cifar10 DIR
"""
import random
import struct
import sys


def mnist_image(rng, label):
    pixels = [rng.randrange(0, 60) for _ in range(28 * 28)]
    top, left = (label // 4) * 9 + 1, (label % 4) * 7
    for r in range(top, top + 7):
        for c in range(left, left + 6):
            pixels[r * 28 + c] = rng.randrange(180, 256)
    return bytes(pixels)


def write_mnist(directory, prefix, count, rng):
    labels = [i % 10 for i in range(count)]
    rng.shuffle(labels)
    with open(f"{directory}/{prefix}-images-idx3-ubyte", "wb") as f:
        f.write(struct.pack(">IIII", 2051, count, 28, 28))
        for label in labels:
            f.write(mnist_image(rng, label))
    with open(f"{directory}/{prefix}-labels-idx1-ubyte", "wb") as f:
        f.write(struct.pack(">II", 2049, count))
        f.write(bytes(labels))


def cifar_record(rng, label):
    planes = []
    for channel in range(3):
        strong = (label % 3) == channel
        stripe = label // 3
        plane = []
        for r in range(32):
            for c in range(32):
                v = rng.randrange(0, 80)
                if strong and (r // 8) % 4 == stripe % 4:
                    v += 150
                plane.append(min(v, 255))
        planes.append(bytes(plane))
    return bytes([label]) + b"".join(planes)


def write_cifar(path, count, rng):
    labels = [i % 10 for i in range(count)]
    rng.shuffle(labels)
    with open(path, "wb") as f:
        for label in labels:
            f.write(cifar_record(rng, label))


def main():
    kind, directory = sys.argv[1], sys.argv[2]
    rng = random.Random(1234)
    if kind == "mnist":
        write_mnist(directory, "train", 640, rng)
        write_mnist(directory, "t10k", 128, rng)
    elif kind == "cifar10":
        write_cifar(f"{directory}/data_batch_1.bin", 192, rng)
        write_cifar(f"{directory}/data_batch_2.bin", 192, rng)
        write_cifar(f"{directory}/test_batch.bin", 64, rng)
    else:
        sys.exit(f"unknown dataset kind {kind}")


if __name__ == "__main__":
    main()
