# Compiler flags, sanitizers and the ccache launcher shared by every target.

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_CXX_COMPILER_LAUNCHER "${CCACHE_PROGRAM}")
  set(CMAKE_C_COMPILER_LAUNCHER "${CCACHE_PROGRAM}")
endif()

set(ARCHIL_SANITIZE "" CACHE STRING "Sanitizers to build with, e.g. address,undefined or thread")

add_compile_options(-Wall -Wextra -Wno-unused-parameter -fno-omit-frame-pointer)
if(ARCHIL_SANITIZE)
  add_compile_options(-fsanitize=${ARCHIL_SANITIZE} -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=${ARCHIL_SANITIZE})
endif()
# The fuzz preset instruments every library for coverage (not only the fuzz targets' own files),
# so libFuzzer is guided by the decoders it exercises; only the fuzz targets link libFuzzer itself
# (fuzz/CMakeLists.txt), the rest gets the sanitizers' weak coverage hooks.
option(ARCHIL_FUZZ "Build libFuzzer targets (needs clang)" OFF)
if(ARCHIL_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

execute_process(
  COMMAND git describe --always --dirty --abbrev=12
  WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}"
  OUTPUT_VARIABLE ARCHIL_GIT_REVISION
  OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET)
if(NOT ARCHIL_GIT_REVISION)
  set(ARCHIL_GIT_REVISION "unknown")
endif()
