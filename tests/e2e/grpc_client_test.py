#!/usr/bin/python3
"""Independent-client test of Brigade's gRPC front end (KServe v2 / Triton protocol).

Runs against a server that is already listening:

    /usr/bin/python3 tests/e2e/grpc_client_test.py --grpc-port 8001 \
        [--host 127.0.0.1] [--identity-model identity] [--add-sub-model add_sub]

The client is Debian's python3-grpcio; the stubs are generated at test time, with Debian's
python3-grpc-tools, from Brigade's .proto files into a temporary folder. Because stubs generated
from our own .proto cannot catch a tag number that both sides got wrong in the same way, one test
also encodes a ModelInferRequest by hand from the published field numbers and decodes the reply by
hand.

The models are looked up through ModelMetadata, so any identity-like model (outputs equal inputs)
and any add_sub-like model (OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1, Triton's
"simple") with INT32 or FP32 tensors will do; variable dimensions are sent as 1 (the batch
dimension) or 4. Exit status 0 when every test passes.

Needs /usr/bin/python3 (the python3 on PATH may lack Debian's grpc modules).
"""

import argparse
import os
import struct
import sys
import tempfile
import unittest

ARGS = None
PB = None  # grpc_service_pb2
STUB_MODULE = None  # grpc_service_pb2_grpc

SRC_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "src"))
PROTOS = ["protocol/grpc_service.proto", "protocol/model_config.proto"]


def generate_stubs(out_dir):
    from grpc_tools import protoc  # Debian: python3-grpc-tools

    command = ["grpc_tools.protoc", "-I" + SRC_DIR, "--python_out=" + out_dir,
               "--grpc_python_out=" + out_dir] + [os.path.join(SRC_DIR, p) for p in PROTOS]
    if protoc.main(command) != 0:
        raise RuntimeError("protoc failed on " + ", ".join(PROTOS))
    sys.path.insert(0, out_dir)
    global PB, STUB_MODULE
    from protocol import grpc_service_pb2, grpc_service_pb2_grpc
    PB, STUB_MODULE = grpc_service_pb2, grpc_service_pb2_grpc


NUMPY_LIKE = {"INT32": ("i", "int_contents"), "FP32": ("f", "fp32_contents")}


def concrete_shape(shape):
    """A concrete shape for a metadata shape: the leading -1 (batch) becomes 1, others 4."""
    return [(1 if i == 0 else 4) if d < 0 else d for i, d in enumerate(shape)]


def count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def pack(datatype, values):
    code, _ = NUMPY_LIKE[datatype]
    return struct.pack("<%d%s" % (len(values), code), *values)


def unpack(datatype, raw):
    code, _ = NUMPY_LIKE[datatype]
    return list(struct.unpack("<%d%s" % (len(raw) // 4, code), raw))


# ---- hand-rolled protobuf wire format, from the published field numbers --------------------

def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field_bytes(number, payload):
    return varint((number << 3) | 2) + varint(len(payload)) + payload


def field_varint(number, value):
    return varint(number << 3) + varint(value & 0xFFFFFFFFFFFFFFFF)


def read_fields(data):
    """Yields (field number, wire type, value) of one message level."""
    i = 0
    while i < len(data):
        key, i = read_varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = read_varint(data, i)
        elif wire == 2:
            length, i = read_varint(data, i)
            value, i = data[i:i + length], i + length
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        else:
            raise ValueError("unexpected wire type %d" % wire)
        yield number, wire, value


def read_varint(data, i):
    shift = result = 0
    while True:
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, i


class GrpcClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import grpc  # Debian: python3-grpcio

        cls.grpc = grpc
        cls.channel = grpc.insecure_channel("%s:%d" % (ARGS.host, ARGS.grpc_port))
        grpc.channel_ready_future(cls.channel).result(timeout=30)
        cls.stub = STUB_MODULE.GRPCInferenceServiceStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()

    def metadata(self, model):
        return self.stub.ModelMetadata(PB.ModelMetadataRequest(name=model), timeout=10)

    def add_sub_request(self, request_id="", raw=True):
        meta = self.metadata(ARGS.add_sub_model)
        request = PB.ModelInferRequest(model_name=ARGS.add_sub_model, id=request_id)
        values = {}
        for k, tensor in enumerate(meta.inputs):
            shape = concrete_shape(tensor.shape)
            data = [(i + 1) * (3 if k == 0 else 1) for i in range(count(shape))]
            values[tensor.name] = data
            entry = request.inputs.add(name=tensor.name, datatype=tensor.datatype, shape=shape)
            if raw:
                request.raw_input_contents.append(pack(tensor.datatype, data))
            else:
                getattr(entry.contents, NUMPY_LIKE[tensor.datatype][1]).extend(data)
        return meta, request, values

    def check_add_sub(self, meta, response, values):
        a, b = (values[t.name] for t in meta.inputs)
        outputs = {o.name: unpack(o.datatype, raw)
                   for o, raw in zip(response.outputs, response.raw_output_contents)}
        self.assertEqual(len(response.raw_output_contents), len(response.outputs))
        self.assertEqual(outputs["OUTPUT0"], [x + y for x, y in zip(a, b)])
        self.assertEqual(outputs["OUTPUT1"], [x - y for x, y in zip(a, b)])

    # ---- tests ------------------------------------------------------------------------------

    def test_server_is_live_and_ready(self):
        self.assertTrue(self.stub.ServerLive(PB.ServerLiveRequest(), timeout=10).live)
        self.assertTrue(self.stub.ServerReady(PB.ServerReadyRequest(), timeout=10).ready)
        for model in (ARGS.identity_model, ARGS.add_sub_model):
            ready = self.stub.ModelReady(PB.ModelReadyRequest(name=model), timeout=10)
            self.assertTrue(ready.ready, model)

    def test_server_metadata_names_the_server(self):
        meta = self.stub.ServerMetadata(PB.ServerMetadataRequest(), timeout=10)
        self.assertTrue(meta.name)
        self.assertTrue(meta.version)

    def test_repository_index_lists_the_models(self):
        index = self.stub.RepositoryIndex(PB.RepositoryIndexRequest(ready=True), timeout=10)
        names = {m.name for m in index.models}
        self.assertIn(ARGS.identity_model, names)
        self.assertIn(ARGS.add_sub_model, names)
        for m in index.models:
            self.assertEqual(m.state, "READY", m.name)

    def test_model_config_matches_metadata(self):
        config = self.stub.ModelConfig(PB.ModelConfigRequest(name=ARGS.add_sub_model),
                                       timeout=10).config
        meta = self.metadata(ARGS.add_sub_model)
        self.assertEqual(config.name, ARGS.add_sub_model)
        self.assertEqual(sorted(i.name for i in config.input), sorted(i.name for i in meta.inputs))

    def test_infer_with_raw_contents(self):
        meta, request, values = self.add_sub_request("raw-1")
        response = self.stub.ModelInfer(request, timeout=10)
        self.assertEqual(response.model_name, ARGS.add_sub_model)
        self.assertEqual(response.id, "raw-1")
        self.assertTrue(response.model_version)
        self.check_add_sub(meta, response, values)

    def test_infer_with_typed_contents(self):
        meta, request, values = self.add_sub_request("typed-1", raw=False)
        self.check_add_sub(meta, self.stub.ModelInfer(request, timeout=10), values)

    def test_identity_returns_its_input(self):
        meta = self.metadata(ARGS.identity_model)
        request = PB.ModelInferRequest(model_name=ARGS.identity_model)
        sent = []
        for tensor in meta.inputs:
            shape = concrete_shape(tensor.shape)
            data = list(range(count(shape)))
            request.inputs.add(name=tensor.name, datatype=tensor.datatype, shape=shape)
            request.raw_input_contents.append(pack(tensor.datatype, data))
            sent.append((shape, data))
        response = self.stub.ModelInfer(request, timeout=10)
        self.assertEqual(len(response.outputs), len(sent))
        for (shape, data), output, raw in zip(sent, response.outputs,
                                              response.raw_output_contents):
            self.assertEqual(list(output.shape), shape)
            self.assertEqual(unpack(output.datatype, raw), data)

    def test_bad_input_is_invalid_argument_naming_it(self):
        meta, request, _ = self.add_sub_request()
        request.inputs[0].datatype = "FP33"
        with self.assertRaises(self.grpc.RpcError) as caught:
            self.stub.ModelInfer(request, timeout=10)
        self.assertEqual(caught.exception.code(), self.grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn(meta.inputs[0].name, caught.exception.details())

    def test_unknown_model_is_not_found(self):
        request = PB.ModelInferRequest(model_name="no_such_model")
        with self.assertRaises(self.grpc.RpcError) as caught:
            self.stub.ModelInfer(request, timeout=10)
        self.assertEqual(caught.exception.code(), self.grpc.StatusCode.NOT_FOUND)

    def test_stream_answers_every_request(self):
        requests = []
        for i in range(5):
            _, request, _ = self.add_sub_request("s%d" % i)
            requests.append(request)
        bad = PB.ModelInferRequest(model_name=ARGS.add_sub_model, id="bad")
        bad.inputs.add(name="x", datatype="FP33", shape=[1])
        responses = list(self.stub.ModelStreamInfer(iter(requests + [bad]), timeout=30))
        by_id = {r.infer_response.id: r for r in responses}
        self.assertEqual(sorted(by_id), sorted(["s%d" % i for i in range(5)] + ["bad"]))
        for i in range(5):
            self.assertEqual(by_id["s%d" % i].error_message, "")
        self.assertIn("FP33", by_id["bad"].error_message)

    def test_statistics_count_successes(self):
        _, request, _ = self.add_sub_request()
        self.stub.ModelInfer(request, timeout=10)
        stats = self.stub.ModelStatistics(PB.ModelStatisticsRequest(name=ARGS.add_sub_model),
                                          timeout=10)
        self.assertGreaterEqual(len(stats.model_stats), 1)
        success = stats.model_stats[0].inference_stats.success
        self.assertGreaterEqual(success.count, 1)
        self.assertGreater(success.ns, 0)

    def test_cuda_shared_memory_is_unimplemented(self):
        # A CPU server; system shared memory is served (test_shm_e2e.py).
        with self.assertRaises(self.grpc.RpcError) as caught:
            self.stub.CudaSharedMemoryStatus(PB.CudaSharedMemoryStatusRequest(), timeout=10)
        self.assertEqual(caught.exception.code(), self.grpc.StatusCode.UNIMPLEMENTED)

    def test_standard_health_service_reports_serving(self):
        check = self.channel.unary_unary("/grpc.health.v1.Health/Check",
                                         request_serializer=lambda b: b,
                                         response_deserializer=lambda b: b)
        # HealthCheckRequest{service=""} is empty; HealthCheckResponse{status=1 (SERVING)}.
        reply = check(b"", timeout=10)
        self.assertEqual(dict((n, v) for n, _, v in read_fields(reply)).get(1), 1)

    def test_wire_format_matches_published_tag_numbers(self):
        meta = self.metadata(ARGS.add_sub_model)
        request = field_bytes(1, ARGS.add_sub_model.encode()) + field_bytes(3, b"wire")
        raws, values = [], []
        for k, tensor in enumerate(meta.inputs):
            shape = concrete_shape(tensor.shape)
            data = [(i + 2) * (k + 1) for i in range(count(shape))]
            values.append(data)
            packed_shape = b"".join(varint(d) for d in shape)
            tensor_bytes = (field_bytes(1, tensor.name.encode()) +
                            field_bytes(2, tensor.datatype.encode()) + field_bytes(3, packed_shape))
            request += field_bytes(5, tensor_bytes)  # ModelInferRequest.inputs = 5
            raws.append(pack(tensor.datatype, data))
        for raw in raws:
            request += field_bytes(7, raw)  # ModelInferRequest.raw_input_contents = 7
        infer = self.channel.unary_unary("/inference.GRPCInferenceService/ModelInfer",
                                         request_serializer=lambda b: b,
                                         response_deserializer=lambda b: b)
        reply = infer(request, timeout=10)
        fields = list(read_fields(reply))
        get = lambda n: [v for number, _, v in fields if number == n]
        self.assertEqual(get(1), [ARGS.add_sub_model.encode()])  # model_name = 1
        self.assertEqual(get(3), [b"wire"])  # id = 3
        names = [dict((n, v) for n, _, v in read_fields(o))[1].decode() for o in get(5)]
        raw_outputs = dict(zip(names, get(6)))  # outputs = 5, raw_output_contents = 6
        datatype = meta.inputs[0].datatype
        self.assertEqual(unpack(datatype, raw_outputs["OUTPUT0"]),
                         [x + y for x, y in zip(*values)])


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grpc-port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--identity-model", default="identity")
    parser.add_argument("--add-sub-model", default="add_sub")
    ARGS, rest = parser.parse_known_args()
    with tempfile.TemporaryDirectory(prefix="brigade-grpc-stubs-") as out_dir:
        generate_stubs(out_dir)
        program = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
