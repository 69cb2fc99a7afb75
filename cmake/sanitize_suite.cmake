# The sanitizer suite: what CI builds and runs in the ASan+UBSan build (scripts/sanitize). It is
# the code that parses untrusted bytes or juggles threads and is cheap to build under clang with
# sanitizers; the engines (ONNX, oneDNN, libtorch), the servers and the end-to-end suites are left
# to the normal build. brigade_test() labels these tests `sanitize`; the target `sanitize_suite`
# builds them and the libFuzzer targets (label `fuzz`, with BRIGADE_FUZZ).
#
# Measured from a fresh clone on the 2-core machine (clang-14 -O0, ASan+UBSan, load ~2.3):
# scripts/sanitize takes 316 s, 193 s of build, 2 s of these tests and 2 x 60 s for the
# fuzzers, two at a time (three then; the fourth, content coding, fits the same two rounds). The
# largest items are the cache library (Asio), the HTTP codec and its test, and the generated gRPC
# messages; a test added here should cost seconds, not minutes.
set(BRIGADE_SANITIZE_TESTS
  # core
  core_data_type_test core_tensor_test core_parameters_test core_clock_test
  core_infer_request_test core_json_text_test core_memory_budget_test
  # the protocol's error payloads; model configs (config.pbtxt and load requests' JSON)
  protocol_test protocol_model_config_parser_test
  # the HTTP/1.1 client: response parser, raw mode, the scripted test server (threads)
  net_test
  # the HTTP and gRPC codecs (both directions), the content codings, the KServe route parser, the
  # HTTP/1.1 transport (Beast, threads) and its limits (slow and oversized peers, drain)
  protocol_http_test protocol_grpc_test frontend_http_content_coding_test
  frontend_http_kserve_common_test frontend_http_transport_test frontend_http_limits_test
  core_blocking_worker_test
  # access control: the token file, Authorization and Triton's restriction headers
  frontend_auth_test
  # TLS: PEM files parsed with OpenSSL, and the HTTP transport over Asio SSL (handshakes, records,
  # rotation, shutdown)
  frontend_tls_test frontend_http_tls_test
  # the response cache: in process, and against a real redis-server (threads, Asio)
  cache_key_test cache_cached_value_test cache_memory_cache_test cache_circuit_breaker_test
  cache_request_coalescer_test cache_invalidation_test cache_response_cache_test
  cache_redis_test
  # the scheduler (fake clocks)
  scheduler_batch_queue_test scheduler_batch_policy_test scheduler_latency_profile_test
  scheduler_response_orderer_test scheduler_scheduler_test scheduler_run_inline_test
  # statistics, metrics, tracing, the OTLP exporter (net's client, worker thread)
  telemetry_model_stats_test telemetry_metrics_test telemetry_request_metrics_test
  telemetry_trace_context_test telemetry_tracing_test telemetry_access_log_test
  telemetry_otlp_exporter_test
  # ensembles and routers: configs compiled into graphs and policies, runs over a fake runner
  route_ensemble_plan_test route_ensemble_test route_routing_policy_test route_cascade_test
  route_routing_metrics_test route_control_step_test route_ensemble_switch_test
  route_cascade_rows_test route_row_assembly_test route_ensemble_rows_test
  # image decoding (untrusted bytes through libjpeg-turbo and libspng), resampling, post-processing
  process_jpeg_decoder_test process_png_decoder_test process_image_decoder_test
  process_resize_test process_normalize_test process_image_preprocess_test process_classify_test
  process_nms_test
  # the WordPiece tokenizer (untrusted text through ICU); not the SentencePiece one, whose module
  # is opened with RTLD_DEEPBIND, which the sanitizer runtimes refuse
  process_wordpiece_tokenizer_test)
# A build without Redis has no Redis tier to test (BRIGADE_WITH_REDIS, src/cache/CMakeLists.txt).
if(NOT BRIGADE_WITH_REDIS)
  list(REMOVE_ITEM BRIGADE_SANITIZE_TESTS cache_redis_test)
endif()

# The libraries the fuzzers exercise, compiled with libFuzzer's coverage instrumentation (the rest
# is left out: it costs build time and only adds noise to the fuzzers' coverage signal).
set(BRIGADE_FUZZ_COVERED_LIBRARIES core cache protocol_http protocol_grpc http_content_coding
                                    process model_config engine_onnx)

set(BRIGADE_FUZZ_TARGETS cache_cached_value_fuzz protocol_grpc_infer_messages_fuzz
                         protocol_http_infer_request_json_fuzz frontend_http_content_coding_fuzz
                         process_jpeg_decoder_fuzz process_png_decoder_fuzz
                         process_wordpiece_tokenizer_fuzz protocol_model_config_fuzz
                         protocol_http_binary_body_fuzz)
# The ONNX loader's fuzzer is the one reason the sanitizer build compiles the ONNX engine (about
# 70 files; the fuzzer links all of them, as the loader checks ops against the kernel registry).
if(BRIGADE_WITH_ONNX)
  list(APPEND BRIGADE_FUZZ_TARGETS onnx_model_loader_fuzz)
endif()

if(NOT BRIGADE_SANITIZE)
  return()
endif()
add_custom_target(sanitize_suite)
add_dependencies(sanitize_suite ${BRIGADE_SANITIZE_TESTS})
if(BRIGADE_FUZZ)
  add_dependencies(sanitize_suite ${BRIGADE_FUZZ_TARGETS} fuzz_write_seeds)
endif()
