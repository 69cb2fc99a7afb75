#!/usr/bin/python3
"""Writes the image test data of src/process (and the decoders' fuzz seeds) deterministically.

    /usr/bin/python3 src/process/testdata/make_testdata.py

Needs Debian's python3-pil, python3-numpy and python3-torchvision (test data only; the product
never runs Python). The images are synthetic (smooth gradients, a few shapes and a little seeded
noise: enough texture for JPEG's DCT and for resampling to matter) and small, 64x48. Beside each
image the script writes what the reference stack makes of it, raw bytes the C++ tests compare to:

  NAME.rgb        the decoded pixels, HxWx3 uint8: PIL's Image.open(...).convert("RGB"),
                  except grey16.png (see below)
  NAME.r24c20.rgb torchvision Resize(24) -> CenterCrop(20) on that PIL image, 20x20x3 uint8
  baseline.jpg.r24c20.f32  ... -> ToTensor -> Normalize(ImageNet mean/std), 3x20x20 float32 LE

and cmyk.jpg, a CMYK JPEG the decoder must refuse (no reference).

grey16.png: PIL opens a 16-bit grey PNG as mode "I" and convert("RGB") clips every value above
255 to white, which no model wants; Brigade keeps the high byte (v >> 8), as PIL itself does for
16-bit RGB. Its .rgb is computed with numpy from the 16-bit samples, not by PIL.
"""
import os
import shutil

import numpy as np
import torch
from PIL import Image
from torchvision import transforms

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
FUZZ = os.path.join(ROOT, "tests", "fuzz")
W, H = 64, 48


def synthetic_rgb():
    rng = np.random.default_rng(17)
    y, x = np.mgrid[0:H, 0:W].astype(np.float64)
    r = 255 * x / (W - 1)
    g = 255 * y / (H - 1)
    b = 128 + 100 * np.sin(x / 5.0) * np.cos(y / 7.0)
    img = np.stack([r, g, b], axis=-1)
    img[(x - 40) ** 2 + (y - 20) ** 2 < 100] = [250, 30, 40]  # a red disc
    img[30:42, 8:26] = [20, 200, 60]  # a green block
    img += rng.normal(0, 6, img.shape)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def references(name, pil_rgb):
    write(name + ".rgb", np.asarray(pil_rgb, dtype=np.uint8).tobytes())
    small = transforms.CenterCrop(20)(transforms.Resize(24)(pil_rgb))
    write(name + ".r24c20.rgb", np.asarray(small, dtype=np.uint8).tobytes())
    return small


def main():
    rgb = synthetic_rgb()
    image = Image.fromarray(rgb, "RGB")
    rgba = np.concatenate([rgb, np.linspace(0, 255, W * H).reshape(H, W, 1).astype(np.uint8)], -1)
    grey = np.asarray(image.convert("L"))
    grey16 = (grey.astype(np.uint16) * 257 + np.arange(W, dtype=np.uint16)).astype(np.uint16)
    rgb16 = rgb.astype(np.uint16) * 257 + 3

    image.save(os.path.join(HERE, "baseline.jpg"), quality=90, subsampling=2)
    image.save(os.path.join(HERE, "progressive.jpg"), quality=90, subsampling=2, progressive=True)
    image.convert("L").save(os.path.join(HERE, "grey.jpg"), quality=90)
    # CMYK, which the decoder refuses (libjpeg-turbo cannot convert it to RGB): 16x16 is enough.
    image.resize((16, 16)).convert("CMYK").save(os.path.join(HERE, "cmyk.jpg"), quality=90)
    image.save(os.path.join(HERE, "rgb8.png"))
    Image.fromarray(rgba, "RGBA").save(os.path.join(HERE, "rgba8.png"))
    Image.fromarray(grey, "L").save(os.path.join(HERE, "grey8.png"))
    Image.fromarray(grey16, "I;16").save(os.path.join(HERE, "grey16.png"))
    # PIL cannot write 16-bit RGB PNGs; write it by hand (IHDR bit depth 16, colour type 2).
    write("rgb16.png", png16_rgb(rgb16))

    for name in ["baseline.jpg", "progressive.jpg", "grey.jpg", "rgb8.png", "rgba8.png",
                 "grey8.png", "rgb16.png"]:
        small = references(name, Image.open(os.path.join(HERE, name)).convert("RGB"))
        if name == "baseline.jpg":
            normalize = transforms.Compose([
                transforms.ToTensor(),
                transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])
            tensor = normalize(small).to(torch.float32).contiguous()
            write(name + ".r24c20.f32", tensor.numpy().astype("<f4").tobytes())
    grey16_rgb = np.repeat((grey16 >> 8).astype(np.uint8)[..., None], 3, axis=-1)
    references("grey16.png", Image.fromarray(grey16_rgb, "RGB"))

    # The decoders' fuzz seeds: the same small images.
    for fuzzer, suffix in [("process_jpeg_decoder_fuzz", ".jpg"), ("process_png_decoder_fuzz", ".png")]:
        folder = os.path.join(FUZZ, fuzzer)
        os.makedirs(folder, exist_ok=True)
        for name in sorted(os.listdir(HERE)):
            if name.endswith(suffix):
                shutil.copyfile(os.path.join(HERE, name), os.path.join(folder, name))


def png16_rgb(pixels):
    import struct
    import zlib

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    h, w, _ = pixels.shape
    rows = b"".join(b"\x00" + pixels[y].astype(">u2").tobytes() for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


if __name__ == "__main__":
    main()
