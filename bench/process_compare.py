#!/usr/bin/python3
"""Brigade's image pre-processing against PIL + torchvision and OpenCV: agreement and speed.

    ninja -C build process_bench && /usr/bin/python3 bench/process_compare.py [--iterations N]

Uses Debian's python3-pil, python3-torchvision, python3-opencv, python3-numpy (bench only, never
the product) and real photos: every JPEG of opencv-doc's examples/data and the photos of
matplotlib's sample_data. The pipeline is torchvision's ImageNet classification one,

    Resize(256) -> CenterCrop(224) -> ToTensor -> Normalize(ImageNet mean/std)   (FP32, 3x224x224)

Part 1, agreement: for each photo, the mean and max absolute difference between torchvision's
tensor (PIL decode, convert("RGB")) and Brigade's, in exact and fast mode, in normalised units
(one grey level is 1/255/std ~ 0.0175).

Part 2, speed, one thread: per-image time (median of N, encoded bytes in memory -> tensor; the
whole comparison R times, since other work on a shared machine shifts single runs) for a
640x480 and a 1920x1080 JPEG, for Brigade exact and fast, PIL + torchvision, PIL + numpy, and
OpenCV (cv2.imdecode + cv2.resize INTER_LINEAR / INTER_AREA + crop + numpy arithmetic). The
640x480 file is opencv-doc's aero3.jpg as shipped; the 1920x1080 one is leuvenA.jpg (751x563)
enlarged with PIL's LANCZOS and saved at quality 90, 4:2:0 (no 1080p photo ships in Debian's
sample data; an enlarged photo compresses better than a native one, so its decode is a bit
cheaper for everyone alike). Prints markdown tables (each run, then the best median of each
column) and the CPU model name.
"""
import argparse
import glob
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np
import torch
from PIL import Image
from torchvision import transforms

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.environ.get("BRIGADE_PROCESS_BENCH", os.path.join(ROOT, "build", "bench", "process_bench"))
OPENCV_DATA = "/usr/share/doc/opencv-doc/examples/data"
MPL_DATA = "/usr/share/matplotlib/mpl-data/sample_data"
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)

TORCHVISION = transforms.Compose([
    transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(),
    transforms.Normalize(mean=MEAN.tolist(), std=STD.tolist())])


def photos():
    files = sorted(glob.glob(os.path.join(OPENCV_DATA, "*.jpg")))
    files += [os.path.join(MPL_DATA, "grace_hopper.jpg"),
              os.path.join(MPL_DATA, "Minduka_Present_Blue_Pack.png"),
              os.path.join(MPL_DATA, "logo2.png")]
    # Resize(256) -> CenterCrop(224) needs both sides >= 224 after the resize: always true.
    return [f for f in files if os.path.exists(f)]


def reference(data):
    return TORCHVISION(Image.open(io.BytesIO(data)).convert("RGB")).numpy()


def pil_numpy(data):
    image = Image.open(io.BytesIO(data)).convert("RGB")
    w, h = image.size
    if w <= h:
        size = (256, int(256 * h / w))
    else:
        size = (int(256 * w / h), 256)
    image = image.resize(size, Image.BILINEAR)
    left, top = int(round((size[0] - 224) / 2.0)), int(round((size[1] - 224) / 2.0))
    a = np.asarray(image.crop((left, top, left + 224, top + 224)), dtype=np.float32)
    return ((a / 255.0 - MEAN) / STD).transpose(2, 0, 1).copy()


def opencv(data, interpolation):
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    h, w = image.shape[:2]
    if w <= h:
        size = (256, int(256 * h / w))
    else:
        size = (int(256 * w / h), 256)
    image = cv2.resize(image, size, interpolation=interpolation)
    left, top = (size[0] - 224) // 2, (size[1] - 224) // 2
    crop = image[top:top + 224, left:left + 224, ::-1].astype(np.float32)
    return ((crop * (1 / 255.0) - MEAN) / STD).transpose(2, 0, 1).copy()


def time_python(fn, data, iterations):
    for _ in range(3):
        fn(data)
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        fn(data)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def run_bench(files, iterations, dump=None):
    args = [BENCH, f"--iterations={iterations}"] + ([f"--dump={dump}"] if dump else []) + files
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    times = {}
    for line in out.splitlines():
        _, path, mode, median, _, _ = line.split()
        times[(path, mode)] = float(median)
    return times


def cpu_model():
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3, help="timing runs (best median wins)")
    parser.add_argument("--skip-agreement", action="store_true")
    args = parser.parse_args()
    if not os.path.exists(BENCH):
        sys.exit(f"{BENCH} is missing: ninja -C build process_bench")
    torch.set_num_threads(1)
    cv2.setNumThreads(1)
    print(f"CPU: {cpu_model()}; one thread; PIL {Image.__version__}, torch {torch.__version__}, "
          f"OpenCV {cv2.__version__}\n")

    if not args.skip_agreement:
        files = photos()
        with tempfile.TemporaryDirectory() as dump:
            run_bench(files, 1, dump)
            print("| image | size | exact mean abs | exact max abs | fast mean abs | fast max abs |")
            print("|---|---|---|---|---|---|")
            worst = {"exact": 0.0, "fast": 0.0}
            sums = {"exact": 0.0, "fast": 0.0}
            for f in files:
                with open(f, "rb") as fh:
                    ref = reference(fh.read())
                row = [os.path.basename(f), "x".join(map(str, Image.open(f).size))]
                for mode in ("exact", "fast"):
                    ours = np.fromfile(os.path.join(dump, f"{os.path.basename(f)}.{mode}.f32"),
                                       dtype="<f4").reshape(ref.shape)
                    diff = np.abs(ours.astype(np.float64) - ref.astype(np.float64))
                    row += [f"{diff.mean():.2e}", f"{diff.max():.2e}"]
                    worst[mode] = max(worst[mode], diff.max())
                    sums[mode] += diff.mean()
                print("| " + " | ".join(row) + " |")
            n = len(files)
            print(f"| **all {n}** | | {sums['exact'] / n:.2e} (mean) | {worst['exact']:.2e} (max) "
                  f"| {sums['fast'] / n:.2e} (mean) | {worst['fast']:.2e} (max) |\n")

    with tempfile.TemporaryDirectory() as tmp:
        small = os.path.join(OPENCV_DATA, "aero3.jpg")
        large = os.path.join(tmp, "leuvenA_1920x1080.jpg")
        Image.open(os.path.join(OPENCV_DATA, "leuvenA.jpg")).convert("RGB").resize(
            (1920, 1080), Image.LANCZOS).save(large, quality=90, subsampling=2)
        images = ((small, "640x480 (aero3.jpg)"), (large, "1920x1080 (leuvenA, enlarged)"))
        columns = ("Brigade exact", "Brigade fast", "PIL + torchvision", "PIL + numpy",
                   "OpenCV linear", "OpenCV area")
        best = {}
        for run in range(args.repeat):
            print(f"Run {run + 1} of {args.repeat}: per-image time, median of {args.iterations}, ms "
                  f"(encoded bytes in memory -> 3x224x224 FP32), load average "
                  f"{os.getloadavg()[0]:.1f}:\n")
            brigade = run_bench([small, large], args.iterations)
            print("| image | " + " | ".join(columns) + " |")
            print("|---" * (len(columns) + 1) + "|")
            for path, label in images:
                with open(path, "rb") as fh:
                    data = fh.read()
                row = [brigade[(path, "exact")], brigade[(path, "fast")],
                       time_python(lambda d: TORCHVISION(Image.open(io.BytesIO(d)).convert("RGB")),
                                   data, args.iterations),
                       time_python(pil_numpy, data, args.iterations),
                       time_python(lambda d: opencv(d, cv2.INTER_LINEAR), data, args.iterations),
                       time_python(lambda d: opencv(d, cv2.INTER_AREA), data, args.iterations)]
                best[label] = [min(a, b) for a, b in zip(best.get(label, row), row)]
                print(f"| {label} | " + " | ".join(f"{v:.2f}" for v in row) + " |")
            print()
        print(f"Best of the {args.repeat} medians, ms, and Brigade's speed-up:\n")
        print("| image | " + " | ".join(columns) + " | fast vs PIL+tv | fast vs OpenCV linear "
              "| exact vs PIL+tv | exact vs OpenCV linear |")
        print("|---" * (len(columns) + 5) + "|")
        for _, label in images:
            v = best[label]
            print(f"| {label} | " + " | ".join(f"{x:.2f}" for x in v)
                  + f" | {v[2] / v[1]:.1f}x | {v[4] / v[1]:.1f}x | {v[2] / v[0]:.1f}x "
                  f"| {v[4] / v[0]:.1f}x |")
    print(f"\nload average during the run: {os.getloadavg()[0]:.1f} (2 cores)")


if __name__ == "__main__":
    main()
