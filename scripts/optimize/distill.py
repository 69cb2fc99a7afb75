#!/usr/bin/python3
"""Knowledge distillation of a narrower student from an ONNX classifier (the teacher), exported
as ONNX and TorchScript: the recipe behind `brigade optimize distill` (which gates and times its
result on Brigade's engine), also runnable by hand with Debian's python3-torch and python3-onnx:

    /usr/bin/python3 scripts/optimize/distill.py models/fashion_mnist_onnx/1/model.onnx \
        --width 0.5 --train /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz \
        --train-labels /usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz \
        --onnx-out /tmp/student.onnx --torchscript-out /tmp/student.pt

The student is the teacher's chain with every weight layer but the last `--width` times as wide,
freshly initialized (the input normalization constants are kept: they are the data's, not
learnt). It is trained on

    loss = α · T² · KL(p_teacher ‖ p_student) + (1 − α) · CE(student logits, label)

where p = softmax(logits / T): the soft term pulls the student's tempered distribution towards
the teacher's (the T² keeps its gradients on the hard term's scale as T grows), the hard term
towards the labels. `--alpha 0` trains the same student on the labels alone, the baseline that
says what the teacher adds.

Prints one JSON object on stdout; progress goes to stderr. Exit codes: chain.py's.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chain as common  # noqa: E402

RECIPE = "distill"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", help="the fp32 ONNX teacher")
    parser.add_argument("--width", type=float, default=0.5,
                        help="student width as a fraction of the teacher's, in (0, 1]")
    parser.add_argument("--temperature", type=float, default=4.0)
    parser.add_argument("--alpha", type=float, default=0.7, help="weight of the soft loss")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=3e-3)
    common.add_data_arguments(parser)
    args = parser.parse_args()
    if not 0 < args.width <= 1:
        common.fail(RECIPE, common.EXIT_USAGE, f"--width: {args.width} is not in (0, 1]")
    if args.temperature <= 0:
        common.fail(RECIPE, common.EXIT_USAGE, f"--temperature: {args.temperature} is not > 0")
    if not 0 <= args.alpha <= 1:
        common.fail(RECIPE, common.EXIT_USAGE, f"--alpha: {args.alpha} is not in [0, 1]")
    if args.epochs < 1:
        common.fail(RECIPE, common.EXIT_USAGE, "--epochs: must be >= 1")
    return args


def main():
    common.setup_environment()
    args = parse_args()
    common.import_modules(RECIPE)
    import torch
    import torch.nn.functional as F
    common.seed_everything(args.seed, args.threads)
    teacher = common.load_chain(RECIPE, args.model)
    x, y, x_eval, y_eval = common.load_data(RECIPE, args, teacher.sample_shape)
    structure = common.prunable_layers(teacher)
    if not structure:
        common.fail(RECIPE, common.EXIT_UNSUPPORTED,
                    f"'{args.model}' has no layer whose width a student could narrow")
    with torch.inference_mode():
        soft_targets = torch.cat([teacher.module(x[s:s + 1000]) for s in range(0, x.shape[0],
                                                                                  1000)])
    teacher_top1 = common.top1(teacher, x_eval, y_eval)
    # The student: the teacher's structure narrowed (the first channels kept, which only fixes
    # the shapes), then every weight re-initialized, so nothing of the teacher's weights remains.
    student = common.load_chain(RECIPE, args.model)
    for producer, consumer, batch_norms in structure:
        width = common.out_channels(student.module.layers[producer])
        common.keep_channels(student, producer, consumer, batch_norms,
                             range(max(1, round(width * args.width))))
    for m in student.module.modules():
        if hasattr(m, "reset_parameters"):
            m.reset_parameters()
    temperature, alpha = args.temperature, args.alpha

    def loss_fn(logits, index):
        hard = F.cross_entropy(logits, y[index])
        if alpha == 0:
            return hard
        soft = F.kl_div(F.log_softmax(logits / temperature, dim=1),
                        F.softmax(soft_targets[index] / temperature, dim=1),
                        reduction="batchmean")
        return alpha * temperature * temperature * soft + (1 - alpha) * hard

    generator = torch.Generator().manual_seed(args.seed)
    seconds = common.train_epochs(student, x, loss_fn, args.epochs, args.lr, args.batch_size,
                                  generator, RECIPE, "student")
    student_top1 = common.top1(student, x_eval, y_eval)
    if student_top1 is not None:
        common.log(RECIPE, f"teacher top-1 {teacher_top1:.4f}, student {student_top1:.4f}")
    try:
        common.export(student, args.onnx_out, args.torchscript_out, x[:8])
    except (OSError, RuntimeError) as e:
        common.fail(RECIPE, 1, f"export failed: {e}")
    print(json.dumps({
        "recipe": RECIPE, "width": args.width, "temperature": temperature, "alpha": alpha,
        "widths_before": common.layer_widths(teacher), "widths_after": common.layer_widths(student),
        "parameters_before": common.parameter_count(teacher),
        "parameters_after": common.parameter_count(student),
        "teacher_top1": teacher_top1, "student_top1": student_top1, "epochs": args.epochs,
        "train_samples": int(x.shape[0]), "training_seconds": round(seconds, 1),
        "onnx": args.onnx_out, "torchscript": args.torchscript_out,
    }))


if __name__ == "__main__":
    main()
