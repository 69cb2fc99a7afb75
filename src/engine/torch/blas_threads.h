#ifndef BRIGADE_ENGINE_TORCH_BLAS_THREADS_H_
#define BRIGADE_ENGINE_TORCH_BLAS_THREADS_H_

// Keeps OpenBLAS's own thread pool inside the scheduler's thread budget.
//
// Debian's libtorch calls whatever libblas.so.3 the alternatives system selects. With OpenBLAS's
// pthread build (libopenblas0-pthread, the default alternative) every sgemm above a small size
// runs on OpenBLAS's private pool, one thread per core, whatever at::set_num_threads says: an
// instance given one intra-op thread then computes on every core, and its pool's spinning
// workers fight the other instances and libtorch's OpenMP team. Measured on the 2-core dev
// machine this made batched Linear layers several times slower under load.
//
// LimitOpenBlasThreadsOnce() therefore sets that pool to one thread (the calling thread does the
// work, inside its instance's budget), unless the environment sized it (OPENBLAS_NUM_THREADS,
// GOTO_NUM_THREADS or OMP_NUM_THREADS), which then wins. It leaves OpenBLAS's OpenMP build
// (libopenblas0-openmp) alone: that one already follows the caller's OpenMP thread count, i.e.
// the instance's intra_op_threads, which is why scripts/setup should select it. The reference
// BLAS has no threads. Found at run time (dlsym), so nothing links against OpenBLAS.
//
// Thread-safe (the first call does the work, later calls return its result).

#include <string>

namespace brigade::engine {

// What was found and done, for logs: e.g. "OpenBLAS (pthreads): pool limited to 1 thread".
const std::string& LimitOpenBlasThreadsOnce();

}  // namespace brigade::engine

#endif  // BRIGADE_ENGINE_TORCH_BLAS_THREADS_H_
