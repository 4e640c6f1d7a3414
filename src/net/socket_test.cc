#include "net/socket.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <thread>

namespace archil::net {
namespace {

TEST(Socket, ParsesAddresses) {
  EXPECT_EQ(ParseHostPort("127.0.0.1:8421")->host, "127.0.0.1");
  EXPECT_EQ(ParseHostPort("127.0.0.1:8421")->port, 8421);
  EXPECT_EQ(ParseHostPort("[::1]:9")->host, "::1");
  for (const char* bad :
       {"", "host", ":80", "h:", "h:65536", "h:8x", "::1:80", "[::1]80", "[::1]:"}) {
    EXPECT_EQ(ParseHostPort(bad).status().code(), Status::Code::kInvalidArgument) << bad;
  }
  EXPECT_TRUE(IsLoopback("127.0.0.5"));
  EXPECT_TRUE(IsLoopback("::1"));
  EXPECT_FALSE(IsLoopback("10.0.0.1"));
}

TEST(Socket, ASecondListenerOnAPortFailsInsteadOfSharingIt) {
  Result<Fd> a = Listen("127.0.0.1:0");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const std::string addr = *LocalAddress(a->get());
  Result<Fd> b = Listen(addr);
  EXPECT_EQ(b.status().code(), Status::Code::kBusy) << b.status().ToString();
}

TEST(Socket, SendsEveryPieceAndTimesOutOnAPeerThatDoesNotRead) {
  Result<Fd> l = Listen("127.0.0.1:0");
  ASSERT_TRUE(l.ok());
  Result<Fd> c = Connect(*LocalAddress(l->get()), 1000);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Fd peer;
  for (int i = 0; i < 100 && !peer.valid(); ++i) {
    peer = Fd(::accept4(l->get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!peer.valid()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(peer.valid());
  std::string a = "head", b(100000, 'x');
  iovec iov[2] = {{a.data(), a.size()}, {b.data(), b.size()}};
  std::string got;
  std::thread reader([&] {
    char buf[65536];
    while (got.size() < a.size() + b.size()) {
      const ssize_t n = ::recv(peer.get(), buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
  });
  ASSERT_TRUE(SendAll(c->get(), iov, 1000).ok());
  reader.join();
  EXPECT_EQ(got, a + b);

  // Nobody reads: the socket buffers fill and the send gives up.
  Result<Fd> r2 = Connect(*LocalAddress(l->get()), 1000);
  ASSERT_TRUE(r2.ok());
  Fd c2 = std::move(*r2);
  ::fcntl(c2.get(), F_SETFL, O_NONBLOCK);
  std::string big(64 << 20, 'y');
  iovec one[1] = {{big.data(), big.size()}};
  EXPECT_EQ(SendAll(c2.get(), one, 200).code(), Status::Code::kUnavailable);
}

}  // namespace
}  // namespace archil::net
