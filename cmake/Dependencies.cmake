# Every third-party library, from Debian packages (scripts/setup.sh installs them).
#
# Start-up cost decides how each is linked (docs/adr/0001-binary-split.md): the `archil` client/CLI
# binary links OpenSSL statically and nothing server-side; `archil-server` links the heavy libraries
# (cpp-httplib, SQLite, later RocksDB and libcurl) as Debian ships them.

find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(nlohmann_json 3.11 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(GTest REQUIRED)

pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
# libfuse 3 (Debian's libfuse3-dev) for the mount daemon, archil-mount (docs/adr/0013).
pkg_check_modules(FUSE3 REQUIRED IMPORTED_TARGET fuse3)

# Static OpenSSL for the client binary: a dynamic libssl/libcrypto costs ~1.5 ms of loader time.
find_library(ARCHIL_LIBSSL_STATIC NAMES libssl.a REQUIRED)
find_library(ARCHIL_LIBCRYPTO_STATIC NAMES libcrypto.a REQUIRED)
add_library(archil_openssl_static INTERFACE)
target_link_libraries(archil_openssl_static INTERFACE
  ${ARCHIL_LIBSSL_STATIC} ${ARCHIL_LIBCRYPTO_STATIC} ${CMAKE_DL_LIBS} Threads::Threads)
target_include_directories(archil_openssl_static INTERFACE ${OPENSSL_INCLUDE_DIR})

# RocksDB (Debian's librocksdb-dev), for the storage engine's metadata; server side only. Linked
# statically (ADR 0001): the shared library reaches its thread-locals through __tls_get_addr, and
# its key comparator bumps a thread-local perf counter on every comparison, 16 % of the memtable
# inserts of a batch of creates (docs/measurements.md §12.15). Sanitizer and fuzz builds link the
# shared library: TSan's suppressions (cmake/tsan.supp) name it, and neither is measured.
find_path(ARCHIL_ROCKSDB_INCLUDE_DIR NAMES rocksdb/db.h REQUIRED)
add_library(RocksDB::rocksdb UNKNOWN IMPORTED)
if(ARCHIL_SANITIZE OR ARCHIL_FUZZ)
  find_library(ARCHIL_ROCKSDB_SHARED NAMES rocksdb REQUIRED)
  set(ARCHIL_ROCKSDB_LIBRARY "${ARCHIL_ROCKSDB_SHARED}")
  set(ARCHIL_ROCKSDB_DEPS Threads::Threads)
else()
  find_library(ARCHIL_ROCKSDB_STATIC NAMES librocksdb.a REQUIRED)
  set(ARCHIL_ROCKSDB_LIBRARY "${ARCHIL_ROCKSDB_STATIC}")
  # What Debian's librocksdb.so links (ldd), which the archive leaves to its user.
  set(ARCHIL_ROCKSDB_DEPS Threads::Threads gflags snappy z bz2 lz4 zstd)
endif()
set_target_properties(RocksDB::rocksdb PROPERTIES
  IMPORTED_LOCATION "${ARCHIL_ROCKSDB_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${ARCHIL_ROCKSDB_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES "${ARCHIL_ROCKSDB_DEPS}")

# protobuf-lite (Debian's libprotobuf-dev, protobuf-compiler) for the disk protocol's messages
# (src/proto/archil.proto), linked statically: the client binary links it too (ADR 0001).
find_program(ARCHIL_PROTOC protoc REQUIRED)
find_path(ARCHIL_PROTOBUF_INCLUDE_DIR NAMES google/protobuf/message_lite.h REQUIRED)
find_library(ARCHIL_PROTOBUF_LITE_STATIC NAMES libprotobuf-lite.a REQUIRED)
add_library(archil_protobuf_lite INTERFACE)
target_link_libraries(archil_protobuf_lite INTERFACE ${ARCHIL_PROTOBUF_LITE_STATIC} Threads::Threads)
target_include_directories(archil_protobuf_lite SYSTEM INTERFACE ${ARCHIL_PROTOBUF_INCLUDE_DIR})
