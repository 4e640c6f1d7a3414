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

execute_process(
  COMMAND git describe --always --dirty --abbrev=12
  WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}"
  OUTPUT_VARIABLE ARCHIL_GIT_REVISION
  OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET)
if(NOT ARCHIL_GIT_REVISION)
  set(ARCHIL_GIT_REVISION "unknown")
endif()
