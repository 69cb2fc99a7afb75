#ifndef BRIGADE_FRONTEND_HTTP_KSERVE_EXTENSIONS_H_
#define BRIGADE_FRONTEND_HTTP_KSERVE_EXTENSIONS_H_

// The REST answers of two Triton extensions, kept beside KServeHttpHandler so the handler only
// routes to them: system shared memory (/v2/systemsharedmemory/...: register, unregister,
// status over a SharedMemoryRegistry) and trace settings (/v2[/models/{m}]/trace/setting over
// InferenceServer::TraceSettings). Each reads the routed request's body with the protocol's codec
// and answers at once (registration maps memory: a few system calls, no waiting).
//
// With `registry` null (the feature is off) every shared-memory endpoint answers 501 saying so.
// Thread safety: as the handler's (any io thread). `server` and `registry` are borrowed for the
// call.

#include "frontend/http/http_handler.h"
#include "frontend/http/kserve_route.h"
#include "frontend/shm/shared_memory_registry.h"
#include "server/inference_server.h"

namespace brigade::frontend {

// For kSharedMemoryStatus, kSharedMemoryRegister and kSharedMemoryUnregister.
HttpResponse SharedMemoryAnswer(const KServeRoute& route, const HttpRequest& request,
                                SharedMemoryRegistry* registry);

// For kTraceSetting: GET reads, POST changes.
HttpResponse TraceSettingAnswer(const KServeRoute& route, const HttpRequest& request,
                                InferenceServer* server);

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_KSERVE_EXTENSIONS_H_
