# RAGD_FUZZ: builds the libFuzzer targets of tests/fuzz/ (clang only). Every
# ragd library is compiled with coverage instrumentation for the fuzzer
# (-fsanitize=fuzzer-no-link) and AddressSanitizer + UndefinedBehaviorSanitizer;
# the targets alone link libFuzzer's main (-fsanitize=fuzzer). Third-party
# libraries (poppler, gumbo, SQLite, ...) stay uninstrumented: their crashes
# are still caught, but the fuzzer sees no coverage inside them.
# `make fuzz SECONDS=N` configures build-fuzz/ this way and runs every target.
if(NOT RAGD_FUZZ)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "RAGD_FUZZ=ON needs clang (libFuzzer): configure with "
                      "-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang")
endif()
# Undefined behaviour aborts, so that the fuzzer records it as a crash.
set(RAGD_FUZZ_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
add_compile_options(-fsanitize=fuzzer-no-link ${RAGD_FUZZ_SANITIZERS})
add_link_options(${RAGD_FUZZ_SANITIZERS})
# Line tables for the sanitizers' stack traces, without full debug info (the
# CI build of the instrumented libraries is part of `make test`).
add_compile_options(-gline-tables-only)
# Some sources silence GCC-only warnings by name.
add_compile_options(-Wno-unknown-warning-option)
