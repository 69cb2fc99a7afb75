#!/usr/bin/python3
"""Pruning and distillation of the demo Fashion-MNIST CNN: accuracy on the 10,000 test images and
latency on Brigade's engine (batch 1 and 8, one thread) against the fp32 model, printed as the
Markdown table of bench/results/optimize.md.

    /usr/bin/python3 bench/optimize_prune.py [--brigade build/brigade] [--out /tmp/optimize-prune]

(--brigade may be a copy of the binary anywhere: the recipes are taken from this checkout.)

Each variant is made by `brigade optimize prune|distill` (the recipes of scripts/optimize, run
under `nice -n 10`: training shares the CPU with whatever else runs) with --force, so a variant
that misses the 1-point gate is still measured and the table says it missed; then `brigade
optimize evaluate` gates and times it at normal priority, both models in one process, batch 1
and 8 interleaved. Prints; asserts nothing.

--layer-widths instead times untrained cuts of the CNN's two convolutions to chosen widths (the
pruning surgery of scripts/optimize/chain.py, no fine-tuning: only the speed is of interest),
each against fp32, --repeat times: which channel counts the engine's kernels run faster.
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = "/usr/share/datasets/fashion-mnist"
FP32 = os.path.join(ROOT, "models", "fashion_mnist_onnx", "1", "model.onnx")
RECIPES = os.path.join(ROOT, "scripts", "optimize")

# (name, verb, the verb's own flags)
VARIANTS = [
    ("prune 25%", "prune", ["--ratio", "0.25"]),
    ("prune 50%", "prune", ["--ratio", "0.5"]),
    ("prune 75%", "prune", ["--ratio", "0.75"]),
    ("prune 25%, widths down to multiples of 16", "prune",
     ["--ratio", "0.25", "--channel-multiple", "16"]),
    ("distilled student (width 0.5, T 4, alpha 0.7)", "distill",
     ["--width", "0.5", "--temperature", "4", "--alpha", "0.7"]),
    ("same student, labels only (alpha 0)", "distill", ["--width", "0.5", "--alpha", "0"]),
]


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown CPU"
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    flags = fields.get("Flags", "").split()
    isa = [f for f in ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile") if f in flags]
    return (f"{fields.get('Model name', '?').strip()}, {fields.get('CPU(s)', '?').strip()} "
            f"vCPUs, {' '.join(isa)}")


# Output channels kept of conv1 and conv2 (16 and 32 in the demo model).
LAYER_WIDTHS = [(12, 24), (8, 16), (16, 24), (12, 32), (8, 24), (16, 16)]


def layer_widths_table(args):
    sys.path.insert(0, RECIPES)
    import chain  # noqa: E402  (scripts/optimize; needs python3-torch and python3-onnx)
    import torch
    os.makedirs(args.out, exist_ok=True)
    test = ["--eval", f"{DATA}/t10k-images-idx3-ubyte.gz", "--eval-samples", "64"]
    rows = []
    for conv1, conv2 in LAYER_WIDTHS:
        model = chain.load_chain("bench", FP32)
        convs = [p for p in chain.prunable_layers(model)
                 if isinstance(model.module.layers[p[0]], torch.nn.Conv2d)]
        for (producer, consumer, batch_norms), width in zip(convs, (conv1, conv2)):
            importance = chain.channel_importance(model.module.layers[producer], "l1")
            chain.keep_channels(model, producer, consumer, batch_norms,
                                torch.topk(importance, width).indices)
        path = os.path.join(args.out, f"conv_{conv1}_{conv2}.onnx")
        chain.export(model, path, None, torch.zeros(8, *model.sample_shape))
        ratios = {1: [], 8: []}
        for _ in range(args.repeat):
            judged = run_json([args.brigade, "optimize", "evaluate", path, "--reference", FP32,
                               *test, "--max-accuracy-drop", "100", "--time-iterations",
                               args.time_iterations, "--json"], nice=False)
            for t in judged["timings"]:
                ratios[t["batch"]].append(t["fp32_us"] / t["candidate_us"])
        rows.append((conv1, conv2, ratios))
    print(f"CPU: {cpu_model()}; one engine thread; {args.time_iterations} timed runs per model "
          f"and batch (median), {args.repeat} runs; speed-up over fp32 (16/32), each run\n")
    print("| conv1/conv2 channels | batch 1 speed-up | batch 8 speed-up |")
    print("|---|---|---|")
    for conv1, conv2, ratios in rows:
        cells = [" ".join(f"{r:.2f}×" for r in ratios[b]) for b in (1, 8)]
        print(f"| {conv1}/{conv2} | {cells[0]} | {cells[1]} |")


def run_json(args, nice):
    command = (["nice", "-n", "10"] if nice else []) + args
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode not in (0, 2):
        sys.exit(f"failed ({result.returncode}): {' '.join(command)}\n{result.stderr}")
    return json.loads(result.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--brigade", default=os.path.join(ROOT, "build", "brigade"))
    parser.add_argument("--out", default="/tmp/optimize-prune")
    parser.add_argument("--finetune-epochs", default="2", help="per pruning step")
    parser.add_argument("--distill-epochs", default="5")
    parser.add_argument("--time-iterations", default="500")
    parser.add_argument("--layer-widths", action="store_true",
                        help="time untrained conv cuts to LAYER_WIDTHS instead (see above)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per --layer-widths cut")
    parser.add_argument("--reuse", action="store_true",
                        help="keep the models (and their training reports) an earlier run left "
                             "in --out; only judge and time them again")
    args = parser.parse_args()
    if args.layer_widths:
        layer_widths_table(args)
        return
    os.makedirs(args.out, exist_ok=True)
    data = ["--train", f"{DATA}/train-images-idx3-ubyte.gz",
            "--train-labels", f"{DATA}/train-labels-idx1-ubyte.gz"]
    test = ["--eval", f"{DATA}/t10k-images-idx3-ubyte.gz",
            "--eval-labels", f"{DATA}/t10k-labels-idx1-ubyte.gz"]
    rows = []
    for name, verb, flags in VARIANTS:
        output = os.path.join(args.out, name.split(" (")[0].replace(" ", "_").replace("%", "")
                              .replace(",", "")[:40] + ".onnx")
        epochs = (["--finetune-epochs", args.finetune_epochs] if verb == "prune"
                  else ["--epochs", args.distill_epochs])
        made_json = output.replace(".onnx", ".made.json")
        if args.reuse and os.path.exists(made_json) and os.path.exists(output):
            with open(made_json) as f:
                made = json.load(f)
        else:
            made = run_json([args.brigade, "optimize", verb, FP32, "-o", output, *flags,
                             *epochs, *data, *test, "--time-iterations", "0", "--force",
                             "--quiet", "--recipe-dir", RECIPES, "--json"], nice=True)
            with open(made_json, "w") as f:
                json.dump(made, f)
        judged = run_json([args.brigade, "optimize", "evaluate", output, "--reference", FP32,
                           *test, "--time-iterations", args.time_iterations, "--json"],
                          nice=False)
        rows.append((name, made, judged))
        print(f"{name}: done", file=sys.stderr, flush=True)

    print(f"CPU: {cpu_model()}; one engine thread; "
          f"{args.time_iterations} timed runs per model and batch (median)\n")
    print("| variant | widths (conv1/conv2/fc1) | parameters | top-1 (10,000) | drop, points "
          "| 1-point gate | batch 1 µs | batch 8 µs | training s |")
    print("|---|---|---:|---:|---:|---|---:|---:|---:|")
    first = rows[0][2]
    t = {x["batch"]: x for x in first["timings"]}
    fp32_widths = "/".join(str(w["fp32"]) for w in first["widths"][:-1])
    print(f"| fp32 (the demo model) | {fp32_widths} | {first['fp32_parameters']:,} | "
          f"{first['fp32_top1'] * 100:.2f}% | – | – | {t[1]['fp32_us']:.1f} | "
          f"{t[8]['fp32_us']:.1f} | – |")
    for name, made, judged in rows:
        t = {x["batch"]: x for x in judged["timings"]}
        widths = "/".join(str(w["candidate"]) for w in judged["widths"][:-1])

        def cell(batch):
            return (f"{t[batch]['candidate_us']:.1f} "
                    f"({t[batch]['fp32_us'] / t[batch]['candidate_us']:.2f}× vs "
                    f"{t[batch]['fp32_us']:.1f})")
        print(f"| {name} | {widths} | {judged['candidate_parameters']:,} | "
              f"{judged['candidate_top1'] * 100:.2f}% | {judged['drop_points']:.2f} | "
              f"{'passed' if judged['gate_passed'] else 'missed'} | {cell(1)} | {cell(8)} | "
              f"{made['recipe']['training_seconds']:.0f} |")


if __name__ == "__main__":
    main()
