# Checks of the conventions in CONTRIBUTING.md that run as CTest tests (label `unit`), so
# scripts/test and CI run them with the rest: the layer order (scripts/check-layers, against the
# block in CONTRIBUTING.md) and the checker's own test on trees it writes. Both take well under a
# second. The other checks (format, thread-safety analysis, ThreadSanitizer) need other tools or
# builds and are stages of scripts/test instead.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
add_test(NAME layers_test COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/check-layers)
add_test(NAME check_layers_test
         COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/check-layers-test)
set_tests_properties(layers_test check_layers_test PROPERTIES LABELS unit TIMEOUT 60)
