#ifndef BRIGADE_ENGINE_MODEL_H_
#define BRIGADE_ENGINE_MODEL_H_

// The backend-neutral face of a loaded model version, and of the instances that execute it.
//
//   Backend::Load(options) ──► Model (weights, graph; shared, immutable)
//        Model::CreateInstance(options) ──► ModelInstance (per-thread state: buffers, primitives)
//             ModelInstance::Execute(batch inputs) ──► batch outputs
//
// Batches arrive already assembled: the scheduler concatenates requests along dimension 0, and
// slices the outputs back per request. A backend therefore sees ordinary tensors and never deals
// with requests, queues or protocols.
//
// Thread safety: Model is thread-safe (instances are created from it concurrently and it is
// shared by all of them). A ModelInstance is used by one thread at a time, by default always the
// same instance thread, so it may keep thread-local state (OpenMP thread counts, scratch arenas).
// An instance whose RunsOnAnyThread() is true keeps none: the scheduler may then lend it, still
// one caller at a time, to the thread a request arrived on (run to completion, no hand-off).
//
// Lifetime: a ModelInstance keeps whatever it needs from its Model alive itself (backends hold a
// shared_ptr to shared weights), so instances may outlive the Model object that created them.

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/data_type.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace brigade::engine {

// One input or output as the model sees it. `shape` is the full shape including the batch
// dimension when the model batches; -1 marks a dimension that varies between calls.
//
// `optional` (inputs only), Triton's `optional: true`: in ModelLoadOptions::declared_inputs the
// config lets requests omit the input; a backend whose model has no default for it (an ONNX
// initializer, a forward() argument default) refuses the load naming the input. In a Model's
// signature it says the model can run without the input, using its own default.
struct TensorSpec {
  std::string name;
  DataType dtype = DataType::kInvalid;
  Shape shape;
  bool optional = false;

  friend bool operator==(const TensorSpec&, const TensorSpec&) = default;
};

struct ModelSignature {
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
};

// What a backend needs to load one model version. Backends never read config.pbtxt themselves:
// the repository resolves the file and passes the relevant settings, so a backend can be loaded
// and tested from a bare file.
struct ModelLoadOptions {
  std::string model_name;
  int64_t version = 1;
  // The model file (e.g. <repo>/<model>/1/model.pt).
  std::string model_path;
  // Triton semantics: 0 = the model has no batch dimension; > 0 = dimension 0 is the batch and
  // at most this many rows are executed at once.
  int max_batch_size = 0;
  // Inputs/outputs the config declares, full shapes (batch dim included when batching). May be
  // empty, in which case the backend reports what the model itself declares, when it can.
  std::vector<TensorSpec> declared_inputs;
  std::vector<TensorSpec> declared_outputs;
  // The config's `parameters { key: "..." value { string_value: "..." } }` entries.
  std::map<std::string, std::string> parameters;
};

struct InstanceOptions {
  // Index of the instance within its model (for names and logs).
  int index = 0;
  // Compute threads this instance may use inside one Execute (OpenMP / oneDNN intra-op threads).
  // The scheduler chooses it so all instances together never exceed the cores.
  int intra_op_threads = 1;
};

class ModelInstance {
 public:
  virtual ~ModelInstance() = default;

  // Runs one batch. `inputs` are in signature().inputs order with concrete shapes, except that an
  // optional input the batch's requests omitted is an empty Tensor (Tensor::empty()), for which
  // the model uses its default; on success
  // `outputs` holds one tensor per signature().outputs entry, in order, each with the batch rows
  // in input order. Errors name the model and the tensor at fault; the instance stays usable.
  virtual absl::Status Execute(std::span<const Tensor> inputs, std::vector<Tensor>* outputs) = 0;

  // Whether Execute may be called from a thread other than the one that created the instance
  // (never two at once): true only when the instance sets up whatever per-thread state it needs
  // on every call, or needs none.
  virtual bool RunsOnAnyThread() const { return false; }
};

class Model {
 public:
  virtual ~Model() = default;

  // Inputs and outputs, merged from the model file and the declared specs. Stable for the life
  // of the Model.
  virtual const ModelSignature& signature() const = 0;

  // Creates one execution instance. Called once per configured instance, each on the thread
  // that will run it, so thread-affine state is created on the right thread.
  virtual absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(
      const InstanceOptions& options) = 0;
};

// Builds zero-filled inputs for `signature` with every variable dimension set to 1 and the batch
// dimension (when `batch_size` > 0) set to `batch_size`; used to warm instances up before they
// take traffic. BYTES inputs get empty strings. Fails with RESOURCE_EXHAUSTED, before allocating
// anything, when the inputs would take more than `max_bytes` together (a BYTES element counts
// its 4-byte length prefix and the std::string it is built from).
absl::StatusOr<std::vector<Tensor>> MakeWarmupInputs(const ModelSignature& signature,
                                                     int batch_size,
                                                     size_t max_bytes = kMaxTensorBytes);

}  // namespace brigade::engine

#endif  // BRIGADE_ENGINE_MODEL_H_
