# Shared compile settings for every drivelab target.
add_library(drivelab_options INTERFACE)
add_library(drivelab::options ALIAS drivelab_options)
target_compile_options(drivelab_options INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Woverloaded-virtual -Wnull-dereference -Wformat=2)
# GCC 12 false positives inside libstdc++ headers, silenced for GCC 12 only, one warning each with
# its GCC bug; every other warning stays on for our code.
#  -Wrestrict: std::string assignment/append of a short literal at -O2 reports memcpy "accessing
#   9223372036854775810 or more bytes ... may overlap" in bits/char_traits.h (GCC PR 105329,
#   "Bogus restrict warning when assigning 1-char string literal to std::string", a GCC 12
#   regression). Seen in the Release build (config/src/text.cpp).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(drivelab_options INTERFACE -Wno-restrict)
endif()
if(DRIVELAB_WERROR)
  target_compile_options(drivelab_options INTERFACE -Werror)
endif()
target_compile_definitions(drivelab_options INTERFACE _FILE_OFFSET_BITS=64)
if(DRIVELAB_SANITIZE)
  target_compile_options(drivelab_options INTERFACE
    -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
    # -O1 -g1 (after the build type's -O2 -g, so they win): the optimisation level AddressSanitizer
    # recommends, with line tables for its stack traces. Compiles 2.5x faster than -O2 -g on the
    # nlohmann-json-heavy sources, which keeps the whole CI run well under its 40-minute limit.
    -O1 -g1)
  target_link_options(drivelab_options INTERFACE -fsanitize=address,undefined)
endif()

# drivelab_component(NAME SOURCES ... DEPS ...): one static library per component,
# public headers in NAME/include/drivelab/NAME/, alias drivelab::NAME.
function(drivelab_component name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(drivelab_${name} STATIC ${ARG_SOURCES})
  add_library(drivelab::${name} ALIAS drivelab_${name})
  target_include_directories(drivelab_${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(drivelab_${name} PUBLIC drivelab::options ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
endfunction()

# drivelab_test(NAME SOURCES ... DEPS ... [LABELS ...] [FIXTURES ...]): a GoogleTest executable
# registered with ctest. FIXTURES db_services makes ctest start the real PostgreSQL and MariaDB
# servers first (tests/services/); the tests find them through tests/support/services.hpp.
function(drivelab_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS;FIXTURES" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE drivelab::options ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    DRIVELAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}" DRIVELAB_BINARY_DIR="${PROJECT_BINARY_DIR}")
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  # Sanitizer build: LeakSanitizer ignores leaks inside the third-party libraries listed in
  # tests/lsan.supp (each entry documented there).
  set(env "")
  if(DRIVELAB_SANITIZE)
    list(APPEND env ENVIRONMENT "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/lsan.supp:print_suppressions=0")
  endif()
  # Every final record and journal a test writes is kept (results/validate.hpp) and validated
  # against the schema by the cleanup test of the fixture kept_records (tests/CMakeLists.txt),
  # which is also a cleanup of the fixtures given here (gtest_discover_tests loses a list in
  # PROPERTIES, so each test names one fixture, and ENVIRONMENT_MODIFICATION is a property apart).
  set(fixtures ${ARG_FIXTURES})
  if(DRIVELAB_KEPT_RECORDS_DIR)
    list(APPEND env ENVIRONMENT_MODIFICATION "DRIVELAB_KEEP_RECORDS_IN=set:${DRIVELAB_KEPT_RECORDS_DIR}")
    if(NOT fixtures)
      set(fixtures kept_records)
    endif()
  endif()
  if(fixtures)
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
      PROPERTIES LABELS "${ARG_LABELS}" FIXTURES_REQUIRED "${fixtures}" ${env})
  else()
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${ARG_LABELS}" ${env})
  endif()
endfunction()
