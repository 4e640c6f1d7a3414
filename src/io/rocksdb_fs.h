// A rocksdb::FileSystem over an archil::io::Env, so that every file RocksDB touches (WAL,
// MANIFEST, CURRENT, SSTs, OPTIONS, LOCK, LOG) goes through the seam, and a SimEnv power loss
// reaches all of them.
//
// Mapping: writable files append at their size via File::Pwrite; Sync and Fsync are File::Sync;
// an FSDirectory's Fsync is Env::SyncDir; RenameFile is Env::Rename. Errors keep their errno's
// meaning, as in RocksDB's own PosixFileSystem: ENOSPC -> IOStatus::NoSpace (retryable),
// ENOENT -> IOStatus::PathNotFound (FileExists, and GetChildren of a missing directory: NotFound),
// anything else -> IOStatus::IOError. Direct I/O, memory maps and async reads are not supported.
// The info log (NewLogger) is written to the Env as well, never synced.
//
// Thread-safety: as the Env. REQUIRES: the Env outlives the FileSystem and everything it returns.
#pragma once

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <memory>
#include <string>

#include "io/env.h"

namespace archil::io {

// `test_dir` is what GetTestDirectory reports.
std::shared_ptr<rocksdb::FileSystem> NewRocksFileSystem(Env* env, std::string test_dir = "/tmp");

struct RocksEnvOptions {
  std::string test_dir = "/tmp";  // what GetTestDirectory reports
  // Caps every sleep through the env's clock, in microseconds; -1: no cap. RocksDB sleeps one
  // second after each failed background flush or compaction, which after a simulated power cut
  // stalls closing the dead DB; crash tests set 0.
  int max_sleep_micros = -1;
};

// A rocksdb::Env for Options::env: RocksDB's default threads and clock, file I/O through `env`.
// REQUIRES: it outlives every DB opened with it.
std::unique_ptr<rocksdb::Env> NewRocksEnv(Env* env, const RocksEnvOptions& options = {});

// The IOStatus for an io Status (exposed for tests).
rocksdb::IOStatus ToIOStatus(const Status& s);

}  // namespace archil::io
