# Small helpers so each component's CMakeLists.txt reads as a list of targets.
#
#   brigade_library(NAME core SRCS a.cc b.cc DEPS absl::status)
#   brigade_test(NAME core_tensor_test SRCS tensor_test.cc DEPS brigade_core LABELS unit)
#
# Libraries are static and named brigade_<NAME>; include paths are rooted at src/ so that
# headers are included as "core/tensor.h".

function(brigade_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(brigade_${ARG_NAME} STATIC ${ARG_SRCS})
  target_include_directories(brigade_${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR}/src
                                                         ${BRIGADE_GENERATED_DIR})
  target_link_libraries(brigade_${ARG_NAME} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
endfunction()

function(brigade_test)
  cmake_parse_arguments(ARG "" "NAME;TIMEOUT" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main)
  add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  set_tests_properties(${ARG_NAME} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT})
endfunction()
