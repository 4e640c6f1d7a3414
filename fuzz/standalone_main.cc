// Runs a libFuzzer target without libFuzzer, so every CI build exercises the fuzz targets:
// each file given on the command line is fed as is, then --iterations mutations of them (byte
// flips, inserts, deletes, splices) from a printed seed: --seed N, else ARCHIL_TEST_SEED, else a
// fixed default, so that every run is reproducible.
//
//   <target>_regress [--iterations N] [--seed S] corpus files...
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  long iterations = 10000;
  unsigned seed = 301;
  if (const char* env = std::getenv("ARCHIL_TEST_SEED"); env != nullptr && *env != '\0') {
    seed = static_cast<unsigned>(std::strtoul(env, nullptr, 10));
  }
  std::vector<std::string> corpus;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iterations") && i + 1 < argc) {
      iterations = std::strtol(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) {
      seed = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    } else {
      std::ifstream in(argv[i], std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      corpus.push_back(ss.str());
    }
  }
  if (corpus.empty()) corpus.emplace_back();
  std::printf("seed %u, %zu corpus inputs, %ld mutations\n", seed, corpus.size(), iterations);
  for (const std::string& c : corpus) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(c.data()), c.size());
  }
  std::mt19937 rng(seed);
  for (long i = 0; i < iterations; ++i) {
    std::string s = corpus[rng() % corpus.size()];
    int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
      switch (rng() % 4) {
        case 0:
          if (!s.empty()) s[pos % s.size()] = static_cast<char>(rng());
          break;
        case 1:
          if (!s.empty()) s.erase(pos % s.size(), 1 + rng() % 8);
          break;
        case 2:
          s.insert(pos, 1 + rng() % 4, static_cast<char>(rng()));
          break;
        default: {
          const std::string& other = corpus[rng() % corpus.size()];
          if (!other.empty()) {
            size_t from = rng() % other.size();
            s.insert(pos, other.substr(from, 1 + rng() % 32));
          }
        }
      }
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
  std::printf("ok\n");
  return 0;
}
