# Small helpers so each component's CMakeLists.txt reads as a list of targets.
#
#   brigade_library(NAME core SRCS a.cc b.cc DEPS absl::status)
#   brigade_test(NAME core_tensor_test SRCS tensor_test.cc DEPS brigade_core LABELS unit)
#
# Libraries are static and named brigade_<NAME>; include paths are rooted at src/ so that
# headers are included as "core/tensor.h" (and at the top for tools/: "tools/client/client.h").

function(brigade_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(brigade_${ARG_NAME} STATIC ${ARG_SRCS})
  target_include_directories(brigade_${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR}/src
                                                         ${BRIGADE_GENERATED_DIR})
  target_link_libraries(brigade_${ARG_NAME} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  # The tools' libraries (tools/client, tools/loadgen, tools/analyze) are included as
  # "tools/<component>/x.h", so every include says whether it reaches the server or a tool.
  if(CMAKE_CURRENT_SOURCE_DIR MATCHES "^${PROJECT_SOURCE_DIR}/tools/")
    target_include_directories(brigade_${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
  endif()
  # libFuzzer's coverage instrumentation, so the fuzzers see which branches an input reached.
  if(BRIGADE_FUZZ AND ARG_NAME IN_LIST BRIGADE_FUZZ_COVERED_LIBRARIES)
    target_compile_options(brigade_${ARG_NAME} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()

function(brigade_test)
  cmake_parse_arguments(ARG "" "NAME;TIMEOUT" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main)
  # A test's own code (assertions, fixtures, gtest's templates) gains nothing from -O3 and
  # compiles in about half the time at -O1; the libraries it tests keep the build's level.
  target_compile_options(${ARG_NAME} PRIVATE $<$<CONFIG:Release>:-O1>)
  add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(BRIGADE_SANITIZE AND ARG_NAME IN_LIST BRIGADE_SANITIZE_TESTS)
    list(APPEND ARG_LABELS sanitize)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  if(BRIGADE_TSAN AND ARG_NAME IN_LIST BRIGADE_TSAN_TESTS)
    list(APPEND ARG_LABELS tsan)
    # ThreadSanitizer's run time is several times the normal build's.
    math(EXPR ARG_TIMEOUT "${ARG_TIMEOUT} * 3")
    set_tests_properties(${ARG_NAME} PROPERTIES ENVIRONMENT "${BRIGADE_TSAN_ENVIRONMENT}")
  endif()
  set_tests_properties(${ARG_NAME} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT})
endfunction()

# A libFuzzer target (only with BRIGADE_FUZZ), registered as a CTest test labelled `fuzz` that
# fuzzes for BRIGADE_FUZZ_SECONDS from the committed seed corpus tests/fuzz/<NAME>/ through
# scripts/fuzz (see there for where new inputs and crashing inputs go).
#
#   brigade_fuzzer(NAME protocol_http_infer_request_json_fuzz SRCS infer_request_json_fuzz.cc
#                  DEPS brigade_protocol_http DICT infer_request_json_fuzz.dict)
function(brigade_fuzzer)
  cmake_parse_arguments(ARG "" "NAME;DICT" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
  target_compile_options(${ARG_NAME} PRIVATE -fsanitize=fuzzer)
  target_link_options(${ARG_NAME} PRIVATE -fsanitize=fuzzer)
  set(_args --seconds ${BRIGADE_FUZZ_SECONDS}
            --corpus ${PROJECT_SOURCE_DIR}/tests/fuzz/${ARG_NAME}
            --work ${CMAKE_BINARY_DIR}/fuzz/${ARG_NAME})
  if(ARG_DICT)
    get_filename_component(_dict ${ARG_DICT} ABSOLUTE)
    list(APPEND _args --dict ${_dict})
  endif()
  add_test(NAME ${ARG_NAME}
           COMMAND ${PROJECT_SOURCE_DIR}/scripts/fuzz ${_args} $<TARGET_FILE:${ARG_NAME}>)
  # The seeds' replay and ASan's start-up come on top of the fuzzing time.
  math(EXPR _timeout "${BRIGADE_FUZZ_SECONDS} * 2 + 120")
  set_tests_properties(${ARG_NAME} PROPERTIES LABELS fuzz TIMEOUT ${_timeout})
endfunction()

# C++ code (and, with GRPC, gRPC service code) for .proto files, rooted at src/: the file
# src/protocol/model_config.proto is imported as "protocol/model_config.proto" and its header
# included as "protocol/model_config.pb.h", both generated under BRIGADE_GENERATED_DIR.
#
#   brigade_proto_library(NAME grpc_proto PROTOS grpc_service.proto GRPC
#                         DEPS brigade_model_config_proto)
#
# (FindProtobuf's protobuf_generate puts the proto's own folder first on protoc's import path,
# which names the file "model_config.proto" and generates it at the top of the output folder, so
# an import of "protocol/model_config.proto" would define its messages a second time.)
function(brigade_proto_library)
  cmake_parse_arguments(ARG "GRPC" "NAME" "PROTOS;DEPS" ${ARGN})
  set(_generated)
  foreach(_proto ${ARG_PROTOS})
    get_filename_component(_abs ${_proto} ABSOLUTE)
    file(RELATIVE_PATH _rel ${PROJECT_SOURCE_DIR}/src ${_abs})
    string(REGEX REPLACE "\\.proto$" "" _stem ${_rel})
    set(_outs ${BRIGADE_GENERATED_DIR}/${_stem}.pb.h ${BRIGADE_GENERATED_DIR}/${_stem}.pb.cc)
    set(_args --cpp_out=${BRIGADE_GENERATED_DIR})
    set(_deps ${_abs} protobuf::protoc)
    if(ARG_GRPC)
      list(APPEND _outs ${BRIGADE_GENERATED_DIR}/${_stem}.grpc.pb.h
                        ${BRIGADE_GENERATED_DIR}/${_stem}.grpc.pb.cc)
      list(APPEND _args --grpc_out=${BRIGADE_GENERATED_DIR}
                        --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>)
      list(APPEND _deps gRPC::grpc_cpp_plugin)
    endif()
    add_custom_command(OUTPUT ${_outs}
      COMMAND protobuf::protoc ${_args} -I ${PROJECT_SOURCE_DIR}/src ${_abs}
      DEPENDS ${_deps}
      COMMENT "protoc ${_rel}"
      VERBATIM)
    list(APPEND _generated ${_outs})
  endforeach()
  add_library(brigade_${ARG_NAME} STATIC ${_generated})
  target_include_directories(brigade_${ARG_NAME} PUBLIC ${BRIGADE_GENERATED_DIR})
  target_link_libraries(brigade_${ARG_NAME} PUBLIC protobuf::libprotobuf ${ARG_DEPS})
  if(ARG_GRPC)
    target_link_libraries(brigade_${ARG_NAME} PUBLIC gRPC::grpc++)
  endif()
endfunction()
