#!/usr/bin/python3
"""Writes the seed corpus of onnx_model_loader_fuzz (tests/fuzz/onnx_model_loader_fuzz/): small
ONNX models, each reaching a different part of the loader, the graph passes or the planner's
shape walk, plus models the loader must refuse. Uses Debian's python3-onnx; deterministic (fixed
weights, no randomness), so an unchanged script rewrites identical files:

    /usr/bin/python3 tests/fuzz/write_onnx_seeds.py tests/fuzz
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def weights(name, shape, dtype=np.float32):
    count = int(np.prod(shape)) if shape else 1
    values = ((np.arange(count) % 7) - 3).astype(dtype) / (4 if dtype == np.float32 else 1)
    return numpy_helper.from_array(values.reshape(shape), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, "seed", inputs, outputs, list(initializers))
    m = helper.make_model(graph, producer_name="write_onnx_seeds",
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def fp32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def seeds():
    yield "small_cnn", model(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[0, 0, 0, 0]),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("Reshape", ["r", "shape"], ["f"]),
         helper.make_node("MatMul", ["f", "fc"], ["y"])],
        [fp32("x", ["N", 2, 6, 6])], [fp32("y", ["N", 4])],
        [weights("w", [3, 2, 3, 3]), ints("shape", [0, -1]), weights("fc", [48, 4])])
    yield "conv_batchnorm_pool", model(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
         helper.make_node("BatchNormalization", ["c", "s", "bias", "mean", "var"], ["n"]),
         helper.make_node("MaxPool", ["n"], ["p"], kernel_shape=[2, 2]),
         helper.make_node("GlobalAveragePool", ["p"], ["y"])],
        [fp32("x", [1, 3, 8, 8])], [fp32("y", [1, 4, 1, 1])],
        [weights("w", [4, 3, 3, 3]), weights("b", [4]), weights("s", [4]), weights("bias", [4]),
         weights("mean", [4]), numpy_helper.from_array(np.ones(4, np.float32), "var")])
    yield "gemm_softmax", model(
        [helper.make_node("Gemm", ["x", "w", "b"], ["g"], transB=1),
         helper.make_node("Softmax", ["g"], ["y"], axis=-1)],
        [fp32("x", ["N", 8])], [fp32("y", ["N", 3])], [weights("w", [3, 8]), weights("b", [3])])
    # Shapes computed in the graph: the planner evaluates them at plan time.
    yield "shape_subgraph", model(
        [helper.make_node("Shape", ["x"], ["s"]),
         helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
         helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
         helper.make_node("Concat", ["n1", "minus_one"], ["target"], axis=0),
         helper.make_node("Reshape", ["x", "target"], ["y"])],
        [fp32("x", ["N", 2, 3])], [fp32("y", ["N", 6])],
        [ints("zero", 0), ints("axes", [0]), ints("minus_one", [-1])])
    yield "slice_transpose_concat", model(
        [helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["s"]),
         helper.make_node("Transpose", ["s"], ["t"], perm=[0, 2, 1]),
         helper.make_node("Concat", ["t", "t"], ["y"], axis=1)],
        [fp32("x", [1, 4, 6])], [fp32("y", [1, 10, 2])],
        [ints("starts", [1]), ints("ends", [3]), ints("axes", [1])])
    yield "resize_nearest", model(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest")],
        [fp32("x", [1, 1, 2, 2])], [fp32("y", [1, 1, 4, 4])],
        [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")])
    # Constant folding runs kernels on initializers.
    yield "constant_of_shape_expand", model(
        [helper.make_node("ConstantOfShape", ["shape"], ["c"],
                          value=numpy_helper.from_array(np.array([0.5], np.float32))),
         helper.make_node("Expand", ["c", "shape2"], ["e"]),
         helper.make_node("Add", ["x", "e"], ["y"])],
        [fp32("x", [2, 3])], [fp32("y", [2, 3])],
        [ints("shape", [1, 3]), ints("shape2", [2, 3])])
    yield "layernorm_pattern", model(
        [helper.make_node("ReduceMean", ["x"], ["m"], axes=[-1]),
         helper.make_node("Sub", ["x", "m"], ["d"]),
         helper.make_node("Pow", ["d", "two"], ["p"]),
         helper.make_node("ReduceMean", ["p"], ["v"], axes=[-1]),
         helper.make_node("Add", ["v", "eps"], ["ve"]),
         helper.make_node("Sqrt", ["ve"], ["sd"]),
         helper.make_node("Div", ["d", "sd"], ["n"]),
         helper.make_node("Mul", ["n", "gamma"], ["g"]),
         helper.make_node("Add", ["g", "beta"], ["y"])],
        [fp32("x", ["N", 4, 8])], [fp32("y", ["N", 4, 8])],
        [numpy_helper.from_array(np.array(2, np.float32), "two"),
         numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
         weights("gamma", [8]), weights("beta", [8])])
    yield "attention_matmuls", model(
        [helper.make_node("MatMul", ["x", "wq"], ["q"]),
         helper.make_node("MatMul", ["x", "wk"], ["k"]),
         helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
         helper.make_node("MatMul", ["q", "kt"], ["a"]),
         helper.make_node("Softmax", ["a"], ["p"], axis=-1),
         helper.make_node("MatMul", ["p", "x"], ["y"])],
        [fp32("x", ["N", 4, 8])], [fp32("y", ["N", 4, 8])],
        [weights("wq", [8, 8]), weights("wk", [8, 8])])
    yield "qdq_matmul", model(
        [helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["q"]),
         helper.make_node("DequantizeLinear", ["q", "scale", "zp"], ["d"]),
         helper.make_node("MatMul", ["d", "w"], ["y"])],
        [fp32("x", ["N", 4])], [fp32("y", ["N", 2])],
        [numpy_helper.from_array(np.array(0.1, np.float32), "scale"),
         numpy_helper.from_array(np.array(3, np.uint8), "zp"), weights("w", [4, 2])])
    yield "int64_gather_cast_where", model(
        [helper.make_node("Gather", ["table", "ids"], ["g"], axis=0),
         helper.make_node("Cast", ["ids"], ["f"], to=TensorProto.FLOAT),
         helper.make_node("Greater", ["f", "zero"], ["m"]),
         helper.make_node("Unsqueeze", ["m", "axes"], ["m1"]),
         helper.make_node("Where", ["m1", "g", "g"], ["y"])],
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["N"])],
        [fp32("y", ["N", 3])],
        [weights("table", [5, 3]), numpy_helper.from_array(np.array(0, np.float32), "zero"),
         ints("axes", [1])])
    # An input with an initializer of the same name: a constant unless named (optional inputs).
    yield "initializer_input", model(
        [helper.make_node("Mul", ["x", "k"], ["y"])],
        [fp32("x", [2]), fp32("k", [2])], [fp32("y", [2])], [weights("k", [2])])
    # Control flow: a Loop whose trip count comes from a shape, an If in its body reading values
    # of both enclosing graphs, a scan output, and a Scan over it.
    then_branch = helper.make_graph([helper.make_node("Mul", ["h", "two"], ["doubled"])], "then",
                                    [], [fp32("doubled", ["N", 4])])
    else_branch = helper.make_graph([helper.make_node("Add", ["h", "one"], ["shifted"])], "else",
                                    [], [fp32("shifted", ["N", 4])])
    body = helper.make_graph(
        [helper.make_node("ReduceSum", ["h"], ["total"], keepdims=0),
         helper.make_node("Greater", ["total", "zero"], ["positive"]),
         helper.make_node("If", ["positive"], ["h_out"], then_branch=then_branch,
                          else_branch=else_branch),
         helper.make_node("Identity", ["h_out"], ["step"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []), fp32("h", ["N", 4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), fp32("h_out", ["N", 4]),
         fp32("step", ["N", 4])])
    scan_body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "y_t"], ["s_out"])], "scan_body",
        [fp32("s_in", ["N", 4]), fp32("y_t", ["N", 4])], [fp32("s_out", ["N", 4])])
    yield "loop_if_scan", model(
        [helper.make_node("Shape", ["x"], ["shape"]),
         helper.make_node("Gather", ["shape", "one_i"], ["trip"], axis=0),
         helper.make_node("Loop", ["trip", "", "x"], ["y", "ys"], body=body),
         helper.make_node("Scan", ["x", "ys"], ["z"], body=scan_body, num_scan_inputs=1)],
        [fp32("x", ["N", 4])], [fp32("y", ["N", 4]), fp32("z", ["N", 4])],
        [numpy_helper.from_array(np.array(1, dtype=np.int64), "one_i"),
         numpy_helper.from_array(np.array(2, dtype=np.float32), "two"),
         numpy_helper.from_array(np.array(1, dtype=np.float32), "one"),
         numpy_helper.from_array(np.array(0, dtype=np.float32), "zero")])
    # What the loader refuses, each for its own reason.
    yield "refused_opset_18", model(
        [helper.make_node("Relu", ["x"], ["y"])], [fp32("x", [2])], [fp32("y", [2])], opset=18)
    yield "refused_unsupported_op", model(
        [helper.make_node("Einsum", ["x", "x"], ["y"], equation="i,i->")],
        [fp32("x", [3])], [fp32("y", [])])
    outside = weights("w", [2])
    outside.ClearField("raw_data")
    outside.ClearField("float_data")
    outside.data_location = TensorProto.EXTERNAL
    outside.external_data.add(key="location", value="../outside.bin")
    yield "refused_external_data", model(
        [helper.make_node("Add", ["x", "w"], ["y"])], [fp32("x", [2])], [fp32("y", [2])],
        [outside])
    yield "refused_undefined_input", model(
        [helper.make_node("Add", ["x", "nowhere"], ["y"])], [fp32("x", [2])], [fp32("y", [2])])


def main():
    folder = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "tests/fuzz",
                          "onnx_model_loader_fuzz")
    os.makedirs(folder, exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
