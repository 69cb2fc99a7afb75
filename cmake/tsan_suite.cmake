# The ThreadSanitizer suite (scripts/tsan): a third build, build-tsan/, with clang-14 and
# -fsanitize=thread, of the tests of the code that hands requests between threads: the scheduler,
# the response cache, the server's request pipeline and the front ends. brigade_test() labels
# these tests `tsan`; the target `tsan_suite` builds them.
#
# absl::Mutex tells ThreadSanitizer about its locking only when abseil itself is built with
# -fsanitize=thread; Debian's libabsl is not, so against it every field guarded by an absl::Mutex
# reads as a data race (scheduler_response_orderer_test: 55 reports, all under a held lock).
# scripts/tsan therefore builds Debian's own abseil source (apt-get source abseil, the same
# version and inline namespace as libabsl-dev) with -fsanitize=thread and points this build at
# it (BRIGADE_TSAN_ABSL_PREFIX); the tests load it instead of the system's libabsl at run time.
set(BRIGADE_TSAN_TESTS
  # the scheduler: queues, batch runners (threads), response ordering
  scheduler_batch_queue_test scheduler_scheduler_test scheduler_run_inline_test
  scheduler_batch_policy_test
  scheduler_latency_profile_test scheduler_response_orderer_test scheduler_scheduler_metrics_test
  # the response cache: in process, and against a real redis-server (Asio thread)
  cache_key_test cache_cached_value_test cache_memory_cache_test cache_circuit_breaker_test
  cache_request_coalescer_test cache_invalidation_test cache_response_cache_test
  cache_metrics_test cache_redis_test
  # the request pipeline (admission to the store after the answer, on the bounded worker), the
  # InferenceServer around it, and the in-flight memory budget (charges from many threads)
  core_blocking_worker_test core_memory_budget_test pipeline_request_validator_test
  pipeline_request_pipeline_test
  server_inference_server_test
  # the HTTP front end: transport (Asio I/O threads) and KServe handler. Not the gRPC front end:
  # Debian's libgrpc is not built with TSan either, and its own internals (slice buffers, TCP
  # writes on its threads) read as races; a suppression wide enough for them (any libgrpc frame)
  # would also hide our reactors, which run under libgrpc frames. See CONTRIBUTING.md.
  frontend_request_report_test frontend_http_transport_test frontend_http_limits_test
  frontend_http_kserve_handler_test
  # ... and the transport over TLS (OpenSSL's locks are pthread's, which TSan sees)
  frontend_http_tls_test)
# A build without Redis has no Redis tier to test (BRIGADE_WITH_REDIS, src/cache/CMakeLists.txt).
if(NOT BRIGADE_WITH_REDIS)
  list(REMOVE_ITEM BRIGADE_TSAN_TESTS cache_redis_test)
endif()

if(NOT BRIGADE_TSAN)
  return()
endif()
add_custom_target(tsan_suite)
add_dependencies(tsan_suite ${BRIGADE_TSAN_TESTS})
