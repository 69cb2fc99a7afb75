#ifndef BRIGADE_ENGINE_TORCH_TORCH_ERROR_H_
#define BRIGADE_ENGINE_TORCH_TORCH_ERROR_H_

// Text for libtorch exceptions caught at a call site. c10::Error::what() appends a C++ backtrace
// of libtorch's own frames, which is noise to someone reading a model error; this keeps the
// message (and, for TorchScript runtime errors, the TorchScript traceback, which names the line
// of the model that failed), led by its last line, which for TorchScript runtime errors is the
// error the model raised. Thread-safe; never throws.

#include <exception>
#include <string>

namespace brigade::engine {

std::string DescribeTorchException(const std::exception& e);

}  // namespace brigade::engine

#endif  // BRIGADE_ENGINE_TORCH_TORCH_ERROR_H_
