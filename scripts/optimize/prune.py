#!/usr/bin/python3
"""Structured channel pruning of an ONNX classifier, with fine-tuning, exported as ONNX and
TorchScript: the recipe behind `brigade optimize prune` (which gates and times its result on
Brigade's engine), also runnable by hand with Debian's python3-torch and python3-onnx:

    /usr/bin/python3 scripts/optimize/prune.py models/fashion_mnist_onnx/1/model.onnx \
        --ratio 0.5 --train /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz \
        --train-labels /usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz \
        --onnx-out /tmp/pruned.onnx --torchscript-out /tmp/pruned.pt

Every weight layer but the last loses `--ratio` of its output channels (those of smallest L1 or
L2 filter norm), with the BatchNorm between and the next layer's matching inputs: the exported
weights are smaller, nothing is zeroed. The cut is stepwise: one step never removes more than
`--max-step` (at most half) of a layer's remaining channels, and each step is followed by
`--finetune-epochs` of fine-tuning on the training set, so 75% is 16 → 8 → 4 in two steps.
`--channel-multiple 16` rounds each layer's kept width down to a multiple of 16 (the blocks the
engine's AVX-512 convolutions work on), where a cut to 24 of 32 channels saves nothing.

A filter's norm ignores a following BatchNorm's scale; the demo models have it folded into the
convolution (torch.onnx's constant folding does), where the norm is the whole story.

Prints one JSON object on stdout (the widths before and after, each step's accuracy when --eval
is given, seconds); progress goes to stderr. Exit codes: chain.py's.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chain as common  # noqa: E402

RECIPE = "prune"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", help="the fp32 ONNX model")
    parser.add_argument("--ratio", type=float, required=True,
                        help="fraction of each layer's channels to remove, in (0, 1)")
    parser.add_argument("--norm", choices=["l1", "l2"], default="l1")
    parser.add_argument("--max-step", type=float, default=0.5,
                        help="largest fraction of a layer's remaining channels cut in one step")
    parser.add_argument("--channel-multiple", type=int, default=1,
                        help="round each layer's kept channels down to a multiple of this (one "
                             "multiple at least): kernels work on blocks of channels")
    parser.add_argument("--finetune-epochs", type=int, default=1, help="after each step")
    parser.add_argument("--lr", type=float, default=1e-3)
    common.add_data_arguments(parser)
    args = parser.parse_args()
    if not 0 < args.ratio < 1:
        common.fail(RECIPE, common.EXIT_USAGE, f"--ratio: {args.ratio} is not in (0, 1)")
    if not 0 < args.max_step <= 0.5:
        common.fail(RECIPE, common.EXIT_USAGE, f"--max-step: {args.max_step} is not in (0, 0.5]")
    if args.channel_multiple < 1:
        common.fail(RECIPE, common.EXIT_USAGE, "--channel-multiple: must be >= 1")
    if args.finetune_epochs < 0:
        common.fail(RECIPE, common.EXIT_USAGE, "--finetune-epochs: must be >= 0")
    return args


def kept_channels(original, ratio, multiple):
    """How many of `original` channels a cut by `ratio` keeps: at least one, and with multiple >
    1 rounded down to a multiple of it (one at least; a layer narrower than it keeps its width).
    Measured on Brigade's engine with AVX-512 (bench/results/optimize.md): 24 channels cost what
    32 do, 16 half of that, as its convolutions work on blocks of 16 channels."""
    keep = max(1, round(original * (1 - ratio)))
    if multiple > 1:
        keep = original if original <= multiple else max(multiple, keep // multiple * multiple)
    return keep


def step_targets(original, target, max_step):
    """The widths a layer goes through from `original` down to `target`, each step cutting at
    most max_step of what remains (at least one channel, so the schedule always ends)."""
    widths = []
    width = original
    while width > target:
        cut = min(width - target, max(1, int(width * max_step)))
        width -= cut
        widths.append(width)
    return widths


def main():
    common.setup_environment()
    args = parse_args()
    common.import_modules(RECIPE)
    import torch
    import torch.nn.functional as F
    common.seed_everything(args.seed, args.threads)
    model = common.load_chain(RECIPE, args.model)
    x, y, x_eval, y_eval = common.load_data(RECIPE, args, model.sample_shape)
    structure = common.prunable_layers(model)
    if not structure:
        common.fail(RECIPE, common.EXIT_UNSUPPORTED,
                    f"'{args.model}' has no layer whose output channels can be cut")
    layers = model.module.layers
    before = common.layer_widths(model)
    params_before = common.parameter_count(model)
    schedules = {}
    for producer, _, _ in structure:
        original = common.out_channels(layers[producer])
        schedules[producer] = step_targets(
            original, kept_channels(original, args.ratio, args.channel_multiple), args.max_step)
    step_count = max(len(s) for s in schedules.values())
    fp32_top1 = common.top1(model, x_eval, y_eval)
    if fp32_top1 is not None:
        common.log(RECIPE, f"fp32 top-1 {fp32_top1:.4f}, widths {before}")
    generator = torch.Generator().manual_seed(args.seed)
    steps = []
    seconds = 0.0
    for step in range(step_count):
        for producer, consumer, batch_norms in structure:
            schedule = schedules[producer]
            if step >= len(schedule):
                continue
            importance = common.channel_importance(layers[producer], args.norm)
            keep = torch.topk(importance, schedule[step]).indices
            common.keep_channels(model, producer, consumer, batch_norms, keep)
        widths = common.layer_widths(model)
        cut_top1 = common.top1(model, x_eval, y_eval)
        seconds += common.train_epochs(model, x, lambda logits, index: F.cross_entropy(
            logits, y[index]), args.finetune_epochs, args.lr, args.batch_size, generator, RECIPE,
            f"step {step + 1}/{step_count} fine-tune")
        tuned_top1 = common.top1(model, x_eval, y_eval)
        steps.append({"step": step + 1, "widths": widths, "top1_after_cut": cut_top1,
                      "top1_after_finetune": tuned_top1})
        if tuned_top1 is not None:
            common.log(RECIPE, f"step {step + 1}/{step_count}: widths {widths}, top-1 "
                       f"{cut_top1:.4f} after the cut, {tuned_top1:.4f} after fine-tuning")
    try:
        common.export(model, args.onnx_out, args.torchscript_out, x[:8])
    except (OSError, RuntimeError) as e:
        common.fail(RECIPE, 1, f"export failed: {e}")
    print(json.dumps({
        "recipe": RECIPE, "ratio": args.ratio, "norm": args.norm,
        "channel_multiple": args.channel_multiple,
        "widths_before": before, "widths_after": common.layer_widths(model),
        "parameters_before": params_before, "parameters_after": common.parameter_count(model),
        "fp32_top1": fp32_top1, "steps": steps, "train_samples": int(x.shape[0]),
        "finetune_epochs_per_step": args.finetune_epochs, "training_seconds": round(seconds, 1),
        "onnx": args.onnx_out, "torchscript": args.torchscript_out,
    }))


if __name__ == "__main__":
    main()
