// FaultProxy: a TCP proxy on loopback between disk clients and a disk server that breaks the
// connection at random, frame by frame: it cuts a connection before a request reaches the
// server (the request is lost), just after (its reply is lost), or before a reply reaches the
// client; it delays frames; and it sends a request a second time under another request id (the
// retry of an applied request: the server must answer it from its reply cache, and the proxy
// swallows that second answer). A client must come through with every operation applied
// exactly once. It can also garble every reply to one request type.
//
// Thread-safety: the proxy runs its own threads; counts() may be read at any time.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "net/socket.h"

namespace archil::testing {

struct FaultOptions {
  double cut_before_request = 0.01;
  double cut_after_request = 0.02;
  double cut_before_reply = 0.01;
  double duplicate_request = 0.03;
  double delay = 0.05;
  int max_delay_ms = 3;
  // Every reply to a request of this type (0: none) reaches the client with a wrong CRC: a
  // server whose answers to it cannot be read.
  uint16_t garble_replies_to = 0;
  uint64_t seed = 1;
};

struct FaultCounts {
  std::atomic<uint64_t> cuts{0};
  std::atomic<uint64_t> duplicates{0};
  std::atomic<uint64_t> delays{0};
  std::atomic<uint64_t> garbled{0};
  std::atomic<uint64_t> connections{0};  // accepted from clients
};

class FaultProxy {
 public:
  FaultProxy(std::string upstream, FaultOptions options);
  ~FaultProxy();
  const std::string& address() const { return address_; }
  const FaultCounts& counts() const { return counts_; }
  // Stops faulting (the end of a test checks the state through a quiet path).
  void Quiet() { quiet_ = true; }

 private:
  struct Link;
  void AcceptLoop();
  void Pump(const std::shared_ptr<Link>& link, bool to_server);
  bool Roll(double p);
  int DelayUs();

  const std::string upstream_;
  const FaultOptions options_;
  std::string address_;
  net::Fd listener_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> quiet_{false};
  FaultCounts counts_;
  std::mutex rng_mu_;
  std::mt19937_64 rng_;
  std::mutex links_mu_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace archil::testing
