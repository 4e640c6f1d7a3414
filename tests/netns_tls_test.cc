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
#include <thread>

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
constexpr char kOtherServerIp[] = "10.214.0.1";
constexpr char kOtherClientIp[] = "10.214.0.2";

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
    for (const std::string& ns : {server_ns_, client_ns_, other_ns_}) {
      if (!ns.empty()) RunCommand({ip_, "netns", "del", ns}, {});  // the veth pair goes with it
    }
    CliTest::TearDown();
  }

  // A second client machine, `other_ns_`, on a link of its own to the server's namespace:
  // the server is kOtherServerIp there, the client kOtherClientIp.
  void AddOtherClient() {
    const std::string id = std::to_string(::getpid());
    other_ns_ = "archil-b-" + id;
    const std::string vs = "bs" + id, vc = "bc" + id;
    for (std::vector<std::string> cmd : std::vector<std::vector<std::string>>{
             {"netns", "add", other_ns_},
             {"link", "add", vs, "type", "veth", "peer", "name", vc},
             {"link", "set", vs, "netns", server_ns_},
             {"link", "set", vc, "netns", other_ns_},
             {"-n", server_ns_, "addr", "add", std::string(kOtherServerIp) + "/24", "dev", vs},
             {"-n", other_ns_, "addr", "add", std::string(kOtherClientIp) + "/24", "dev", vc},
             {"-n", server_ns_, "link", "set", vs, "up"},
             {"-n", other_ns_, "link", "set", vc, "up"},
             {"-n", other_ns_, "link", "set", "lo", "up"}}) {
      cmd.insert(cmd.begin(), ip_);
      Ran r = RunCommand(cmd, {});
      ASSERT_EQ(r.exit_code, 0) << cmd[1] << " " << cmd[2] << ": " << r.err;
    }
  }

  std::string ip_, server_ns_, client_ns_, other_ns_;
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

// A disk's allowed addresses, with clients on two machines: A (kClientIp) and B
// (kOtherClientIp). With the list naming A, A's sessions open and B's are refused with
// ACCESS_DENIED naming the address the server saw; a change that leaves A out ends A's session
// at once, and lets B in.
TEST_F(NetnsTest, AllowedAddressesAdmitOneMachineAndEndTheOtherWhenRemoved) {
  ASSERT_NO_FATAL_FAILURE(AddOtherClient());
  net::TestCert cert;
  ASSERT_TRUE(net::WriteTestCert((dir_ / "server-").string(),
                                 std::string("IP:") + kServerIp + ",IP:" + kOtherServerIp, &cert));
  api_listen_ = std::string(kServerIp) + ":8420";
  StartServer(
      {"--mount-listen", "0.0.0.0:8421", "--tls-cert", cert.cert_file, "--tls-key", cert.key_file},
      {ip_, "netns", "exec", server_ns_});
  std::string admin_key = ReadFile(dir_ / "data" / "admin-api-key");
  while (!admin_key.empty() && std::isspace(static_cast<unsigned char>(admin_key.back()))) {
    admin_key.pop_back();
  }
  // Each machine's regions file names the server's address on its own link.
  auto regions_for = [&](const std::string& name, const std::string& server_ip) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path);
    out << json{{"regions",
                 {{"test-1",
                   {{"api", "https://" + server_ip + ":8420"}, {"mount", server_ip + ":8421"}}}}}}
               .dump();
    return path;
  };
  fs::create_directories(dir_ / "client-run");
  const std::map<std::string, std::string> env = {
      {"ARCHIL_REGIONS_FILE", regions_for("regions-a.json", kServerIp)},
      {"ARCHIL_RUN_DIR", (dir_ / "client-run").string()},
      {"ARCHIL_API_KEY", admin_key},
      {"ARCHIL_CA_FILE", cert.cert_file}};
  auto options = [&cert](const std::string& server_ip, const std::string& token) {
    client::DiskClientOptions o;
    o.address = server_ip + ":8421";
    o.token = token;
    o.ca_file = cert.cert_file;
    o.connect_timeout_ms = 2000;
    o.hostname = "machine-" + server_ip;
    o.mount_path = "/mnt/guarded";
    return o;
  };

  std::string token;
  {
    InNetns a(client_ns_);
    ASSERT_TRUE(a.ok()) << "setns into " << client_ns_;
    Ran created = Archil({"--json", "--region", "test-1", "disks", "create", "guarded"}, env);
    ASSERT_EQ(created.exit_code, 0) << created.err;
    token = json::parse(created.out)["authorizedUsers"][0].value("token", std::string());
    ASSERT_FALSE(token.empty()) << created.out;
    Ran bad = Archil({"--region", "test-1", "disks", "allowed-ips", "guarded", "--add",
                      std::string(kClientIp) + "/33"},
                     env);
    EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
    EXPECT_NE(bad.err.find("/33"), std::string::npos) << bad.err;
  }
  {  // No list yet: B may open a session.
    InNetns b(other_ns_);
    ASSERT_TRUE(b.ok());
    Result<std::unique_ptr<client::DiskClient>> c =
        client::DiskClient::Connect(options(kOtherServerIp, token));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
  }

  InNetns a(client_ns_);
  ASSERT_TRUE(a.ok());
  Ran set =
      Archil({"--region", "test-1", "disks", "allowed-ips", "guarded", "--add", kClientIp}, env);
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_EQ(set.out, std::string(kClientIp) + "/32\n");
  Result<std::unique_ptr<client::DiskClient>> ca =
      client::DiskClient::Connect(options(kServerIp, token));
  ASSERT_TRUE(ca.ok()) << ca.status().ToString();
  client::RemoteFs fs(ca->get());
  ASSERT_TRUE(fs.Mknod(posix::kRootIno, "from-a", S_IFREG | 0644, 0, {}).ok());

  {  // B is refused, told the address the server saw.
    InNetns b(other_ns_);
    ASSERT_TRUE(b.ok());
    Result<std::unique_ptr<client::DiskClient>> cb =
        client::DiskClient::Connect(options(kOtherServerIp, token));
    ASSERT_FALSE(cb.ok());
    EXPECT_EQ(ErrnoFor(cb.status()), EACCES) << cb.status().ToString();
    EXPECT_NE(cb.status().message().find("does not allow connections from " +
                                         std::string(kOtherClientIp)),
              std::string::npos)
        << cb.status().ToString();
    // `archil mount` says so (exit code 3, as for a refused token), naming the address.
    fs::create_directories(dir_ / "mnt-b");
    const std::map<std::string, std::string> env_b = {
        {"ARCHIL_REGIONS_FILE", regions_for("regions-b.json", kOtherServerIp)},
        {"ARCHIL_RUN_DIR", (dir_ / "client-run").string()},
        {"ARCHIL_MOUNT_TOKEN", token},
        {"ARCHIL_CA_FILE", cert.cert_file}};
    Ran mounted =
        Archil({"mount", "guarded", (dir_ / "mnt-b").string(), "--region", "test-1"}, env_b);
    if (mounted.exit_code == 0) {  // never expected: leave no mount behind
      Archil({"unmount", (dir_ / "mnt-b").string()}, env_b);
    }
    EXPECT_EQ(mounted.exit_code, 3) << mounted.out << mounted.err;
    EXPECT_NE(mounted.err.find("does not allow connections from " + std::string(kOtherClientIp)),
              std::string::npos)
        << mounted.err;
  }

  // A change that leaves A out ends A's session: its next call fails, naming the reason.
  Ran moved = Archil({"--region", "test-1", "disks", "allowed-ips", "guarded", "--remove",
                      kClientIp, "--add", std::string(kOtherClientIp) + "/32"},
                     env);
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  EXPECT_EQ(moved.out, std::string(kOtherClientIp) + "/32\n");
  Status ended = Status::Ok();
  for (int i = 0; i < 100 && ended.ok(); ++i) {  // bounded: 5 s
    ended = fs.GetAttr(posix::kRootIno).status();
    if (ended.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(ended.ok()) << "A's session outlived its address's removal";
  EXPECT_EQ(ErrnoFor(ended), EIO) << ended.ToString();
  EXPECT_NE(ended.message().find("no longer allows connections from " + std::string(kClientIp)),
            std::string::npos)
      << ended.ToString();
  Result<std::unique_ptr<client::DiskClient>> again =
      client::DiskClient::Connect(options(kServerIp, token));
  EXPECT_EQ(ErrnoFor(again.status()), EACCES) << again.status().ToString();
  {  // ...and B is let in.
    InNetns b(other_ns_);
    ASSERT_TRUE(b.ok());
    Result<std::unique_ptr<client::DiskClient>> cb =
        client::DiskClient::Connect(options(kOtherServerIp, token));
    ASSERT_TRUE(cb.ok()) << cb.status().ToString();
    client::RemoteFs fsb(cb->get());
    EXPECT_TRUE(fsb.Lookup(posix::kRootIno, "from-a").ok());
  }
  // Cleared: any address again.
  Ran cleared = Archil({"--region", "test-1", "--json", "disks", "allowed-ips", "guarded",
                        "--remove", kOtherClientIp},
                       env);
  ASSERT_EQ(cleared.exit_code, 0) << cleared.err;
  EXPECT_EQ(json::parse(cleared.out), json({{"allowedIps", json::array()}})) << cleared.out;
  EXPECT_TRUE(client::DiskClient::Connect(options(kServerIp, token)).ok());
}

}  // namespace
}  // namespace archil::testing
