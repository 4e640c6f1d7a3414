#include "fault_proxy.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "proto/frame.h"

namespace archil::testing {

namespace {
constexpr uint64_t kInjectedIdBit = uint64_t{1} << 63;  // request ids the proxy makes up
}

struct FaultProxy::Link {
  net::Fd client;
  net::Fd server;
  std::mutex send_to_server;  // the pump and the duplicator both write to the server
  std::atomic<bool> cut{false};
  std::atomic<uint64_t> next_injected{0};
  void Cut() {
    if (cut.exchange(true)) return;
    ::shutdown(client.get(), SHUT_RDWR);
    ::shutdown(server.get(), SHUT_RDWR);
  }
};

FaultProxy::FaultProxy(std::string upstream, FaultOptions options)
    : upstream_(std::move(upstream)), options_(options), rng_(options.seed) {
  listener_ = net::Listen("127.0.0.1:0").value();
  address_ = *net::LocalAddress(listener_.get());
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

FaultProxy::~FaultProxy() {
  stop_ = true;
  acceptor_.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(links_mu_);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

bool FaultProxy::Roll(double p) {
  if (quiet_) return false;
  std::lock_guard<std::mutex> lock(rng_mu_);
  return std::uniform_real_distribution<double>(0, 1)(rng_) < p;
}

int FaultProxy::DelayUs() {
  std::lock_guard<std::mutex> lock(rng_mu_);
  return std::uniform_int_distribution<int>(0, options_.max_delay_ms * 1000)(rng_);
}

void FaultProxy::AcceptLoop() {
  while (!stop_) {
    pollfd p{listener_.get(), POLLIN, 0};
    if (::poll(&p, 1, 50) != 1) continue;
    net::Fd c(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!c.valid()) continue;
    Result<net::Fd> s = net::Connect(upstream_, 1000);
    if (!s.ok()) continue;  // c closes: the client sees the server down
    ++counts_.connections;
    auto link = std::make_shared<Link>();
    link->client = std::move(c);
    link->server = std::move(*s);
    std::lock_guard<std::mutex> lock(links_mu_);
    threads_.emplace_back([this, link] { Pump(link, true); });
    threads_.emplace_back([this, link] { Pump(link, false); });
  }
}

void FaultProxy::Pump(const std::shared_ptr<Link>& link, bool to_server) {
  const int from = to_server ? link->client.get() : link->server.get();
  const int to = to_server ? link->server.get() : link->client.get();
  proto::FrameReader reader(proto::FrameLimits{1 << 20, 8 << 20});
  std::string buf(64 << 10, '\0');
  auto send = [&](const std::string& bytes) {
    iovec iov[1] = {{const_cast<char*>(bytes.data()), bytes.size()}};
    if (to_server) {
      std::lock_guard<std::mutex> lock(link->send_to_server);
      return net::SendAll(to, iov, 5000).ok();
    }
    return net::SendAll(to, iov, 5000).ok();
  };
  while (!stop_ && !link->cut) {
    pollfd p{from, POLLIN, 0};
    if (::poll(&p, 1, 50) != 1) continue;
    const ssize_t n = ::recv(from, buf.data(), buf.size(), 0);
    if (n <= 0) break;
    std::string_view bytes(buf.data(), static_cast<size_t>(n));
    while (!bytes.empty() || reader.ready()) {
      if (!reader.ready()) {
        bytes.remove_prefix(reader.Feed(bytes));
        if (reader.error()) {
          link->Cut();
          return;
        }
        continue;
      }
      proto::Frame f = reader.Take();
      std::string frame = proto::EncodeFrame(f.header, f.body, f.payload);
      if (!to_server && options_.garble_replies_to != 0 &&
          f.header.type == options_.garble_replies_to) {
        ++counts_.garbled;
        frame[28] ^= 0x5a;  // the header's CRC
      }
      if (!to_server && (f.header.request_id & kInjectedIdBit)) continue;  // the duplicate's reply
      if (Roll(options_.delay)) {
        ++counts_.delays;
        std::this_thread::sleep_for(std::chrono::microseconds(DelayUs()));
      }
      const bool session_setup = f.header.type <= 0x0003;  // HELLO, SESSION_CREATE/BIND
      if (!session_setup &&
          Roll(to_server ? options_.cut_before_request : options_.cut_before_reply)) {
        ++counts_.cuts;
        link->Cut();
        return;
      }
      if (!send(frame)) {
        link->Cut();
        return;
      }
      if (to_server && !session_setup && Roll(options_.duplicate_request)) {
        ++counts_.duplicates;
        proto::FrameHeader h = f.header;
        h.request_id = kInjectedIdBit | link->next_injected++;
        if (!send(proto::EncodeFrame(h, f.body, f.payload))) {
          link->Cut();
          return;
        }
      }
      if (to_server && !session_setup && Roll(options_.cut_after_request)) {
        ++counts_.cuts;
        std::this_thread::sleep_for(std::chrono::microseconds(200));  // let it reach the server
        link->Cut();
        return;
      }
    }
  }
  link->Cut();
}

}  // namespace archil::testing
