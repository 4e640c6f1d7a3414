// tls_pingpong: what TLS costs one 4 KiB operation of the disk protocol on this machine, and
// whether kernel TLS is available. Client and server in separate processes over loopback TCP
// (TCP_NODELAY, blocking sockets, one request in flight), as tcp_pingpong, in three modes:
//   plain   the bytes as they are
//   tls     TLS 1.3 in user space (OpenSSL, SSL_read/SSL_write on one SSL object per side)
//   ktls    the same with SSL_OP_ENABLE_KTLS: after the handshake the kernel encrypts and the
//           program would read and write the socket directly; reported as unavailable when
//           OpenSSL could not hand either direction to the kernel (TCP_ULP "tls" missing)
// and two shapes: "write" (a 4 KiB request answered by 64 bytes: a WRITE) and "read" (64 bytes
// answered by 4 KiB: a READ). Prints one ROW line per mode and shape with p50/p95 of the round
// trip, and CPU microseconds per round trip of the client and the server (getrusage).
//
// Usage: tls_pingpong [--iters 20000] [--mode plain,tls,ktls] [--suite TLS_AES_128_GCM_SHA256]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr size_t kSmall = 64, kBig = 4096;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "tls_pingpong: %s failed\n", what);
    ERR_print_errors_fp(stderr);
    std::exit(1);
  }
}

double Pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>((v.size() * p + 99) / 100);
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

double CpuUs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 + u.ru_utime.tv_usec + u.ru_stime.tv_usec;
}

// A connection's byte stream: the socket itself, or an SSL object over it.
struct Conn {
  int fd = -1;
  SSL* ssl = nullptr;

  void WriteFull(const char* p, size_t n) {
    while (n > 0) {
      ssize_t r = ssl ? SSL_write(ssl, p, static_cast<int>(n)) : write(fd, p, n);
      Check(r > 0, "write");
      p += r;
      n -= static_cast<size_t>(r);
    }
  }
  bool ReadFull(char* p, size_t n) {
    while (n > 0) {
      ssize_t r = ssl ? SSL_read(ssl, p, static_cast<int>(n)) : read(fd, p, n);
      if (r <= 0) return false;
      p += r;
      n -= static_cast<size_t>(r);
    }
    return true;
  }
};

void NoDelay(int fd) {
  int one = 1;
  Check(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0, "TCP_NODELAY");
}

// A self-signed P-256 certificate made in memory (the client does not verify it: the spike
// measures the record layer, not the handshake).
void SelfSigned(SSL_CTX* ctx) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  Check(key != nullptr, "EVP_EC_gen");
  X509* x = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), 0);
  X509_gmtime_adj(X509_getm_notAfter(x), 3600);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(x, name);
  Check(X509_sign(x, key, EVP_sha256()) > 0, "X509_sign");
  Check(SSL_CTX_use_certificate(ctx, x) == 1, "use_certificate");
  Check(SSL_CTX_use_PrivateKey(ctx, key) == 1, "use_PrivateKey");
  X509_free(x);
  EVP_PKEY_free(key);
}

SSL_CTX* Context(bool server, bool ktls, const std::string& suite) {
  SSL_CTX* ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  Check(ctx != nullptr, "SSL_CTX_new");
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  Check(SSL_CTX_set_ciphersuites(ctx, suite.c_str()) == 1, "ciphersuites");
  if (ktls) SSL_CTX_set_options(ctx, SSL_OP_ENABLE_KTLS);
  if (server) SelfSigned(ctx);
  return ctx;
}

// Whether this kernel offers kernel TLS: setsockopt(TCP_ULP, "tls") on a connected socket.
std::string ProbeKernelTls() {
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  Check(ls >= 0 && bind(ls, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
            listen(ls, 1) == 0 && getsockname(ls, reinterpret_cast<sockaddr*>(&addr), &len) == 0,
        "probe listener");
  int c = socket(AF_INET, SOCK_STREAM, 0);
  Check(c >= 0 && connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0, "probe");
  std::string out = setsockopt(c, IPPROTO_TCP, TCP_ULP, "tls", 3) == 0
                        ? "available"
                        : std::string("unavailable: ") + std::strerror(errno);
  close(c);
  close(ls);
  return out;
}

struct Result {
  std::vector<double> us;
  double client_cpu_us = 0, server_cpu_us = 0;
  bool ktls_send = false, ktls_recv = false;
};

// One mode and shape: forks a server, runs the client loop here.
Result Run(const std::string& mode, bool write_shape, int iters, const std::string& suite) {
  const bool tls = mode != "plain", ktls = mode == "ktls";
  const size_t req_len = write_shape ? kBig : kSmall, rep_len = write_shape ? kSmall : kBig;
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  Check(ls >= 0, "socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  Check(bind(ls, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0, "bind");
  Check(listen(ls, 1) == 0, "listen");
  socklen_t len = sizeof addr;
  Check(getsockname(ls, reinterpret_cast<sockaddr*>(&addr), &len) == 0, "getsockname");
  int pipefd[2];
  Check(pipe(pipefd) == 0, "pipe");

  pid_t server = fork();
  Check(server >= 0, "fork");
  if (server == 0) {
    close(pipefd[0]);
    Conn c;
    c.fd = accept(ls, nullptr, nullptr);
    Check(c.fd >= 0, "accept");
    NoDelay(c.fd);
    if (tls) {
      SSL_CTX* ctx = Context(true, ktls, suite);
      c.ssl = SSL_new(ctx);
      SSL_set_fd(c.ssl, c.fd);
      Check(SSL_accept(c.ssl) == 1, "SSL_accept");
    }
    std::vector<char> req(req_len), rep(rep_len, 'r');
    const double cpu0 = CpuUs();
    while (c.ReadFull(req.data(), req.size())) c.WriteFull(rep.data(), rep.size());
    const double cpu = CpuUs() - cpu0;
    (void)!write(pipefd[1], &cpu, sizeof cpu);
    _exit(0);
  }
  close(ls);
  close(pipefd[1]);

  Result out;
  Conn c;
  c.fd = socket(AF_INET, SOCK_STREAM, 0);
  Check(c.fd >= 0, "socket");
  Check(connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0, "connect");
  NoDelay(c.fd);
  SSL_CTX* ctx = nullptr;
  if (tls) {
    ctx = Context(false, ktls, suite);
    c.ssl = SSL_new(ctx);
    SSL_set_fd(c.ssl, c.fd);
    Check(SSL_connect(c.ssl) == 1, "SSL_connect");
    out.ktls_send = BIO_get_ktls_send(SSL_get_wbio(c.ssl)) == 1;
    out.ktls_recv = BIO_get_ktls_recv(SSL_get_rbio(c.ssl)) == 1;
  }
  std::vector<char> req(req_len, 'q'), rep(rep_len);
  const int warmup = 1000;
  double cpu0 = 0;
  out.us.reserve(static_cast<size_t>(iters));
  for (int i = 0; i < warmup + iters; ++i) {
    if (i == warmup) cpu0 = CpuUs();
    auto t0 = std::chrono::steady_clock::now();
    c.WriteFull(req.data(), req.size());
    Check(c.ReadFull(rep.data(), rep.size()), "read reply");
    auto t1 = std::chrono::steady_clock::now();
    if (i >= warmup) out.us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  out.client_cpu_us = (CpuUs() - cpu0) / iters;
  if (c.ssl) {
    SSL_shutdown(c.ssl);
    SSL_free(c.ssl);
    SSL_CTX_free(ctx);
  }
  close(c.fd);
  double server_cpu = 0;
  (void)!read(pipefd[0], &server_cpu, sizeof server_cpu);
  out.server_cpu_us = server_cpu / (warmup + iters);
  close(pipefd[0]);
  waitpid(server, nullptr, 0);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 20000;
  std::string modes = "plain,tls,ktls", suite = "TLS_AES_128_GCM_SHA256";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--iters" && i + 1 < argc) {
      iters = std::stoi(argv[++i]);
    } else if (a == "--mode" && i + 1 < argc) {
      modes = argv[++i];
    } else if (a == "--suite" && i + 1 < argc) {
      suite = argv[++i];
    } else {
      std::fprintf(stderr, "usage: tls_pingpong [--iters N] [--mode plain,tls,ktls] [--suite S]\n");
      return 2;
    }
  }
  std::printf("# tls_pingpong: %s, %d round trips per row, loopback, TLS 1.3 %s\n",
              OpenSSL_version(OPENSSL_VERSION), iters, suite.c_str());
  std::printf("# kernel TLS (setsockopt TCP_ULP \"tls\"): %s\n", ProbeKernelTls().c_str());
  for (std::string rest = modes + ","; !rest.empty();) {
    const std::string mode = rest.substr(0, rest.find(','));
    rest.erase(0, rest.find(',') + 1);
    for (bool write_shape : {true, false}) {
      Result r = Run(mode, write_shape, iters, suite);
      const char* shape = write_shape ? "4k write (4 KiB request, 64 B reply)"
                                      : "4k read (64 B request, 4 KiB reply)";
      if (mode == "ktls") {
        std::printf("# ktls: OpenSSL handed the kernel send %s, receive %s\n",
                    r.ktls_send ? "yes" : "no", r.ktls_recv ? "yes" : "no");
        if (!r.ktls_send && !r.ktls_recv) {
          std::printf("%s %s: unavailable (OpenSSL kept both directions in user space)\n",
                      mode.c_str(), shape);
          continue;
        }
      }
      std::printf("# %s %s: CPU per round trip: client %.1f us, server %.1f us\n", mode.c_str(),
                  shape, r.client_cpu_us, r.server_cpu_us);
      std::printf("%s %s: p50 %.4f ms, p95 %.4f ms\n", mode.c_str(), shape, Pct(r.us, 50) / 1000,
                  Pct(r.us, 95) / 1000);
    }
  }
  return 0;
}
