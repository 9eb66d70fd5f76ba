# Helpers that every module uses, so module CMakeLists stay a few lines long.
include(GoogleTest)

# Warnings for Shoal's own code (never applied to third-party headers: those are SYSTEM).
add_library(shoal_warnings INTERFACE)
target_compile_options(shoal_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wimplicit-fallthrough -Wformat=2)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  target_compile_options(shoal_warnings INTERFACE -Wthread-safety)
endif()
if(SHOAL_WERROR)
  target_compile_options(shoal_warnings INTERFACE -Werror)
endif()

# shoal_library(NAME SOURCES ... DEPS ...): a module's static library `shoal_<NAME>` (NAME must be
# in SHOAL_LAYERS, and every shoal_* in DEPS below it),
# with src/ as the include root (`#include "base/status.h"`).
function(shoal_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  # The layer rule (SHOAL_LAYERS, src/CMakeLists.txt): a module links only modules below it.
  list(FIND SHOAL_LAYERS ${name} own)
  if(own EQUAL -1)
    message(FATAL_ERROR "shoal_${name}: module ${name} is not in SHOAL_LAYERS (src/CMakeLists.txt)")
  endif()
  foreach(dep ${ARG_DEPS})
    if(dep MATCHES "^shoal_(.+)$")
      list(FIND SHOAL_LAYERS ${CMAKE_MATCH_1} below)
      if(below EQUAL -1 OR NOT below LESS own)
        message(FATAL_ERROR "shoal_${name} may not depend on ${dep}: ${CMAKE_MATCH_1} is not "
                            "below ${name} in SHOAL_LAYERS (src/CMakeLists.txt)")
      endif()
    endif()
  endforeach()
  add_library(shoal_${name} STATIC ${ARG_SOURCES})
  target_include_directories(shoal_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(shoal_${name} PUBLIC ${ARG_DEPS} PRIVATE shoal_warnings)
endfunction()

# shoal_test(NAME SOURCES ... DEPS ... LABELS unit|integration|slow [TIMEOUT s]): one gtest
# executable; each TEST becomes a CTest test carrying LABELS.
function(shoal_test name)
  if(SHOAL_FUZZ)
    return()
  endif()
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main shoal_warnings)
  gtest_discover_tests(${name}
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
    DISCOVERY_TIMEOUT 60)
endfunction()

# Registers the tests of `name` (already made by shoal_test) a second time, as `<test>.auth`
# with SHOAL_TEST_MODE=auth and the label `integration-auth` (`-L auth` runs them alone): the
# CLI fixture then brings the mesh up with `--auth`, so one suite proves itself in both modes.
function(shoal_test_in_auth_mode name)
  if(SHOAL_FUZZ)
    return()
  endif()
  cmake_parse_arguments(ARG "" "TIMEOUT" "" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  gtest_discover_tests(${name}
    TEST_SUFFIX .auth
    PROPERTIES LABELS integration-auth TIMEOUT ${ARG_TIMEOUT} ENVIRONMENT "SHOAL_TEST_MODE=auth"
    DISCOVERY_TIMEOUT 60)
endfunction()
