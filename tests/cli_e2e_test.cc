// The `archil` and `archil-server` binaries end to end, as a user runs them: a real server process
// started through `archil server`, found through its advertisement, driven by the CLI.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "cli_harness.h"
#include "client/disk_client.h"
#include "client/remote_fs.h"
#include "metrics_scrape.h"
#include "net/socket.h"
#include "scoped_tmpfs.h"

namespace archil::testing {
namespace {

TEST_F(CliTest, HelpOnEveryCommand) {
  for (std::vector<std::string> cmd : {std::vector<std::string>{"--help"},
                                       {"disks", "--help"},
                                       {"disks", "create", "--help"},
                                       {"disks", "list", "--help"},
                                       {"disks", "get", "--help"},
                                       {"disks", "delete", "--help"},
                                       {"keys", "--help"},
                                       {"keys", "create", "--help"},
                                       {"keys", "list", "--help"},
                                       {"keys", "delete", "--help"},
                                       {"users", "--help"},
                                       {"users", "add", "--help"},
                                       {"users", "list", "--help"},
                                       {"users", "remove", "--help"},
                                       {"server", "--help"},
                                       {"version", "--help"},
                                       {"mount", "--help"},
                                       {"unmount", "--help"},
                                       {"status", "--help"},
                                       {"checkpoints", "--help"},
                                       {"checkpoints", "create", "--help"},
                                       {"branches", "create", "--help"},
                                       {"metrics", "--help"},
                                       {"completion", "--help"}}) {
    Ran r = Archil(cmd);
    EXPECT_EQ(r.exit_code, 0) << cmd[0] << " " << r.err;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << cmd[0] << ": " << r.out;
    // Every command's help shows how it is used.
    EXPECT_NE(r.out.find("Examples:"), std::string::npos) << cmd[0] << ": " << r.out;
  }
}

TEST_F(CliTest, VersionAndUsageErrors) {
  Ran v = Archil({"version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out.rfind("archil ", 0), 0u);
  Ran j = Archil({"version", "--json"});
  EXPECT_TRUE(json::parse(j.out, nullptr, false).contains("version")) << j.out;

  for (std::vector<std::string> bad : {std::vector<std::string>{},
                                       {"frobnicate"},
                                       {"disks"},
                                       {"disks", "create"},
                                       {"disks", "list", "--limit", "0"},
                                       {"--log-level", "loud", "version"},
                                       {"disks", "create", "x", "--log-level", "loud"}}) {
    Ran r = Archil(bad);
    // A usage error stops the command before it does anything: no output, and no attempt to
    // reach a server (which would exit 4 here, as none runs).
    EXPECT_EQ(r.exit_code, 2) << (bad.empty() ? "" : bad[0]) << ": " << r.err;
    EXPECT_EQ(r.out, "") << (bad.empty() ? "" : bad[0]);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("archil: ", 0), 0u) << r.err;
  }
  EXPECT_NE(Archil({"frobnicate"}).err.find("unknown command 'frobnicate'"), std::string::npos);

  // Only the chosen command's options are built (app.cc): a global option's value that is also a
  // command's name does not choose that command, and every form of a global option is skipped.
  for (std::vector<std::string> ok : {std::vector<std::string>{"--region", "disks", "version"},
                                      {"--region=disks", "-q", "version"},
                                      {"--json", "--log-level", "warn", "version"},
                                      {"version", "--region", "keys"}}) {
    Ran r = Archil(ok);
    EXPECT_EQ(r.exit_code, 0) << ok[0] << " " << ok[1] << ": " << r.err;
    EXPECT_NE(r.out.find("0."), std::string::npos) << r.out;
  }
  Ran help = Archil({"--log-level", "warn", "disks", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("archil disks"), std::string::npos) << help.out;
  Ran all = Archil({"--help"});
  for (const char* c : {"disks", "keys", "users", "server", "version", "mount", "unmount", "status",
                        "checkpoints", "branches", "metrics"}) {
    EXPECT_NE(all.out.find("  " + std::string(c) + " "), std::string::npos) << c;
  }
}

// `archil completion bash` is made from the CLI's own commands: sourced into bash, it completes
// commands, subcommands and their options (global ones too), and only those.
TEST_F(CliTest, BashCompletionComesFromTheCommandsThemselves) {
  Ran script = Archil({"completion", "bash"});
  ASSERT_EQ(script.exit_code, 0) << script.err;
  const std::string file = (dir_ / "archil.bash").string();
  std::ofstream(file) << script.out;
  const std::string probe =
      "source " + file +
      "; for line in 'archil di' 'archil disks c' 'archil disks create --u' "
      "'archil --json checkpoints list --b' 'archil disks get mydisk --js' 'archil nosuch --x'; "
      "do read -ra COMP_WORDS <<< \"$line\"; COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _archil; "
      "echo \"$line -> ${COMPREPLY[*]}\"; done";
  Ran bash = RunCommand({"/bin/bash", "-c", probe}, {});
  ASSERT_EQ(bash.exit_code, 0) << bash.err;
  EXPECT_EQ(bash.out,
            "archil di -> disks\n"
            "archil disks c -> create\n"
            "archil disks create --u -> --uid\n"
            "archil --json checkpoints list --b -> --branch\n"
            "archil disks get mydisk --js -> --json\n"
            "archil nosuch --x -> \n");
  Ran zsh = Archil({"completion", "zsh"});
  EXPECT_EQ(zsh.exit_code, 2) << zsh.err;
  EXPECT_NE(zsh.err.find("bash"), std::string::npos) << zsh.err;
}

// A server whose replies have the wrong shape ("data" of the wrong type) gets a clear error from
// every command that reads them, never an abort.
TEST_F(CliTest, RepliesOfTheWrongShapeAreErrorsNotCrashes) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 16), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::atomic<bool> stop{false};
  std::thread fake([&] {
    while (!stop) {
      int c = accept(listener, nullptr, nullptr);
      if (c < 0) return;
      char buf[4096];
      (void)!read(c, buf, sizeof(buf));
      const std::string body = R"({"success":true,"data":[1]})";
      const std::string reply =
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
          std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
      (void)!write(c, reply.data(), reply.size());
      close(c);
    }
  });
  const std::string endpoint = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  for (std::vector<std::string> cmd : {std::vector<std::string>{"disks", "list"},
                                       {"disks", "get", "x"},
                                       {"disks", "create", "x"},
                                       {"keys", "list"},
                                       {"--json", "disks", "list"},
                                       {"branches", "list", "x"},
                                       {"checkpoints", "list", "x"}}) {
    cmd.insert(cmd.begin(), {"--endpoint", endpoint, "--api-key", "key-x"});
    Ran r = Archil(cmd);
    EXPECT_LT(r.exit_code, 128) << cmd[4] << " " << cmd[5] << " was killed: " << r.err;
    EXPECT_NE(r.exit_code, 0) << cmd[4] << " " << cmd[5] << ": " << r.out;
    EXPECT_EQ(r.err.rfind("archil: ", 0), 0u) << r.err;
  }
  stop = true;
  shutdown(listener, SHUT_RDWR);
  close(listener);
  fake.join();
}

// -q prints only what a script asks for: a create's id and token, a list's identifiers.
TEST_F(CliTest, QuietPrintsOnlyWhatWasAskedFor) {
  StartServer();
  Ran created = Archil({"-q", "disks", "create", "quiet"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const size_t nl = created.out.find('\n');
  ASSERT_NE(nl, std::string::npos) << created.out;
  const std::string id = created.out.substr(0, nl);
  EXPECT_EQ(id.rfind("dsk-", 0), 0u) << created.out;
  EXPECT_EQ(created.out.substr(nl + 1).rfind("adt_", 0), 0u) << created.out;
  EXPECT_EQ(std::count(created.out.begin(), created.out.end(), '\n'), 2) << created.out;
  Ran again = Archil({"-q", "disks", "create", "quiet"});  // idempotent: the id only
  EXPECT_EQ(again.out, id + "\n");
  Ran list = Archil({"-q", "disks", "list"});
  EXPECT_EQ(list.out, id + "\n");
  Ran keys = Archil({"-q", "keys", "list"});
  EXPECT_EQ(std::count(keys.out.begin(), keys.out.end(), '\n'), 1) << keys.out;  // the admin key
  EXPECT_EQ(keys.out.find("ID"), std::string::npos) << "no header: " << keys.out;
}

TEST_F(CliTest, NoServerSaysHowToStartOne) {
  Ran r = Archil({"disks", "list"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("archil server"), std::string::npos) << r.err;
  r = Archil({"--endpoint", "http://127.0.0.1:1", "--api-key", "key-x", "disks", "list"});
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_NE(r.err.find("is the server running"), std::string::npos) << r.err;
}

TEST_F(CliTest, FullLifecycleWithNoConfiguration) {
  StartServer();
  struct stat st {};
  ASSERT_EQ(stat((dir_ / "data" / "admin-api-key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  Ran created = Archil({"disks", "create", "demo"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_NE(created.out.find("created disk dsk-"), std::string::npos) << created.out;
  EXPECT_NE(created.out.find("adt_"), std::string::npos);

  Ran again = Archil({"disks", "create", "demo"});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.out.find("already exists"), std::string::npos) << again.out;
  EXPECT_EQ(again.out.find("adt_"), std::string::npos);
  EXPECT_EQ(Archil({"disks", "create", "demo", "--mode", "0700"}).exit_code, 5);
  EXPECT_EQ(Archil({"disks", "create", "bad name"}).exit_code, 2);
  EXPECT_EQ(Archil({"disks", "create", "x", "--mode", "999"}).exit_code, 2);

  Ran js = Archil({"--json", "disks", "create", "second", "--uid", "1000", "--mode", "700"});
  ASSERT_EQ(js.exit_code, 0) << js.err;
  json second = json::parse(js.out);
  EXPECT_EQ(second["disk"]["rootAttrs"]["mode"], 0700);
  std::string second_id = second["diskId"];

  Ran list = Archil({"disks", "list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(json::parse(list.out).size(), 2u);
  Ran table = Archil({"disks", "list"});
  EXPECT_EQ(table.out.rfind("ID ", 0), 0u) << table.out;
  EXPECT_NE(table.out.find("demo"), std::string::npos);

  EXPECT_EQ(Archil({"disks", "get", "demo"}).exit_code, 0);
  EXPECT_EQ(Archil({"disks", "get", second_id}).exit_code, 0);
  Ran missing = Archil({"disks", "get", "nosuch"});
  EXPECT_EQ(missing.exit_code, 4);
  EXPECT_EQ(missing.err, "archil: no disk named 'nosuch'\n");
  EXPECT_EQ(Archil({"disks", "get", "no such"}).exit_code, 2);

  // Keys: a new key works; a wrong key says what to do.
  Ran key = Archil({"--json", "keys", "create", "ci", "--description", "runner"});
  ASSERT_EQ(key.exit_code, 0) << key.err;
  json k = json::parse(key.out);
  std::string token = k["token"];
  EXPECT_EQ(Archil({"disks", "list"}, {{"ARCHIL_API_KEY", token}}).exit_code, 0);
  Ran keys = Archil({"keys", "list"});
  EXPECT_NE(keys.out.find("ci"), std::string::npos);
  EXPECT_EQ(keys.out.find(token), std::string::npos);
  Ran wrong =
      Archil({"disks", "list", "--api-key", "key-0000000000000000_" + std::string(48, '0')});
  EXPECT_EQ(wrong.exit_code, 3);
  EXPECT_NE(wrong.err.find("ARCHIL_API_KEY"), std::string::npos);
  EXPECT_EQ(Archil({"keys", "delete", k["id"]}).exit_code, 0);
  EXPECT_EQ(Archil({"disks", "list"}, {{"ARCHIL_API_KEY", token}}).exit_code, 3);

  // Users (disk tokens).
  Ran user = Archil({"--json", "users", "add", "demo", "--nickname", "laptop"});
  ASSERT_EQ(user.exit_code, 0) << user.err;
  std::string identifier = json::parse(user.out)["identifier"];
  Ran users = Archil({"users", "list", "demo"});
  EXPECT_NE(users.out.find("laptop"), std::string::npos) << users.out;
  EXPECT_EQ(Archil({"users", "remove", "demo", identifier}).exit_code, 0);
  EXPECT_EQ(Archil({"users", "remove", "demo", identifier}).exit_code, 4);
  // -q: what a script needs, the token alone on one line (as `keys create -q` prints the key).
  Ran quiet = Archil({"-q", "users", "add", "demo", "--nickname", "script"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out.find('\n'), quiet.out.size() - 1) << quiet.out;
  EXPECT_EQ(quiet.out.rfind("adt_", 0), 0u) << quiet.out;
  Ran quiet_list = Archil({"-q", "users", "list", "demo"});
  EXPECT_NE(quiet_list.out.find(quiet.out.substr(4, 16) + "\n"), std::string::npos)
      << quiet.out << quiet_list.out;  // the token's id is its identifier
  Ran quiet_key = Archil({"-q", "keys", "create", "script"});
  ASSERT_EQ(quiet_key.exit_code, 0) << quiet_key.err;
  EXPECT_EQ(quiet_key.out.find('\n'), quiet_key.out.size() - 1) << quiet_key.out;
  EXPECT_EQ(quiet_key.out.rfind("key-", 0), 0u) << quiet_key.out;

  EXPECT_EQ(Archil({"disks", "delete", "demo"}).exit_code, 0);
  EXPECT_EQ(Archil({"disks", "get", "demo"}).exit_code, 4);

  // Graceful stop, then a restart keeps the state and the admin key.
  std::string admin = ReadFile(dir_ / "data" / "admin-api-key");
  EXPECT_EQ(StopServer(), 0) << ReadFile(dir_ / "server.log");
  EXPECT_FALSE(fs::exists(dir_ / "run" / "test-1.json"));
  StartServer();
  EXPECT_EQ(ReadFile(dir_ / "data" / "admin-api-key"), admin);
  Ran after = Archil({"disks", "list", "--json"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  json disks = json::parse(after.out);
  ASSERT_EQ(disks.size(), 1u);
  EXPECT_EQ(disks[0]["id"], second_id);
}

TEST_F(CliTest, OneServerPerDataDir) {
  StartServer();
  Ran second = Archil({"server", "--data-dir", (dir_ / "data").string(), "--api-listen",
                       "127.0.0.1:0", "--region", "other"});
  EXPECT_EQ(second.exit_code, 5) << second.err;
  EXPECT_NE(second.err.find("another archil server (pid " + std::to_string(server_) + ")"),
            std::string::npos)
      << second.err;
  EXPECT_EQ(Archil({"disks", "list"}).exit_code, 0) << "the first server must be unharmed";
}

// A second server for the same region on this machine is refused before it touches anything: it
// would overwrite the first one's advertisement (and delete it on exit). Its files are private.
TEST_F(CliTest, OneServerPerRegionAndItsFilesArePrivate) {
  auto Slurp = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  StartServer();
  const std::string advert = Slurp((dir_ / "run" / "test-1.json").string());
  Ran second = Archil({"server", "--data-dir", (dir_ / "other").string(), "--api-listen",
                       "127.0.0.1:0", "--mount-listen", "127.0.0.1:0", "--region", "test-1"});
  EXPECT_EQ(second.exit_code, 5) << second.err;
  EXPECT_NE(second.err.find("serves region test-1"), std::string::npos) << second.err;
  EXPECT_FALSE(fs::exists(dir_ / "other")) << "refused before creating its data directory";
  EXPECT_EQ(Slurp((dir_ / "run" / "test-1.json").string()), advert);
  EXPECT_EQ(Archil({"disks", "list"}).exit_code, 0) << "the first server must be unharmed";

  auto mode = [](const fs::path& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 ? (st.st_mode & 0777) : 07777u;
  };
  EXPECT_EQ(mode(dir_ / "data"), 0700u);
  EXPECT_EQ(mode(dir_ / "data" / "catalog.db"), 0600u);
  EXPECT_EQ(mode(dir_ / "data" / "engine"), 0700u);
  EXPECT_EQ(mode(dir_ / "run" / "test-1.json"), 0644u);  // every local user finds the server
}

// Two servers never share a catalog given with --catalog (outside their data directories).
TEST_F(CliTest, OneServerPerCatalog) {
  const std::string catalog = "sqlite://" + (dir_ / "shared.db").string();
  StartServer({"--catalog", catalog});
  Ran second =
      Archil({"server", "--data-dir", (dir_ / "other").string(), "--api-listen", "127.0.0.1:0",
              "--mount-listen", "127.0.0.1:0", "--region", "test-2", "--catalog", catalog});
  EXPECT_EQ(second.exit_code, 5) << second.err;
  EXPECT_NE(second.err.find("uses " + (dir_ / "shared.db").string()), std::string::npos)
      << second.err;
  EXPECT_EQ(Archil({"disks", "list"}).exit_code, 0) << "the first server must be unharmed";
}

TEST_F(CliTest, ServerRefusesBadOptions) {
  Ran r = Archil({"server", "--data-dir", (dir_ / "d").string(), "--api-listen", "0.0.0.0:0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--insecure"), std::string::npos) << r.err;
  r = Archil({"server", "--data-dir", (dir_ / "d").string(), "--region", "Not Valid"});
  EXPECT_EQ(r.exit_code, 2);
  r = Archil({"server", "--bogus"});
  EXPECT_EQ(r.exit_code, 2);
}

// A server started on a disk too full for its catalog says so (ENOSPC), not a stale errno from
// an earlier call, and leaves no server behind.
TEST_F(CliTest, ServerOnAFullDiskSaysNoSpace) {
  ScopedTmpfs full((dir_ / "full").string(), "2m");
  ASSERT_TRUE(full.ok()) << std::strerror(full.error());
  {
    std::ofstream fill(dir_ / "full" / "fill", std::ios::binary);
    const std::string kib(1024, 'f');
    for (int i = 0; i < 1990; ++i) fill << kib;  // about 56 KiB left
  }
  Ran r = Archil({"server", "--data-dir", (dir_ / "full" / "data").string(), "--api-listen",
                  "127.0.0.1:0", "--mount-listen", "127.0.0.1:0", "--run-dir",
                  (dir_ / "full" / "run").string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("No such file"), std::string::npos) << r.err;
}

TEST_F(CliTest, Https) {
  std::string cert = (dir_ / "cert.pem").string();
  std::string key = (dir_ / "key.pem").string();
  Ran gen =
      RunCommand({"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                  "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert, "-days",
                  "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"},
                 {});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  StartServer({"--tls-cert", cert, "--tls-key", key});
  EXPECT_NE(ReadFile(dir_ / "run" / "test-1.json").find("https://"), std::string::npos);

  Ran untrusted = Archil({"disks", "list"});
  EXPECT_EQ(untrusted.exit_code, 6) << untrusted.err;
  EXPECT_NE(untrusted.err.find("ARCHIL_CA_FILE"), std::string::npos) << untrusted.err;
  Ran trusted = Archil({"disks", "create", "secure"}, {{"ARCHIL_CA_FILE", cert}});
  EXPECT_EQ(trusted.exit_code, 0) << trusted.err;
  EXPECT_EQ(Archil({"--ca-file", cert, "disks", "get", "secure"}).exit_code, 0);
}

// A free loopback port (the server must come back on the same one after a crash).
std::string FreeLoopbackAddress() {
  net::Fd l = net::Listen("127.0.0.1:0").value();
  return net::LocalAddress(l.get()).value();
}

// The disk server inside `archil server`: a disk created with the CLI is mounted through the
// client library at the advertised address; the server is killed with SIGKILL and started
// again while writers run: every acknowledged write is there and the writers see no error;
// deleting the disk then ends the session within a second.
TEST_F(CliTest, DiskServerRidesThroughKill9AndDiskDelete) {
  const std::string mount = FreeLoopbackAddress();
  StartServer({"--mount-listen", mount});
  json advert = json::parse(ReadFile(dir_ / "run" / "test-1.json"));
  EXPECT_EQ(advert["mount"], mount) << advert.dump();
  Ran created = Archil({"--json", "disks", "create", "crashme"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  json disk = json::parse(created.out);
  ASSERT_TRUE(disk.contains("authorizedUsers")) << created.out;
  const std::string token = disk["authorizedUsers"][0].value("token", "");
  ASSERT_FALSE(token.empty()) << created.out;

  client::DiskClientOptions o;
  o.address = mount;
  o.token = token;
  o.retry_for_ms = 30000;
  auto c = client::DiskClient::Connect(o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  client::RemoteFs fs(c->get());
  constexpr int kWriters = 4;
  std::vector<posix::Ino> files;
  for (int w = 0; w < kWriters; ++w) {
    auto f = fs.Mknod(posix::kRootIno, "f" + std::to_string(w), S_IFREG | 0644, 0, {});
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    files.push_back(f->ino);
  }
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::vector<std::atomic<int>> acked(kWriters);
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; !stop; ++i) {
        const std::string block(4096, static_cast<char>('a' + i % 26));
        Status s = fs.Write(files[w], uint64_t(i) * 4096, block).status();
        if (!s.ok()) {
          ADD_FAILURE() << "writer " << w << ": " << s.ToString();
          ++errors;
          return;
        }
        acked[w] = i + 1;
      }
    });
  }
  auto total = [&] {
    int n = 0;
    for (auto& a : acked) n += a.load();
    return n;
  };
  // Each kill lands while the writers are writing through a live session.
  auto wait_for_progress = [&] {
    const int before = total();
    for (int i = 0; i < 1000 && total() < before + 20 && errors == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GE(total(), before + 20) << "the writers made no progress";
  };
  for (int round = 0; round < 2; ++round) {
    wait_for_progress();
    KillServer();
    StartServer({"--mount-listen", mount});
  }
  wait_for_progress();
  stop = true;
  for (auto& t : writers) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_GE((*c)->stats().reconnects, 2u);
  for (int w = 0; w < kWriters; ++w) {
    const uint64_t n = uint64_t(acked[w].load());
    ASSERT_GT(n, 0u);
    Result<std::string> all = fs.Read(files[w], 0, n * 4096);
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    ASSERT_EQ(all->size(), n * 4096) << "writer " << w << " lost acknowledged writes";
    for (uint64_t i = 0; i < n; ++i) {
      ASSERT_EQ((*all)[i * 4096], static_cast<char>('a' + i % 26)) << w << " block " << i;
    }
  }

  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(Archil({"disks", "delete", "crashme"}).exit_code, 0);
  Status after = fs.GetAttr(posix::kRootIno).status();
  EXPECT_EQ(ErrnoFor(after), EIO) << after.ToString();  // the disk is gone for the client
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

// Under systemd (Type=notify, WatchdogSec=): the server says READY=1 once it serves, feeds the
// watchdog at half its interval while the catalog answers, and says STOPPING=1 on SIGTERM. The
// test plays systemd's part with a datagram socket.
TEST_F(CliTest, TheServerTalksToItsServiceManager) {
  const std::string path = (dir_ / "notify.sock").string();
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  auto receive = [&] {
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    return n < 0 ? std::string() : std::string(buf, static_cast<size_t>(n));
  };
  env_["NOTIFY_SOCKET"] = path;
  env_["WATCHDOG_USEC"] = "400000";  // pings every 200 ms
  StartServer();
  const std::string ready = receive();
  EXPECT_EQ(ready.rfind("READY=1\nSTATUS=region test-1, API http://", 0), 0u) << ready;
  const auto start = std::chrono::steady_clock::now();
  int pings = 0;
  while (pings < 3 && std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
    const std::string m = receive();
    if (m == "WATCHDOG=1") ++pings;
  }
  EXPECT_EQ(pings, 3);
  EXPECT_EQ(StopServer(), 0);
  std::string last;
  while (last != "STOPPING=1") {
    const std::string m = receive();
    if (m.empty()) break;  // 10 s without a message
    last = m;
  }
  EXPECT_EQ(last, "STOPPING=1");
  close(fd);
}

// GET /metrics (--metrics-listen): the exposition format, and the counters move with the work:
// an API call, disk protocol requests and the bytes they wrote, the engine's commits, the
// catalog's size.
TEST_F(CliTest, TheServersMetricsAreScrapedAndMove) {
  const std::string mount = FreeLoopbackAddress();
  const std::string metrics = FreeLoopbackAddress();
  StartServer({"--mount-listen", mount, "--metrics-listen", metrics});
  auto scrape = [&] { return ScrapeMetrics(metrics); };
  auto value = [](const std::string& text, const std::string& series) {
    return MetricValue(text, series);
  };
  const std::string before = scrape();
  ASSERT_FALSE(before.empty());
  // Every line is a comment or "name{labels} value" (the format's rules: src/metrics).
  std::istringstream lines(before);
  for (std::string line; std::getline(lines, line);) {
    ASSERT_TRUE(
        line.rfind("# HELP archil_", 0) == 0 || line.rfind("# TYPE archil_", 0) == 0 ||
        std::regex_match(
            line,
            std::regex(
                R"(archil_[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?[0-9][0-9.e+-]*)")))
        << line;
  }
  EXPECT_EQ(value(before, "archil_catalog_disks"), 0);

  Ran created = Archil({"--json", "disks", "create", "metered"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string token =
      json::parse(created.out)["authorizedUsers"][0].value("token", std::string());
  client::DiskClientOptions o;
  o.address = mount;
  o.token = token;
  auto c = client::DiskClient::Connect(o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  client::RemoteFs fs(c->get());
  auto f = fs.Mknod(posix::kRootIno, "f", S_IFREG | 0644, 0, {});
  ASSERT_TRUE(f.ok());
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(fs.Write(f->ino, uint64_t(i) * 4096, std::string(4096, 'm')).ok());
  // An operation that fails: a second file of the same name (EEXIST).
  EXPECT_FALSE(fs.Mknod(posix::kRootIno, "f", S_IFREG | 0644, 0, {}).ok());

  const std::string after = scrape();
  EXPECT_EQ(value(after, "archil_catalog_disks"), 1);
  EXPECT_GE(
      value(after, R"(archil_api_requests_total{method="POST",route="/api/disks",code="201"})"), 1);
  EXPECT_EQ(value(after, R"(archil_disk_requests_total{op="WRITE"})"), 10);
  EXPECT_EQ(value(after, R"(archil_disk_request_seconds_count{op="WRITE"})"), 10);
  EXPECT_EQ(value(after, R"(archil_disk_request_seconds_bucket{op="WRITE",le="+Inf"})"), 10);
  EXPECT_EQ(value(after, R"(archil_disk_request_errors_total{op="MKNOD",status="EXISTS"})"), 1)
      << after;
  EXPECT_EQ(value(after, "archil_disk_written_bytes_total"), 40960);
  EXPECT_EQ(value(after, "archil_disk_sessions"), 1);
  EXPECT_GE(value(after, "archil_engine_mutations_total"),
            value(before, "archil_engine_mutations_total") + 11);
  EXPECT_GE(value(after, "archil_engine_wal_syncs_total"),
            value(before, "archil_engine_wal_syncs_total") + 1);
}

}  // namespace
}  // namespace archil::testing
