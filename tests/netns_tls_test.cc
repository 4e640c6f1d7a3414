// A mount from another machine: the server in one network namespace, the client in another,
// joined by a veth pair, so that the only way between them is a real (virtual) Ethernet link
// and loopback reaches nothing. The server serves the API over HTTPS and mounts over TLS with a
// certificate for its address; the client finds the mount endpoint through the regions file,
// speaks TLS because the address is not its own, trusts the certificate through the CLI's CA
// option, and reads and writes a disk.
//
// Needs root and iproute2's `ip`; skipped without them, unless ARCHIL_REQUIRE_NETNS=1 (CI sets
// it), which turns the skip into a failure.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "api/endpoints.h"
#include "cli_harness.h"
#include "client/disk_client.h"
#include "client/remote_fs.h"
#include "net/socket.h"
#include "net/test_cert.h"

namespace archil::testing {
namespace {

constexpr char kServerIp[] = "10.213.0.1";
constexpr char kClientIp[] = "10.213.0.2";

std::string FindIp() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

// The calling thread (and the processes and threads it starts) in network namespace `name`
// for the guard's lifetime.
class InNetns {
 public:
  explicit InNetns(const std::string& name) {
    self_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    const int target = ::open(("/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC);
    ok_ = self_ >= 0 && target >= 0 && ::setns(target, CLONE_NEWNET) == 0;
    if (target >= 0) ::close(target);
  }
  ~InNetns() {
    if (ok_) {
      EXPECT_EQ(::setns(self_, CLONE_NEWNET), 0);
    }
    if (self_ >= 0) ::close(self_);
  }
  bool ok() const { return ok_; }

 private:
  int self_ = -1;
  bool ok_ = false;
};

class NetnsTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    ip_ = FindIp();
    if (::geteuid() != 0 || ip_.empty()) {
      const char* require = std::getenv("ARCHIL_REQUIRE_NETNS");
      if (require != nullptr && std::string(require) == "1") {
        FAIL() << "ARCHIL_REQUIRE_NETNS=1 but this is not root with iproute2's ip";
      }
      GTEST_SKIP() << "needs root and iproute2's ip";
    }
    // Namespaces of earlier runs that died before their TearDown (their pid is gone) go first.
    Ran list = RunCommand({ip_, "netns", "list"}, {});
    std::istringstream names(list.out);
    for (std::string name; names >> name;) {
      if (name.rfind("archil-", 0) != 0 || name.size() < 10) continue;
      const pid_t owner = static_cast<pid_t>(std::strtol(name.c_str() + 9, nullptr, 10));
      if (owner > 0 && ::kill(owner, 0) != 0 && errno == ESRCH) {
        RunCommand({ip_, "netns", "del", name}, {});
      }
    }
    const std::string id = std::to_string(::getpid());
    server_ns_ = "archil-s-" + id;
    client_ns_ = "archil-c-" + id;
    const std::string vs = "as" + id, vc = "ac" + id;
    for (std::vector<std::string> cmd : std::vector<std::vector<std::string>>{
             {"netns", "add", server_ns_},
             {"netns", "add", client_ns_},
             {"link", "add", vs, "type", "veth", "peer", "name", vc},
             {"link", "set", vs, "netns", server_ns_},
             {"link", "set", vc, "netns", client_ns_},
             {"-n", server_ns_, "addr", "add", std::string(kServerIp) + "/24", "dev", vs},
             {"-n", client_ns_, "addr", "add", std::string(kClientIp) + "/24", "dev", vc},
             {"-n", server_ns_, "link", "set", vs, "up"},
             {"-n", client_ns_, "link", "set", vc, "up"},
             {"-n", server_ns_, "link", "set", "lo", "up"},
             {"-n", client_ns_, "link", "set", "lo", "up"}}) {
      cmd.insert(cmd.begin(), ip_);
      Ran r = RunCommand(cmd, {});
      ASSERT_EQ(r.exit_code, 0) << cmd[1] << " " << cmd[2] << ": " << r.err;
    }
  }
  void TearDown() override {
    StopServer();
    for (const std::string& ns : {server_ns_, client_ns_}) {
      if (!ns.empty()) RunCommand({ip_, "netns", "del", ns}, {});  // the veth pair goes with it
    }
    CliTest::TearDown();
  }

  std::string ip_, server_ns_, client_ns_;
};

TEST_F(NetnsTest, AMountFromAnotherMachineRunsOverVerifiedTls) {
  net::TestCert cert;
  ASSERT_TRUE(
      net::WriteTestCert((dir_ / "server-").string(), std::string("IP:") + kServerIp, &cert));
  const std::string mount = std::string(kServerIp) + ":8421";
  api_listen_ = std::string(kServerIp) + ":8420";
  StartServer({"--mount-listen", mount, "--tls-cert", cert.cert_file, "--tls-key", cert.key_file},
              {ip_, "netns", "exec", server_ns_});
  json advert = json::parse(ReadFile(dir_ / "run" / "test-1.json"));
  EXPECT_EQ(advert["mount"], mount) << advert.dump();
  std::string admin_key = ReadFile(dir_ / "data" / "admin-api-key");
  while (!admin_key.empty() && std::isspace(static_cast<unsigned char>(admin_key.back()))) {
    admin_key.pop_back();
  }

  // The client's machine: its own regions file, no local server advertisements.
  InNetns in(client_ns_);
  ASSERT_TRUE(in.ok()) << "setns into " << client_ns_;
  const std::string regions = (dir_ / "regions.json").string();
  {
    std::ofstream out(regions);
    out << json{{"regions", {{"test-1", {{"api", "https://" + api_listen_}, {"mount", mount}}}}}}
               .dump();
  }
  fs::create_directories(dir_ / "client-run");
  const std::map<std::string, std::string> client_env = {
      {"ARCHIL_REGIONS_FILE", regions},
      {"ARCHIL_RUN_DIR", (dir_ / "client-run").string()},
      {"ARCHIL_API_KEY", admin_key},
      {"ARCHIL_CA_FILE", cert.cert_file}};
  // Loopback here is the client's own: nothing of the server is reachable through it.
  EXPECT_FALSE(net::Connect("127.0.0.1:8421", 500).ok());

  Ran created = Archil({"--json", "--region", "test-1", "disks", "create", "remote"}, client_env);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string token =
      json::parse(created.out)["authorizedUsers"][0].value("token", std::string());
  ASSERT_FALSE(token.empty()) << created.out;

  ResolveOptions ro;
  ro.region = "test-1";
  ro.regions_file = regions;
  ro.regions_file_explicit = true;
  ro.run_dir = (dir_ / "client-run").string();
  Result<Endpoints> found = ResolveEndpoints(ro);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->mount_addr, mount);

  client::DiskClientOptions o;
  o.address = found->mount_addr;
  o.token = token;
  o.ca_file = cert.cert_file;
  o.hostname = "client-machine";
  o.mount_path = "/mnt/remote";
  Result<std::unique_ptr<client::DiskClient>> c = client::DiskClient::Connect(o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  client::RemoteFs fs(c->get());
  Result<posix::Attr> f = fs.Mknod(posix::kRootIno, "over-tls", S_IFREG | 0644, 0, {});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  std::string data(3 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + i / 4096);
  ASSERT_TRUE(fs.Write(f->ino, 0, data).ok());
  Result<std::string> back = fs.Read(f->ino, 0, data.size());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(*back == data) << "3 MiB written over TLS came back different";

  // The server takes no cleartext from another machine (the token would travel bare)...
  o.allow_cleartext = true;
  o.connect_timeout_ms = 1000;
  EXPECT_FALSE(client::DiskClient::Connect(o).ok());
  // ...and the client trusts no certificate the CA option did not name.
  o.allow_cleartext = false;
  o.ca_file.clear();
  Result<std::unique_ptr<client::DiskClient>> untrusted = client::DiskClient::Connect(o);
  EXPECT_NE(untrusted.status().message().find("not trusted"), std::string::npos)
      << untrusted.status().ToString();
}

}  // namespace
}  // namespace archil::testing
