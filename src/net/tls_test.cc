#include "net/tls.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <thread>

#include "base/test_seed.h"
#include "net/test_cert.h"

namespace archil::net {
namespace {

namespace fs = std::filesystem;

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("archil-tls-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    ASSERT_TRUE(WriteTestCert((dir_ / "a-").string(), "IP:127.0.0.1,DNS:localhost", &cert_));
    ASSERT_TRUE(WriteTestCert((dir_ / "b-").string(), "IP:127.0.0.1", &other_));
    listener_ = std::move(Listen("127.0.0.1:0").value());
    address_ = LocalAddress(listener_.get()).value();
  }
  void TearDown() override { fs::remove_all(dir_); }

  Fd Accept() {
    pollfd p{listener_.get(), POLLIN, 0};
    if (::poll(&p, 1, 2000) != 1) return Fd();
    return Fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
  }
  // Receives until `n` bytes or the stream fails, waiting on the socket only when the stream
  // holds nothing back.
  static Result<std::string> RecvN(Stream* s, size_t n) {
    std::string out(n, '\0');
    size_t at = 0;
    while (at < n) {
      if (!s->Buffered()) {
        pollfd p{s->fd(), POLLIN, 0};
        if (::poll(&p, 1, 5000) != 1) return Status::Unavailable("timed out");
      }
      ARCHIL_ASSIGN_OR_RETURN(size_t got, s->Recv(out.data() + at, n - at));
      at += got;
    }
    return out;
  }
  // A server stream on the next accepted connection, echoing `n` bytes back (on its thread).
  std::thread EchoServer(size_t n, std::atomic<bool>* failed) {
    return std::thread([this, n, failed] {
      auto ctx = TlsContext::Server(cert_.cert_file, cert_.key_file);
      auto s = TlsStream::Wrap(Accept(), **ctx, "");
      if (!s.ok()) {
        *failed = true;
        return;
      }
      Result<std::string> got = RecvN(s->get(), n);
      if (!got.ok()) {
        *failed = true;
        return;
      }
      iovec iov[1] = {{got->data(), got->size()}};
      if (!(*s)->SendAll(iov, 5000).ok()) *failed = true;
    });
  }
  Result<std::unique_ptr<TlsStream>> Client(const std::string& ca, const std::string& host) {
    ARCHIL_ASSIGN_OR_RETURN(std::shared_ptr<TlsContext> ctx, TlsContext::Client(ca));
    ARCHIL_ASSIGN_OR_RETURN(Fd fd, Connect(address_, 2000));
    ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<TlsStream> s,
                            TlsStream::Wrap(std::move(fd), *ctx, host));
    ARCHIL_RETURN_IF_ERROR(s->Handshake(2000));
    return s;
  }

  fs::path dir_;
  TestCert cert_, other_;
  Fd listener_;
  std::string address_;
};

TEST_F(TlsTest, CarriesSmallAndLargeFramesBothWays) {
  std::mt19937 rng(TestSeed());
  std::string head = "header", body(3000, 'b'), payload(3 << 20, '\0');
  for (char& ch : payload) ch = static_cast<char>(rng());
  const size_t n = head.size() + body.size() + payload.size();
  std::atomic<bool> failed{false};
  std::thread server = EchoServer(n, &failed);
  auto c = Client(cert_.cert_file, "127.0.0.1");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  iovec iov[3] = {
      {head.data(), head.size()}, {body.data(), body.size()}, {payload.data(), payload.size()}};
  // The echo is read while the frame is still being sent: receiving and sending at once.
  Result<std::string> back = Status::Unavailable("not read");
  std::thread reader([&] { back = RecvN(c->get(), n); });
  EXPECT_TRUE((*c)->SendAll(iov, 5000).ok());
  reader.join();
  server.join();
  EXPECT_FALSE(failed);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(*back == head + body + payload) << "the echo differs";
}

TEST_F(TlsTest, ManySmallFramesWhileTheOtherSideSendsToo) {
  // Two threads per side: each sends 2000 small frames while its partner receives the peer's.
  constexpr int kFrames = 2000;
  constexpr size_t kSize = 4096 + 40;
  std::atomic<bool> failed{false};
  auto run = [&](Stream* s, char tag) {
    std::thread recv([&, s] {
      Result<std::string> got = RecvN(s, kFrames * kSize);
      if (!got.ok() || got->find_first_not_of(tag == 'c' ? 's' : 'c') != std::string::npos) {
        failed = true;
      }
    });
    std::string frame(kSize, tag);
    for (int i = 0; i < kFrames; ++i) {
      iovec iov[1] = {{frame.data(), frame.size()}};
      if (!s->SendAll(iov, 5000).ok()) failed = true;
    }
    recv.join();
  };
  std::thread server([&] {
    auto ctx = TlsContext::Server(cert_.cert_file, cert_.key_file);
    auto s = TlsStream::Wrap(Accept(), **ctx, "");
    if (!s.ok()) {
      failed = true;
      return;
    }
    run(s->get(), 's');
  });
  auto c = Client(cert_.cert_file, "localhost");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  run(c->get(), 'c');
  server.join();
  EXPECT_FALSE(failed);
}

TEST_F(TlsTest, RefusesAnUntrustedOrMisnamedServer) {
  for (const auto& [ca, host, why] :
       {std::tuple{other_.cert_file, std::string("127.0.0.1"), "another CA"},
        std::tuple{cert_.cert_file, std::string("example.com"), "another name"},
        std::tuple{cert_.cert_file, std::string("10.1.2.3"), "another address"}}) {
    std::atomic<bool> failed{false};
    std::thread server = EchoServer(1, &failed);
    auto c = Client(ca, host);
    EXPECT_EQ(c.status().code(), Status::Code::kUnavailable) << why;
    EXPECT_NE(c.status().message().find("not trusted"), std::string::npos)
        << why << ": " << c.status().ToString();
    server.join();
  }
}

TEST_F(TlsTest, CleartextOnEitherSideIsAClearError) {
  // A cleartext server: the client's handshake fails and says so.
  std::thread plain([&] {
    Fd fd = Accept();
    const char junk[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
    (void)!::write(fd.get(), junk, sizeof junk);
    char buf[512];
    pollfd p{fd.get(), POLLIN, 0};
    ::poll(&p, 1, 1000);
    (void)!::read(fd.get(), buf, sizeof buf);
  });
  auto c = Client(cert_.cert_file, "127.0.0.1");
  EXPECT_EQ(c.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(c.status().message().find("TLS"), std::string::npos) << c.status().ToString();
  plain.join();

  // A cleartext client: the server's Recv fails, it does not wait or crash.
  Result<Fd> raw = Connect(address_, 2000);
  ASSERT_TRUE(raw.ok());
  std::string frame(64, 'x');
  ASSERT_EQ(::write(raw->get(), frame.data(), frame.size()), 64);
  auto ctx = TlsContext::Server(cert_.cert_file, cert_.key_file);
  auto s = TlsStream::Wrap(Accept(), **ctx, "");
  ASSERT_TRUE(s.ok());
  char buf[64];
  Result<size_t> got = size_t{0};
  for (int i = 0; i < 100 && got.ok() && *got == 0; ++i) {
    pollfd p{(*s)->fd(), POLLIN, 0};
    ::poll(&p, 1, 100);
    got = (*s)->Recv(buf, sizeof buf);
  }
  EXPECT_EQ(got.status().code(), Status::Code::kUnavailable);
}

TEST_F(TlsTest, APeerThatGoesAwayIsAnErrorNotASignal) {
  // Writing to a closed socket raises SIGPIPE unless the write says not to; the default action
  // would end this process.
  std::atomic<bool> failed{false};
  std::thread server([&] {
    auto ctx = TlsContext::Server(cert_.cert_file, cert_.key_file);
    auto s = TlsStream::Wrap(Accept(), **ctx, "");
    if (!s.ok() || !RecvN(s->get(), 1).ok()) failed = true;
    // The stream (and its socket) closes here.
  });
  auto c = Client(cert_.cert_file, "127.0.0.1");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::string one = "x";
  iovec iov[1] = {{one.data(), 1}};
  ASSERT_TRUE((*c)->SendAll(iov, 1000).ok());
  server.join();
  Status s = Status::Ok();
  for (int i = 0; i < 100 && s.ok(); ++i) {
    std::string big(1 << 20, 'y');
    iovec more[1] = {{big.data(), big.size()}};
    s = (*c)->SendAll(more, 1000);
  }
  EXPECT_EQ(s.code(), Status::Code::kUnavailable) << s.ToString();
  EXPECT_FALSE(failed);
}

TEST_F(TlsTest, BothEndsMustSpeakTheSameApplicationProtocol) {
  // A client of another protocol (say HTTPS) is refused by the server, and a server of another
  // protocol by the client, during the handshake.
  for (const auto& [server_alpn, client_alpn] :
       {std::pair{"archil/1", "http/1.1"}, std::pair{"http/1.1", "archil/1"}}) {
    std::thread server([&, alpn = std::string(server_alpn)] {
      auto ctx = TlsContext::Server(cert_.cert_file, cert_.key_file, alpn);
      auto s = TlsStream::Wrap(Accept(), **ctx, "");
      if (s.ok()) (void)RecvN(s->get(), 1);
    });
    auto ctx = TlsContext::Client(cert_.cert_file, client_alpn);
    ASSERT_TRUE(ctx.ok());
    auto fd = Connect(address_, 2000);
    ASSERT_TRUE(fd.ok());
    auto c = TlsStream::Wrap(std::move(*fd), **ctx, "127.0.0.1");
    ASSERT_TRUE(c.ok());
    Status s = (*c)->Handshake(2000);
    EXPECT_EQ(s.code(), Status::Code::kUnavailable) << server_alpn << " / " << client_alpn;
    EXPECT_NE(s.message().find("TLS"), std::string::npos) << s.ToString();
    c->reset();
    server.join();
  }
}

// A client that offers no ALPN at all (a generic TLS client) is refused by the server as soon
// as the handshake is done, before anything it sends is taken as a frame.
TEST_F(TlsTest, AClientWithoutAlpnIsRefused) {
  Status server_saw;
  std::thread server([&] {
    auto ctx = TlsContext::Server(cert_.cert_file, cert_.key_file, "archil/1");
    auto s = TlsStream::Wrap(Accept(), **ctx, "");
    if (!s.ok()) {
      server_saw = s.status();
      return;
    }
    server_saw = RecvN(s->get(), 1).status();
  });
  SSL_CTX* cctx = SSL_CTX_new(TLS_client_method());
  ASSERT_NE(cctx, nullptr);
  SSL_CTX_set_verify(cctx, SSL_VERIFY_NONE, nullptr);
  auto fd = Connect(address_, 2000);
  ASSERT_TRUE(fd.ok());
  const int flags = fcntl(fd->get(), F_GETFL);
  fcntl(fd->get(), F_SETFL, flags & ~O_NONBLOCK);
  SSL* ssl = SSL_new(cctx);
  SSL_set_fd(ssl, fd->get());
  if (SSL_connect(ssl) == 1) (void)SSL_write(ssl, "hello", 5);
  server.join();
  EXPECT_EQ(server_saw.code(), Status::Code::kUnavailable) << server_saw.ToString();
  EXPECT_NE(server_saw.message().find("ALPN"), std::string::npos) << server_saw.ToString();
  SSL_free(ssl);
  SSL_CTX_free(cctx);
}

TEST_F(TlsTest, BadCertificateFilesAreInvalidArguments) {
  EXPECT_EQ(TlsContext::Server((dir_ / "none.pem").string(), cert_.key_file).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(TlsContext::Server(cert_.cert_file, other_.key_file).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(TlsContext::Client((dir_ / "none.pem").string()).status().code(),
            Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace archil::net
