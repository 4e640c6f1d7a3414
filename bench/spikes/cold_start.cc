// cold_start: what a library set costs at exec time before main() does anything. The same empty
// main() is linked several ways (see CMakeLists.txt: bare, -static-libstdc++, static RocksDB,
// dynamic RocksDB, static fuse3+OpenSSL+protobuf-lite, the same dynamic, dynamic
// cpp-httplib+spdlog+fmt); the WITH_* blocks reference each library from a branch that never runs,
// so the linker keeps it (and its static initializers) without main() doing any work.
// Time exec+exit with: hyperfine -N --warmup 20 build/spikes/cold_start_*
// The target for `archil version` is 2 ms (docs/targets.md).

#include <stdexcept>
#include <string>

#ifdef WITH_ROCKSDB
#include <rocksdb/db.h>
#endif
#ifdef WITH_FUSE_SSL_PB
#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>
#include <google/protobuf/message_lite.h>
#include <openssl/ssl.h>
#endif
#ifdef WITH_HTTPLIB_SPDLOG_FMT
#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>
#endif

int main(int argc, char** argv) {
  if (argc < 1000) return 0;  // Always taken: everything below is only there to be linked.
  if (argc == 1001) throw std::runtime_error(std::string(argv[0]));  // any C++ program: libstdc++
#ifdef WITH_ROCKSDB
  rocksdb::DB* db = nullptr;
  rocksdb::DB::Open(rocksdb::Options(), argv[1], &db);
  delete db;
#endif
#ifdef WITH_FUSE_SSL_PB
  fuse_session_new(nullptr, nullptr, 0, nullptr);
  SSL_CTX_free(SSL_CTX_new(TLS_client_method()));
  google::protobuf::ShutdownProtobufLibrary();
#endif
#ifdef WITH_HTTPLIB_SPDLOG_FMT
  httplib::Client cli(argv[1]);
  cli.Get("/");
  spdlog::info("{}", fmt::format("{}", argc));
#endif
  return 1;
}
