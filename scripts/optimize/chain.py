"""What the optimization recipes (prune.py, distill.py) share: reading data sets, turning an ONNX
classifier into a trainable torch module, narrowing it by whole channels, training, exporting.

The recipes take the fp32 ONNX model `brigade optimize` takes, not a framework checkpoint, so one
file is the source of truth for quantization, pruning and distillation alike. What they can read
is a chain: one input, one output, every node feeding the next, weights as initializers, made of

    Sub/Div/Mul/Add by a constant, Conv (group 1, symmetric pads), BatchNormalization, Relu,
    MaxPool, AveragePool, GlobalAveragePool, Flatten (axis 1), Gemm (alpha = beta = 1), Dropout

which covers the demo CNN (models/fashion_mnist_onnx) and the usual small classifiers; anything
else stops the recipe with exit code EXIT_UNSUPPORTED and the node named.

Exit codes (read by src/optimize/recipe.h): 0 done, 2 bad arguments, 3 python3-torch/onnx/numpy
missing, 4 a model the recipes cannot read.
"""

import gzip
import json
import os
import struct
import sys
import time

EXIT_USAGE = 2
EXIT_MISSING_MODULE = 3
EXIT_UNSUPPORTED = 4
SIGNATURE_FILE = "brigade/signature.json"


def setup_environment():
    """Must run before torch is imported: both thread pools read the environment at load time.

    libgomp's passive wait keeps idle OpenMP workers from spinning against a concurrent build;
    OpenBLAS (Debian's libblas.so.3) keeps its own pool that torch.set_num_threads does not size.
    A fixed hash seed makes TorchScript's files byte-for-byte reproducible.
    """
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable] + sys.argv)
    import argparse
    pre_parser = argparse.ArgumentParser(add_help=False)
    pre_parser.add_argument("--threads", type=int, default=1)
    threads = pre_parser.parse_known_args()[0].threads
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(threads))


def import_modules(recipe):
    """Imports numpy, torch and onnx, or exits with EXIT_MISSING_MODULE naming the package."""
    missing = []
    for module, package in (("numpy", "python3-numpy"), ("torch", "python3-torch"),
                            ("onnx", "python3-onnx")):
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    if missing:
        print(f"{recipe}: {sys.executable} cannot import {', '.join(missing)}; install Debian's "
              f"packages (apt-get install {' '.join(missing)})", file=sys.stderr)
        sys.exit(EXIT_MISSING_MODULE)


def fail(recipe, code, message):
    print(f"{recipe}: {message}", file=sys.stderr)
    sys.exit(code)


def log(recipe, message):
    print(f"{recipe}: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Data sets: the formats src/optimize/dataset.h reads (IDX gzip or not, .npy), the same scaling.

def _read_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def read_array(path):
    import numpy as np
    data = _read_bytes(path)
    if data[:6] == b"\x93NUMPY":
        import io
        return np.load(io.BytesIO(data), allow_pickle=False)
    if len(data) < 4:
        raise ValueError(f"'{path}' is neither .npy nor IDX (too short)")
    zero, dtype_code, ndim = struct.unpack_from(">HBB", data, 0)
    if zero != 0 or dtype_code != 0x08:
        raise ValueError(f"'{path}' is neither .npy nor an unsigned-byte IDX file")
    dims = struct.unpack_from(">" + "I" * ndim, data, 4)
    offset = 4 + 4 * ndim
    count = int(np.prod(dims))
    if len(data) - offset != count:
        raise ValueError(f"'{path}': the IDX header announces {count} values, the file holds "
                         f"{len(data) - offset}")
    return np.frombuffer(data, dtype=np.uint8, offset=offset).reshape(dims)


def load_samples(path, sample_shape, integer_scale, limit):
    """fp32 samples [N, *sample_shape]; integer data times integer_scale (dataset.h's rule)."""
    import numpy as np
    import torch
    array = read_array(path)
    if limit:
        array = array[:limit]
    if array.shape[0] == 0:
        raise ValueError(f"'{path}' holds no samples")
    if np.issubdtype(array.dtype, np.integer):
        array = array.astype(np.float32) * np.float32(integer_scale)
    array = np.ascontiguousarray(array, dtype=np.float32)
    per_sample = int(np.prod(sample_shape))
    if array.size // array.shape[0] != per_sample:
        raise ValueError(f"'{path}' has {array.size // array.shape[0]} values per sample, the "
                         f"model's input takes {per_sample} {list(sample_shape)}")
    return torch.from_numpy(array.reshape([array.shape[0], *sample_shape]))


def load_labels(path, limit):
    import numpy as np
    import torch
    array = read_array(path).reshape(-1)
    if limit:
        array = array[:limit]
    return torch.from_numpy(array.astype(np.int64))


def add_data_arguments(parser):
    parser.add_argument("--train", required=True, help="training samples (.npy or IDX)")
    parser.add_argument("--train-labels", required=True, help="their labels (.npy or IDX1)")
    parser.add_argument("--train-samples", type=int, default=0, help="use the first N (0: all)")
    parser.add_argument("--eval", help="samples to print progress on (.npy or IDX)")
    parser.add_argument("--eval-labels", help="their labels")
    parser.add_argument("--eval-samples", type=int, default=0)
    parser.add_argument("--input-scale", type=float, default=1.0 / 255.0,
                        help="integer data times this is the fp32 input")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--onnx-out", required=True, help="where to write the ONNX model")
    parser.add_argument("--torchscript-out", help="where to write the TorchScript model")


def load_data(recipe, args, sample_shape):
    try:
        x = load_samples(args.train, sample_shape, args.input_scale, args.train_samples)
        y = load_labels(args.train_labels, args.train_samples)
        if y.shape[0] < x.shape[0]:
            raise ValueError(f"'{args.train_labels}' has {y.shape[0]} labels for {x.shape[0]} "
                             f"samples in '{args.train}'")
        x_eval = y_eval = None
        if args.eval and args.eval_labels:
            x_eval = load_samples(args.eval, sample_shape, args.input_scale, args.eval_samples)
            y_eval = load_labels(args.eval_labels, args.eval_samples)[:x_eval.shape[0]]
    except (OSError, ValueError) as e:
        fail(recipe, EXIT_USAGE, str(e))
    return x, y[:x.shape[0]], x_eval, y_eval


# ---------------------------------------------------------------------------------------------
# ONNX chain → torch.

def _torch_classes():
    import torch
    from torch import nn

    class ConstOp(nn.Module):
        """x op c for a constant c (the normalization the demo models carry inside)."""

        def __init__(self, op: str, value):
            super().__init__()
            self.op = op
            self.register_buffer("value", torch.as_tensor(value, dtype=torch.float32))

        def forward(self, x):
            if self.op == "Sub":
                return x - self.value
            if self.op == "Div":
                return x / self.value
            if self.op == "Mul":
                return x * self.value
            return x + self.value

    class Chain(nn.Module):
        def __init__(self, layers):
            super().__init__()
            self.layers = nn.Sequential(*layers)

        def forward(self, x):
            return self.layers(x)

    return ConstOp, Chain


class ChainModel:
    """A torch Chain plus what the export needs: input/output names and the per-sample shape."""

    def __init__(self, module, input_name, output_name, sample_shape, opset):
        self.module = module
        self.input_name = input_name
        self.output_name = output_name
        self.sample_shape = sample_shape
        self.opset = opset


def _attributes(node):
    import onnx
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _symmetric(pads, node):
    half = len(pads) // 2
    if list(pads[:half]) != list(pads[half:]):
        raise ValueError(f"node '{node.name}' ({node.op_type}) has asymmetric pads {list(pads)}")
    return tuple(pads[:half])


def load_chain(recipe, path):
    """Reads the ONNX model at `path` as a ChainModel; exits EXIT_UNSUPPORTED when it is not one."""
    import onnx
    import torch
    from onnx import numpy_helper
    from torch import nn
    ConstOp, Chain = _torch_classes()
    try:
        model = onnx.load(path)
    except Exception as e:  # onnx raises DecodeError, OSError, ...: all mean "cannot read it"
        fail(recipe, EXIT_USAGE, f"cannot read ONNX model '{path}': {e}")
    graph = model.graph
    weights = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant":
            weights[node.output[0]] = numpy_helper.to_array(_attributes(node)["value"])
    inputs = [i for i in graph.input if i.name not in weights]
    if len(inputs) != 1 or len(graph.output) != 1:
        fail(recipe, EXIT_UNSUPPORTED, f"'{path}' has {len(inputs)} inputs and "
             f"{len(graph.output)} outputs; the recipes take one of each")
    dims = [d.dim_value if d.HasField("dim_value") else -1
            for d in inputs[0].type.tensor_type.shape.dim]
    sample_shape = dims[1:]
    if not sample_shape or any(d <= 0 for d in sample_shape):
        fail(recipe, EXIT_UNSUPPORTED, f"input '{inputs[0].name}' needs fixed dimensions after "
             f"the batch, has {dims}")
    layers = []
    current = inputs[0].name

    def w(name):
        return torch.from_numpy(weights[name].copy()).float()

    for node in graph.node:
        if node.op_type == "Constant":
            continue
        if not node.input or node.input[0] != current:
            fail(recipe, EXIT_UNSUPPORTED, f"node '{node.name}' ({node.op_type}) does not take "
                 f"the previous node's output; the recipes read chains only")
        extra = [i for i in node.input[1:] if i]
        if any(i not in weights for i in extra):
            fail(recipe, EXIT_UNSUPPORTED, f"node '{node.name}' ({node.op_type}) has a second "
                 f"input that is not a constant")
        a = _attributes(node)
        op = node.op_type
        try:
            if op in ("Sub", "Div", "Mul", "Add") and weights[extra[0]].size == 1:
                layers.append(ConstOp(op, float(weights[extra[0]].reshape(()))))
            elif op == "Conv" and a.get("group", 1) == 1 and len(a["kernel_shape"]) == 2:
                weight = w(extra[0])
                conv = nn.Conv2d(weight.shape[1], weight.shape[0], tuple(a["kernel_shape"]),
                                 stride=tuple(a.get("strides", [1, 1])),
                                 padding=_symmetric(a.get("pads", [0, 0, 0, 0]), node),
                                 dilation=tuple(a.get("dilations", [1, 1])),
                                 bias=len(extra) > 1)
                conv.weight.data.copy_(weight)
                if len(extra) > 1:
                    conv.bias.data.copy_(w(extra[1]))
                layers.append(conv)
            elif op == "BatchNormalization":
                scale = w(extra[0])
                bn = nn.BatchNorm2d(scale.shape[0], eps=a.get("epsilon", 1e-5))
                bn.weight.data.copy_(scale)
                bn.bias.data.copy_(w(extra[1]))
                bn.running_mean.copy_(w(extra[2]))
                bn.running_var.copy_(w(extra[3]))
                layers.append(bn)
            elif op == "Relu":
                layers.append(nn.ReLU())
            elif op in ("MaxPool", "AveragePool") and len(a["kernel_shape"]) == 2:
                kernel = tuple(a["kernel_shape"])
                stride = tuple(a.get("strides", [1, 1]))
                padding = _symmetric(a.get("pads", [0, 0, 0, 0]), node)
                ceil = bool(a.get("ceil_mode", 0))
                if op == "MaxPool":
                    layers.append(nn.MaxPool2d(kernel, stride, padding, ceil_mode=ceil))
                else:
                    layers.append(nn.AvgPool2d(kernel, stride, padding, ceil_mode=ceil,
                                               count_include_pad=bool(a.get("count_include_pad",
                                                                            0))))
            elif op == "GlobalAveragePool":
                layers.append(nn.AdaptiveAvgPool2d(1))
            elif op == "Flatten" and a.get("axis", 1) == 1:
                layers.append(nn.Flatten(1))
            elif op == "Dropout":
                pass
            elif (op == "Gemm" and a.get("alpha", 1.0) == 1.0 and a.get("beta", 1.0) == 1.0
                  and not a.get("transA", 0)):
                weight = w(extra[0])
                if not a.get("transB", 0):
                    weight = weight.t().contiguous()
                linear = nn.Linear(weight.shape[1], weight.shape[0], bias=len(extra) > 1)
                linear.weight.data.copy_(weight)
                if len(extra) > 1:
                    linear.bias.data.copy_(w(extra[1]).reshape(-1))
                layers.append(linear)
            else:
                raise ValueError(f"node '{node.name}' ({op}) is not one the recipes read")
        except (KeyError, ValueError, RuntimeError, IndexError) as e:
            fail(recipe, EXIT_UNSUPPORTED, f"'{path}': {e}")
        current = node.output[0]
    if current != graph.output[0].name:
        fail(recipe, EXIT_UNSUPPORTED, f"the last node's output is not the graph output "
             f"'{graph.output[0].name}'")
    opset = max([o.version for o in model.opset_import if o.domain in ("", "ai.onnx")] + [13])
    chain = ChainModel(Chain(layers), inputs[0].name, graph.output[0].name, sample_shape,
                       min(opset, 17))
    chain.module.eval()
    return chain


# ---------------------------------------------------------------------------------------------
# Channel surgery: the structure that lets a layer's output channels go.

def _is_weight_layer(m):
    from torch import nn
    return isinstance(m, (nn.Conv2d, nn.Linear))


def prunable_layers(chain):
    """[(producer index, consumer index, [BatchNorm indices between])] for every weight layer but
    the last (whose outputs are the classes). Between the two there may only be per-channel or
    channel-preserving modules; a constant op between them would need a per-channel constant."""
    from torch import nn
    layers = list(chain.module.layers)
    weight_indices = [i for i, m in enumerate(layers) if _is_weight_layer(m)]
    result = []
    for producer, consumer in zip(weight_indices, weight_indices[1:]):
        between = layers[producer + 1:consumer]
        allowed = (nn.ReLU, nn.BatchNorm2d, nn.MaxPool2d, nn.AvgPool2d, nn.AdaptiveAvgPool2d,
                   nn.Flatten)
        if all(isinstance(m, allowed) for m in between):
            result.append((producer, consumer,
                           [producer + 1 + k for k, m in enumerate(between)
                            if isinstance(m, nn.BatchNorm2d)]))
    return result


def out_channels(m):
    return m.out_channels if hasattr(m, "out_channels") else m.out_features


def channel_importance(m, norm):
    w = m.weight.detach().reshape(m.weight.shape[0], -1)
    return w.abs().sum(1) if norm == "l1" else w.pow(2).sum(1).sqrt()


def keep_channels(chain, producer, consumer, batch_norms, keep):
    """Replaces the producer by one with only the output channels `keep` (sorted indices) and
    narrows the BatchNorms between and the consumer's inputs to match: the weights get smaller,
    nothing is masked."""
    import torch
    from torch import nn
    layers = chain.module.layers
    keep = torch.as_tensor(sorted(int(k) for k in keep), dtype=torch.long)
    old = layers[producer]
    width = int(keep.numel())
    if isinstance(old, nn.Conv2d):
        new = nn.Conv2d(old.in_channels, width, old.kernel_size, old.stride, old.padding,
                        old.dilation, bias=old.bias is not None)
    else:
        new = nn.Linear(old.in_features, width, bias=old.bias is not None)
    with torch.no_grad():
        new.weight.copy_(old.weight[keep])
        if old.bias is not None:
            new.bias.copy_(old.bias[keep])
    layers[producer] = new
    for index in batch_norms:
        bn = layers[index]
        narrow = nn.BatchNorm2d(width, eps=bn.eps, momentum=bn.momentum)
        with torch.no_grad():
            narrow.weight.copy_(bn.weight[keep])
            narrow.bias.copy_(bn.bias[keep])
            narrow.running_mean.copy_(bn.running_mean[keep])
            narrow.running_var.copy_(bn.running_var[keep])
        layers[index] = narrow
    nxt = layers[consumer]
    previous = out_channels(old)
    with torch.no_grad():
        if isinstance(nxt, nn.Conv2d):
            narrowed = nn.Conv2d(width, nxt.out_channels, nxt.kernel_size, nxt.stride,
                                 nxt.padding, nxt.dilation, bias=nxt.bias is not None)
            narrowed.weight.copy_(nxt.weight[:, keep])
        else:
            # A Linear after Flatten sees each channel as `per_channel` consecutive features.
            per_channel = nxt.in_features // previous
            columns = (keep[:, None] * per_channel + torch.arange(per_channel)[None, :]).reshape(-1)
            narrowed = nn.Linear(width * per_channel, nxt.out_features, bias=nxt.bias is not None)
            narrowed.weight.copy_(nxt.weight[:, columns])
        if nxt.bias is not None:
            narrowed.bias.copy_(nxt.bias)
    layers[consumer] = narrowed


def layer_widths(chain):
    return [out_channels(m) for m in chain.module.layers if _is_weight_layer(m)]


def parameter_count(chain):
    return sum(p.numel() for p in chain.module.parameters())


# ---------------------------------------------------------------------------------------------
# Training, evaluation, export.

def seed_everything(seed, threads):
    import numpy as np
    import torch
    torch.manual_seed(seed)
    np.random.seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)


def top1(chain, x, y, batch_size=1000):
    import torch
    if x is None:
        return None
    chain.module.eval()
    correct = 0
    with torch.inference_mode():
        for start in range(0, x.shape[0], batch_size):
            logits = chain.module(x[start:start + batch_size])
            correct += int((logits.argmax(1) == y[start:start + batch_size]).sum())
    return correct / x.shape[0]


def train_epochs(chain, x, loss_fn, epochs, lr, batch_size, generator, recipe, what):
    """`epochs` passes over x in a seeded order with AdamW and a one-cycle schedule; loss_fn(
    logits, index) gives the batch's loss. Returns the seconds spent."""
    import torch
    if epochs <= 0:
        return 0.0
    start = time.monotonic()
    optimizer = torch.optim.AdamW(chain.module.parameters(), lr=lr, weight_decay=1e-4)
    steps = (x.shape[0] + batch_size - 1) // batch_size
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=lr, epochs=epochs,
                                                   steps_per_epoch=steps)
    for epoch in range(epochs):
        chain.module.train()
        order = torch.randperm(x.shape[0], generator=generator)
        total = 0.0
        for step in range(steps):
            index = order[step * batch_size:(step + 1) * batch_size]
            loss = loss_fn(chain.module(x[index]), index)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            total += float(loss) * index.shape[0]
        log(recipe, f"{what} epoch {epoch + 1}/{epochs}: loss {total / x.shape[0]:.4f}")
    chain.module.eval()
    return time.monotonic() - start


def _signature(chain):
    return json.dumps({
        "inputs": [{"name": chain.input_name, "datatype": "FP32",
                    "shape": [-1, *chain.sample_shape]}],
        "outputs": [{"name": chain.output_name, "datatype": "FP32",
                     "shape": [-1, out_channels([m for m in chain.module.layers
                                                 if _is_weight_layer(m)][-1])]}],
    }, indent=2)


def export(chain, onnx_path, torchscript_path, check_input):
    """Writes ONNX (the source's opset, dynamic batch; checked by onnx.checker) and, when asked,
    frozen TorchScript carrying its signature for the TorchScript backend; both reloaded and
    compared with the module in memory."""
    import onnx
    import torch
    chain.module.eval()
    with torch.inference_mode():
        expected = chain.module(check_input)
    torch.onnx.export(chain.module, check_input[:1], onnx_path, opset_version=chain.opset,
                      input_names=[chain.input_name], output_names=[chain.output_name],
                      dynamic_axes={chain.input_name: {0: "batch"},
                                    chain.output_name: {0: "batch"}},
                      do_constant_folding=True)
    onnx.checker.check_model(onnx.load(onnx_path))
    if torchscript_path:
        scripted = torch.jit.freeze(torch.jit.script(chain.module))
        scripted.save(torchscript_path, _extra_files={SIGNATURE_FILE: _signature(chain)})
        loaded = torch.jit.load(torchscript_path)
        with torch.inference_mode():
            actual = loaded(check_input)
        if not torch.allclose(actual, expected, atol=1e-4, rtol=1e-4):
            raise RuntimeError(f"{torchscript_path}: the reloaded TorchScript model does not "
                               f"match the trained one")
