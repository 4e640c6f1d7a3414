// archil-s3-fake: runs an S3Fake until SIGTERM or SIGINT, for bench scripts. Prints
// "listening on http://HOST:PORT" as its first stdout line.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "s3_fake.h"

namespace {

void Usage() {
  std::cerr << "usage: archil-s3-fake [--listen HOST:PORT] [--access-key K] [--secret-key S]\n"
               "  [--region R] [--bucket NAME]... [--first-byte-latency-ms N]\n"
               "  [--bandwidth-mbps N] [--no-conditions]\n";
}

bool ParseUint(const std::string& s, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  *out = std::stoull(s);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  archil::testing::S3FakeOptions opts;
  bool buckets_given = false;
  uint64_t latency_ms = 0, bandwidth_mbps = 0;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (flag == "--no-conditions") {
      opts.enforce_conditions = false;
    } else if (flag == "--help" || flag == "-h") {
      Usage();
      return 0;
    } else if (!value(&v)) {
      Usage();
      return 2;
    } else if (flag == "--listen") {
      size_t colon = v.rfind(':');
      uint64_t port = 0;
      if (colon == std::string::npos || !ParseUint(v.substr(colon + 1), &port) || port > 65535) {
        std::cerr << "archil-s3-fake: bad --listen " << v << "\n";
        return 2;
      }
      opts.host = v.substr(0, colon);
      opts.port = static_cast<uint16_t>(port);
    } else if (flag == "--access-key") {
      opts.access_key = v;
    } else if (flag == "--secret-key") {
      opts.secret_key = v;
    } else if (flag == "--region") {
      opts.region = v;
    } else if (flag == "--bucket") {
      if (!buckets_given) opts.buckets.clear();
      buckets_given = true;
      opts.buckets.push_back(v);
    } else if (flag == "--first-byte-latency-ms") {
      if (!ParseUint(v, &latency_ms)) {
        Usage();
        return 2;
      }
    } else if (flag == "--bandwidth-mbps") {
      if (!ParseUint(v, &bandwidth_mbps)) {
        Usage();
        return 2;
      }
    } else {
      Usage();
      return 2;
    }
  }
  // Block the signals before any thread starts so that only sigwait sees them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  auto fake = archil::testing::S3Fake::Start(opts);
  if (!fake.ok()) {
    std::cerr << "archil-s3-fake: " << fake.status().ToString() << "\n";
    return 1;
  }
  (*fake)->SetFirstByteLatency(std::chrono::milliseconds(latency_ms));
  (*fake)->SetBandwidth(bandwidth_mbps * 1'000'000);
  std::printf("listening on %s\n", (*fake)->endpoint().c_str());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&set, &sig);
  return 0;
}
