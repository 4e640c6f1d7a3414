// grep_bench: the engine's grep (src/search/grep.h over Engine::OpenSnapshot) on a tree of text
// files, for bench/grep.sh, which runs it beside `grep -r` on a local copy of the same tree.
//
//   grep_bench --make-tree DIR [--files N] [--file-kib K]
//       writes N text files of about K KiB (lines of words; one line in 20,000 holds "zyzzyva",
//       one in 5,000 a date such as 2026-12-06) under DIR/dNNN/, deterministic, and exits
//   grep_bench --dir DIR --tree TREE [--pattern P]... [--concurrency C] [--runs R]
//       loads TREE into a disk of an engine in DIR (not synced per call: the load is not what is
//       measured), then for each pattern runs the grep R times on a snapshot view and prints
//       "engine grep P: N MiB/s" (the median run's bytes of the tree per second) and a '#' line
//       with the files scanned, the matches and the stop reason
//   grep_bench --dir DIR --many-files N
//       makes a disk of N small files in directories of 1,000 and prints how long one grep with
//       the API's defaults (30 s budget, 1,000 results) takes over all of it, and its stop reason
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "io/posix_env.h"
#include "search/grep.h"

namespace archil {
namespace {

using engine::DiskNo;
using posix::kRootIno;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "grep_bench: %s\n", what.c_str());
  std::exit(1);
}

template <typename T>
T Take(Result<T> r, const std::string& what) {
  if (!r.ok()) Die(what + ": " + r.status().ToString());
  return std::move(r).value();
}

void MakeTree(const std::string& dir, int files, int file_kib) {
  std::mt19937_64 rng(42);
  std::vector<std::string> words;
  for (int i = 0; i < 1000; ++i) {
    std::string w;
    const int len = 3 + static_cast<int>(rng() % 8);
    for (int j = 0; j < len; ++j) w.push_back(static_cast<char>('a' + rng() % 26));
    words.push_back(w);
  }
  for (int f = 0; f < files; ++f) {
    const std::string sub = dir + "/d" + std::to_string(f / 100);
    std::filesystem::create_directories(sub);
    std::string text;
    while (text.size() < static_cast<size_t>(file_kib) * 1024) {
      const uint64_t r = rng();
      size_t line_end = text.size() + 50 + r % 50;
      if (r % 20000 == 0) text += "zyzzyva ";
      if (r % 5000 == 1) text += "2026-12-" + std::to_string(10 + r % 20) + " ";
      while (text.size() < line_end) text += words[rng() % words.size()] + " ";
      text.back() = '\n';
    }
    std::ofstream(sub + "/f" + std::to_string(f) + ".txt") << text;
  }
}

std::unique_ptr<engine::Engine> OpenEngine(const std::string& dir) {
  engine::EngineOptions o;
  o.env = io::PosixEnv();
  o.dir = dir;
  o.clock = &SystemClock::Instance();
  o.sync = false;
  return Take(engine::Engine::Open(o), "open the engine");
}

uint64_t Load(posix::FileSystem* fs, posix::Ino parent, const std::filesystem::path& from) {
  uint64_t bytes = 0;
  for (const auto& e : std::filesystem::directory_iterator(from)) {
    const std::string name = e.path().filename();
    if (e.is_directory()) {
      posix::Ino d = Take(fs->Mkdir(parent, name, 0755, {}), "mkdir " + name).ino;
      bytes += Load(fs, d, e.path());
    } else if (e.is_regular_file()) {
      posix::Ino f = Take(fs->Mknod(parent, name, S_IFREG | 0644, 0, {}), "create " + name).ino;
      std::ifstream in(e.path(), std::ios::binary);
      std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      for (size_t off = 0; off < data.size(); off += 1 << 20) {
        Take(fs->Write(f, off, std::string_view(data).substr(off, 1 << 20)), "write " + name);
      }
      bytes += data.size();
    }
  }
  return bytes;
}

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

int Run(int argc, char** argv) {
  std::string make_tree, dir, tree;
  std::vector<std::string> patterns;
  int files = 10000, file_kib = 105, concurrency = 4, runs = 3;
  long many_files = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--make-tree")
      make_tree = value();
    else if (a == "--files")
      files = std::stoi(value());
    else if (a == "--file-kib")
      file_kib = std::stoi(value());
    else if (a == "--dir")
      dir = value();
    else if (a == "--tree")
      tree = value();
    else if (a == "--pattern")
      patterns.push_back(value());
    else if (a == "--concurrency")
      concurrency = std::stoi(value());
    else if (a == "--runs")
      runs = std::stoi(value());
    else if (a == "--many-files")
      many_files = std::stol(value());
    else
      Die("unknown argument " + a + " (see the comment at the top of bench/grep_bench.cc)");
  }
  if (!make_tree.empty()) {
    MakeTree(make_tree, files, file_kib);
    return 0;
  }
  if (dir.empty()) Die("--dir is required");
  std::unique_ptr<engine::Engine> engine = OpenEngine(dir);
  if (Status made = engine->CreateDisk(DiskNo(1), {}); !made.ok()) {
    Die("create the disk: " + made.ToString());
  }
  posix::FileSystem* fs = Take(engine->Disk(DiskNo(1)), "the disk");
  search::GrepRequest req;
  req.recursive = true;
  if (many_files > 0) {
    auto start = std::chrono::steady_clock::now();
    posix::Ino d;
    for (long i = 0; i < many_files; ++i) {
      if (i % 1000 == 0) {
        d = Take(fs->Mkdir(kRootIno, "d" + std::to_string(i / 1000), 0755, {}), "mkdir").ino;
      }
      posix::Ino f =
          Take(fs->Mknod(d, "f" + std::to_string(i), S_IFREG | 0644, 0, {}), "create").ino;
      Take(fs->Write(f, 0, "a small file " + std::to_string(i) + "\n"), "write");
    }
    std::printf("# %ld files made in %.1f s\n", many_files,
                Seconds(start, std::chrono::steady_clock::now()));
    req.pattern = "no such text anywhere";
    auto view = Take(engine->OpenSnapshot(DiskNo(1)), "snapshot");
    auto t0 = std::chrono::steady_clock::now();
    search::GrepResult r = Take(search::Grep(view.get(), req, &SystemClock::Instance()), "grep");
    const double s = Seconds(t0, std::chrono::steady_clock::now());
    std::printf("# engine grep %ld files: %llu files scanned, stopped: %s\n", many_files,
                static_cast<unsigned long long>(r.files_scanned),
                std::string(search::StopReasonName(r.stopped)).c_str());
    std::printf("engine grep %ld files: p50 %.1f ms, p95 %.1f ms\n", many_files, s * 1000,
                s * 1000);
    return 0;
  }
  if (tree.empty()) Die("--tree or --many-files is required");
  auto t0 = std::chrono::steady_clock::now();
  const uint64_t bytes = Load(fs, kRootIno, tree);
  std::printf("# loaded %.1f MiB from %s in %.1f s\n", bytes / 1048576.0, tree.c_str(),
              Seconds(t0, std::chrono::steady_clock::now()));
  req.concurrency = concurrency;
  req.max_results = search::kMaxResults;
  req.max_duration_ms = 600'000;
  for (const std::string& p : patterns) {
    req.pattern = p;
    std::vector<double> secs;
    search::GrepResult last;
    for (int i = 0; i < runs; ++i) {
      auto view = Take(engine->OpenSnapshot(DiskNo(1)), "snapshot");
      auto start = std::chrono::steady_clock::now();
      last = Take(search::Grep(view.get(), req, &SystemClock::Instance()), "grep " + p);
      secs.push_back(Seconds(start, std::chrono::steady_clock::now()));
    }
    std::sort(secs.begin(), secs.end());
    const double median = secs[secs.size() / 2];
    std::printf("# engine grep %s: %llu files, %zu matches, stopped: %s, runs %.2f..%.2f s\n",
                p.c_str(), static_cast<unsigned long long>(last.files_scanned), last.matches.size(),
                std::string(search::StopReasonName(last.stopped)).c_str(), secs.front(),
                secs.back());
    std::printf("engine grep %s: %.0f MiB/s\n", p.c_str(), bytes / 1048576.0 / median);
  }
  return 0;
}

}  // namespace
}  // namespace archil

int main(int argc, char** argv) { return archil::Run(argc, argv); }
