// Share links end to end (docs/api.md "Share links"): files written through a real FUSE mount of
// a real `archil server`, shared with POST /api/disks/{id}/share and fetched over HTTP with no
// credentials, as anyone holding the URL would: whole (a multi-MiB file, so the body streams in
// many chunks), by Range, by HEAD; and refused once expired, forged, rotated away, its API key
// deleted (or its disk token's user removed), its file gone or its disk deleted. Links are made
// with an API key, or with a disk token: over HTTP, and by `archil share` with the mount's own
// token file.
//
// Skipped (not failed) without root or /dev/fuse, unless ARCHIL_REQUIRE_FUSE=1 (CI sets it).
#include <fcntl.h>
#include <netdb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "base/test_seed.h"
#include "mount_harness.h"

namespace archil::testing {
namespace {

class ShareApiTest : public MountTest {
 protected:
  // POST /api/disks/{disk}/share with `authorization` (the admin key when empty).
  HttpResponse Share(const std::string& disk, const json& body,
                     const std::string& authorization = "") {
    if (authorization.empty()) return Api("POST", "/api/disks/" + disk + "/share", body.dump());
    return Send("POST", "/api/disks/" + disk + "/share", body.dump(),
                {{"Authorization", authorization}, {"Content-Type", "application/json"}});
  }
  // The URL of a share reply, or "".
  std::string UrlOf(const HttpResponse& r) {
    json j = json::parse(r.body, nullptr, false);
    EXPECT_EQ(r.status, 200) << r.body;
    if (r.status != 200 || !j.is_object()) return "";
    return j["data"].value("url", "");
  }
  // A request with exactly `headers` (no credentials unless given) to the server's API address.
  HttpResponse Send(const std::string& method, const std::string& target, const std::string& body,
                    const std::vector<std::pair<std::string, std::string>>& headers) {
    Result<Url> url = ParseUrl(ApiBase());
    EXPECT_TRUE(url.ok());
    HttpRequest req;
    req.method = method;
    req.target = target;
    req.headers = headers;
    req.body = body;
    HttpClientOptions options;
    options.ca_file = ca_file_;
    Result<HttpResponse> r = SendHttpRequest(*url, req, options);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : HttpResponse{};
  }
  std::string ApiBase() {
    json advert = json::parse(ReadFile(dir_ / "run" / "test-1.json"), nullptr, false);
    return advert.value("api", "");
  }
  // GET of a share URL as anyone: no Authorization.
  HttpResponse Fetch(const std::string& share_url,
                     const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    size_t at = share_url.find("/api/share/");
    EXPECT_NE(at, std::string::npos) << share_url;
    if (at == std::string::npos) return {};
    EXPECT_EQ(share_url.substr(0, at), ApiBase())
        << "the URL names the host the API was reached at";
    return Send("GET", share_url.substr(at), "", headers);
  }
  static std::string Header(const HttpResponse& r, const std::string& name) {
    for (const auto& [n, v] : r.headers) {
      if (n == name) return v;
    }
    return "";
  }
  static void ExpectRefused(const HttpResponse& r, int status, const std::string& says) {
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_NE(r.body.find(says), std::string::npos) << r.body;
    EXPECT_NE(r.body.find("\"success\":false"), std::string::npos) << r.body;
  }
  // The raw bytes a request gets back, by hand (for HEAD, whose answer has a Content-Length and
  // no body, and for a client that goes away mid-body).
  // With `slow`, a small receive buffer and a pause after each read: a client slower than the
  // server, so that its writes wait (backpressure).
  std::string Raw(const std::string& request, size_t stop_after = SIZE_MAX, bool slow = false) {
    Result<Url> url = ParseUrl(ApiBase());
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* ai = nullptr;
    EXPECT_EQ(getaddrinfo(url->host.c_str(), url->port.c_str(), &hints, &ai), 0);
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (slow) {
      int small = 16 << 10;
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    }
    EXPECT_EQ(connect(fd, ai->ai_addr, ai->ai_addrlen), 0);
    freeaddrinfo(ai);
    timeval tv{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    EXPECT_EQ(write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
    std::string got;
    char buf[65536];
    while (got.size() < stop_after) {
      ssize_t n = read(fd, buf, sizeof(buf));
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
      if (slow) std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    close(fd);
    return got;
  }
  static std::string RandomBytes(size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string s(n, '\0');
    for (size_t i = 0; i < n; i += 8) {
      uint64_t v = rng();
      for (size_t j = 0; j < 8 && i + j < n; ++j) s[i + j] = static_cast<char>(v >> (8 * j));
    }
    return s;
  }

  std::string ca_file_;  // the certificate Send trusts, for a server with --tls-cert
};

TEST_F(ShareApiTest, AnyoneFetchesTheFileWholeByRangeAndByHead) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  StartServer();
  std::string disk = CreateDisk("s1");
  ASSERT_EQ(Mount("s1").exit_code, 0);
  fs::create_directories(mnt_ + "/dir");
  // 5 MiB and a bit: twenty chunks of the session's 256 KiB, the last one short.
  const std::string data = RandomBytes((5 << 20) + 12345, seed);
  std::ofstream(mnt_ + "/dir/big.bin", std::ios::binary) << data;
  std::ofstream(mnt_ + "/empty");
  SyncMount();

  HttpResponse made = Share(disk, {{"key", "dir/big.bin"}, {"expiresIn", 3600}});
  const std::string url = UrlOf(made);
  ASSERT_FALSE(url.empty());
  EXPECT_EQ(json::parse(made.body)["data"]["expiresIn"], 3600);

  HttpResponse got = Fetch(url);
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(Header(got, "content-type"), "application/octet-stream");
  EXPECT_EQ(Header(got, "content-length"), std::to_string(data.size()));
  EXPECT_EQ(Header(got, "accept-ranges"), "bytes");
  EXPECT_TRUE(got.body == data) << "the body differs from what was written (" << got.body.size()
                                << " bytes against " << data.size() << ")";

  // One range in each form, across chunk boundaries.
  const size_t n = data.size();
  got = Fetch(url, {{"Range", "bytes=262000-800000"}});
  EXPECT_EQ(got.status, 206);
  EXPECT_EQ(Header(got, "content-range"), "bytes 262000-800000/" + std::to_string(n));
  EXPECT_TRUE(got.body == data.substr(262000, 538001));
  got = Fetch(url, {{"Range", "bytes=-100"}});
  EXPECT_EQ(got.status, 206);
  EXPECT_EQ(Header(got, "content-range"), "bytes " + std::to_string(n - 100) + "-" +
                                              std::to_string(n - 1) + "/" + std::to_string(n));
  EXPECT_TRUE(got.body == data.substr(n - 100));
  got = Fetch(url, {{"Range", "bytes=5000000-"}});
  EXPECT_EQ(got.status, 206);
  EXPECT_TRUE(got.body == data.substr(5000000));
  got = Fetch(url, {{"Range", "bytes=" + std::to_string(n) + "-"}});
  ExpectRefused(got, 416, "range_not_satisfiable");
  EXPECT_EQ(Header(got, "content-range"), "bytes */" + std::to_string(n));
  // Several ranges: the whole file (documented).
  got = Fetch(url, {{"Range", "bytes=0-1,5-6"}});
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body.size(), n);

  // HEAD: the headers of the GET, no body.
  const std::string target = url.substr(url.find("/api/share/"));
  std::string head = Raw("HEAD " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
  EXPECT_NE(head.find("Content-Length: " + std::to_string(n) + "\r\n"), std::string::npos) << head;
  EXPECT_EQ(head.size(), head.find("\r\n\r\n") + 4) << "HEAD answered with a body";

  // A client that goes away after 100 KiB does not stop the server serving the next one.
  std::string cut = Raw("GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n", 100 << 10);
  EXPECT_EQ(cut.rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_TRUE(Fetch(url).body == data);

  // A slow client (a 16 KiB receive buffer, a pause after each read) gets every byte, in order.
  std::string slow =
      Raw("GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", SIZE_MAX, true);
  const size_t body_at = slow.find("\r\n\r\n");
  ASSERT_NE(body_at, std::string::npos);
  EXPECT_EQ(slow.size() - body_at - 4, n);
  EXPECT_TRUE(slow.compare(body_at + 4, std::string::npos, data) == 0);

  // An empty file: 200 with no body; any range of it is unsatisfiable.
  const std::string empty_url = UrlOf(Share(disk, {{"key", "/empty"}}));
  got = Fetch(empty_url);
  EXPECT_EQ(got.status, 200);
  EXPECT_TRUE(got.body.empty());
  EXPECT_EQ(Fetch(empty_url, {{"Range", "bytes=0-"}}).status, 416);

  // The rest of the API still wants a key: the share route opened nothing else.
  EXPECT_EQ(Send("GET", "/api/disks", "", {}).status, 401);
  EXPECT_EQ(Send("GET", "/api/share", "", {}).status, 401);
  EXPECT_EQ(Send("POST", "/api/disks/" + disk + "/share", R"({"key": "dir/big.bin"})", {}).status,
            401);
}

// Over HTTPS the link is an https URL, and the streamed body crosses TLS intact.
TEST_F(ShareApiTest, OverHttpsTheLinkIsHttpsAndStreams) {
  const uint64_t seed = TestSeed() + 1;
  SCOPED_TRACE(SeedTrace(seed));
  const std::string cert = (dir_ / "cert.pem").string();
  const std::string key = (dir_ / "key.pem").string();
  Ran gen =
      RunCommand({"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                  "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert, "-days",
                  "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"},
                 {});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  env_["ARCHIL_CA_FILE"] = cert;
  ca_file_ = cert;
  StartServer({"--tls-cert", cert, "--tls-key", key});
  ASSERT_FALSE(CreateDisk("tls").empty());
  ASSERT_EQ(Mount("tls").exit_code, 0);
  const std::string data = RandomBytes((3 << 20) + 7, seed);
  std::ofstream(mnt_ + "/big", std::ios::binary) << data;
  SyncMount();
  Ran cli = Archil({"share", mnt_ + "/big"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  std::string url = cli.out;
  while (!url.empty() && std::isspace(static_cast<unsigned char>(url.back()))) url.pop_back();
  EXPECT_EQ(url.rfind("https://127.0.0.1:", 0), 0u) << url;
  HttpResponse got = Fetch(url);
  EXPECT_EQ(got.status, 200);
  EXPECT_TRUE(got.body == data) << got.body.size() << " bytes against " << data.size();
  got = Fetch(url, {{"Range", "bytes=1000000-"}});
  EXPECT_EQ(got.status, 206);
  EXPECT_TRUE(got.body == data.substr(1000000));
}

TEST_F(ShareApiTest, BadRequestsAndBadLinksAreRefusedClearly) {
  StartServer();
  std::string disk = CreateDisk("s2");
  ASSERT_EQ(Mount("s2").exit_code, 0);
  fs::create_directories(mnt_ + "/dir");
  std::ofstream(mnt_ + "/dir/f") << "hello\n";
  symlink("dir/f", (mnt_ + "/link").c_str());
  SyncMount();

  ExpectRefused(Share(disk, json::object()), 400, "key");
  ExpectRefused(Share(disk, {{"key", "dir/f"}, {"bogus", 1}}), 400, "bogus");
  ExpectRefused(Share(disk, {{"key", "dir/f"}, {"expiresIn", 0}}), 400, "expiresIn");
  ExpectRefused(Share(disk, {{"key", "dir/f"}, {"expiresIn", 604801}}), 400, "expiresIn");
  ExpectRefused(Share(disk, {{"key", "../etc/passwd"}}), 400, "'..'");
  ExpectRefused(Share(disk, {{"key", "/"}}), 400, "key");
  ExpectRefused(Api("POST", "/api/disks/" + disk + "/share", "{\"key\": "), 400, "JSON");
  ExpectRefused(Share(disk, {{"key", "missing"}}), 404, "missing");
  ExpectRefused(Share(disk, {{"key", "dir"}}), 404, "not a regular file");
  ExpectRefused(Share(disk, {{"key", "link"}}), 404, "not a regular file");
  ExpectRefused(Share("dsk-00000000000000ff", {{"key", "dir/f"}}), 404, "dsk-00000000000000ff");
  ExpectRefused(Share("not-an-id", {{"key", "dir/f"}}), 400, "invalid disk id");
  ExpectRefused(Api("POST", "/api/disks/" + disk + "/share?branch=nope", R"({"key": "dir/f"})"),
                404, "nope");
  ExpectRefused(Api("GET", "/api/disks/" + disk + "/share", ""), 405, "POST");
  ExpectRefused(Share(disk, {{"key", "dir/f"}}, "Bearer key-nope"), 401, "unauthenticated");

  const std::string url = UrlOf(Share(disk, {{"key", "dir/f"}}));
  ASSERT_FALSE(url.empty());
  EXPECT_EQ(Fetch(url).body, "hello\n");
  const std::string target = url.substr(url.find("/api/share/"));
  ExpectRefused(Send("POST", target, "", {}), 405, "GET, HEAD");
  // Forged, damaged and truncated tokens: 404, never anything else.
  std::string forged = target;
  forged.back() = forged.back() == 'A' ? 'B' : 'A';
  ExpectRefused(Send("GET", forged, "", {}), 404, "no such share link");
  ExpectRefused(Send("GET", target.substr(0, target.size() - 5), "", {}), 404,
                "no such share link");
  ExpectRefused(Send("GET", "/api/share/%00%ff", "", {}), 404, "no such share link");
  ExpectRefused(Send("GET", "/api/share/" + std::string(6000, 'A'), "", {}), 404,
                "no such share link");

  // The CLI: `archil share MNT/PATH` prints a URL that serves the file.
  Ran cli = Archil({"share", mnt_ + "/dir/../dir/f", "--expires-in", "600"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  std::string cli_url = cli.out;
  while (!cli_url.empty() && std::isspace(static_cast<unsigned char>(cli_url.back()))) {
    cli_url.pop_back();
  }
  EXPECT_EQ(Fetch(cli_url).body, "hello\n");
  Ran outside = Archil({"share", dir_.string() + "/nowhere"});
  EXPECT_NE(outside.exit_code, 0);
  EXPECT_NE(outside.err.find("not a file under an archil mount"), std::string::npos) << outside.err;
  Ran missing = Archil({"share", mnt_ + "/dir/none"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("dir/none"), std::string::npos) << missing.err;
  EXPECT_NE(Archil({"share", mnt_ + "/dir/f", "--expires-in", "0"}).exit_code, 0);

  // The file goes: 404.
  ASSERT_EQ(unlink((mnt_ + "/dir/f").c_str()), 0);
  SyncMount();
  ExpectRefused(Fetch(url), 404, "no longer there");
}

TEST_F(ShareApiTest, ExpiryRotationKeyDeletionAndDiskDeletionEndALink) {
  StartServer();
  std::string disk = CreateDisk("s3");
  ASSERT_EQ(Mount("s3").exit_code, 0);
  std::ofstream(mnt_ + "/f") << "data";
  SyncMount();

  // Expiry: a one-second link works, then answers 410.
  const auto start = std::chrono::steady_clock::now();
  const std::string short_url = UrlOf(Share(disk, {{"key", "f"}, {"expiresIn", 1}}));
  const HttpResponse early = Fetch(short_url);
  if (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(900)) {
    EXPECT_EQ(early.status, 200) << early.body;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  ExpectRefused(Fetch(short_url), 410, "expired");

  // Rotation: links made before it fail, links made after work.
  const std::string before = UrlOf(Share(disk, {{"key", "f"}}));
  EXPECT_EQ(Fetch(before).status, 200);
  Ran rotated = Archil({"share-key", "rotate"});
  EXPECT_EQ(rotated.exit_code, 0) << rotated.err;
  EXPECT_NE(rotated.out.find("share key rotated"), std::string::npos) << rotated.out;
  ExpectRefused(Fetch(before), 404, "no such share link");
  const std::string after = UrlOf(Share(disk, {{"key", "f"}}));
  EXPECT_EQ(Fetch(after).body, "data");
  EXPECT_EQ(Send("POST", "/api/share-key/rotate", "", {}).status, 401);

  // Deleting the API key that made a link ends the link, not the others.
  HttpResponse key = Api("POST", "/api/tokens", R"({"name": "sharer"})");
  ASSERT_EQ(key.status, 201) << key.body;
  json k = json::parse(key.body)["data"];
  const std::string by_other = UrlOf(Share(disk, {{"key", "f"}}, "Bearer " + k.value("token", "")));
  EXPECT_EQ(Fetch(by_other).body, "data");
  ASSERT_EQ(Api("DELETE", "/api/tokens/" + k.value("id", ""), "").status, 200);
  ExpectRefused(Fetch(by_other), 410, "API key");
  EXPECT_EQ(Fetch(after).status, 200);

  // Deleting the disk ends its links.
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  HttpResponse deleted = Api("DELETE", "/api/disks/" + disk, "");
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  ExpectRefused(Fetch(after), 410, "deleted");
}

// A disk token makes links (a mount's credential, no API key): over HTTP with Bearer, and by
// `archil share` from the mount's own token file. Removing that disk user ends its links (410);
// another disk's token is refused; a user who may not read the token file is told an API key is
// needed.
TEST_F(ShareApiTest, ADiskTokenMakesLinksUntilItsUserIsRemoved) {
  StartServer();
  const std::string other_token = [&] {
    CreateDisk("s5");
    return env_["ARCHIL_MOUNT_TOKEN"];
  }();
  std::string disk = CreateDisk("s4");
  HttpResponse added = Api("POST", "/api/disks/" + disk + "/users", R"({"nickname":"sharer"})");
  ASSERT_EQ(added.status, 201) << added.body;
  json user = json::parse(added.body)["data"];
  const std::string token = user.value("token", "");
  const std::string identifier = user.value("identifier", "");
  ASSERT_EQ(token.substr(0, 4), "adt_");
  // The mount reads the sharer's token from a root-owned 0600 file, and its record names it.
  const std::string token_file = (dir_ / "sharer.token").string();
  { std::ofstream(token_file) << token << "\n"; }
  ASSERT_EQ(chmod(token_file.c_str(), 0600), 0);
  env_.erase("ARCHIL_MOUNT_TOKEN");
  Ran mounted = Mount("s4", {"--token-file", token_file});
  ASSERT_EQ(mounted.exit_code, 0) << mounted.err;
  std::ofstream(mnt_ + "/f") << "data";
  SyncMount();
  Ran status = Archil({"--json", "status", mnt_});
  EXPECT_EQ(json::parse(status.out, nullptr, false).value("token_file", ""), token_file)
      << status.out;

  // Over HTTP, with the disk token.
  const std::string by_http = UrlOf(Share(disk, {{"key", "f"}}, "Bearer " + token));
  EXPECT_EQ(Fetch(by_http).body, "data");
  // Another disk's token: 403, and nothing made.
  ExpectRefused(Share(disk, {{"key", "f"}}, "Bearer " + other_token), 403, "another disk");
  // Only from an address the disk's allowed client addresses cover (the server sees this
  // client's): loopback is, so the link is made.
  HttpResponse listed = Api("PUT", "/api/disks/" + disk + "/allowed-ips",
                            R"({"allowedIps": ["127.0.0.0/8", "::1"]})");
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(Share(disk, {{"key", "f"}}, "Bearer " + token).status, 200);
  // The disk token is still no API key.
  EXPECT_EQ(Send("GET", "/api/disks", "", {{"Authorization", "Bearer " + token}}).status, 403);

  // `archil share` with no API key: the mount's own token (the admin key would do too, so the
  // link's end below shows which made it).
  Ran cli = Archil({"share", mnt_ + "/f"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  std::string by_cli = cli.out.substr(0, cli.out.find('\n'));
  EXPECT_EQ(Fetch(by_cli).body, "data");
  // With an API key given, the key makes it (and outlives the disk user).
  std::string admin = ReadFile(dir_ / "data" / "admin-api-key");
  admin = admin.substr(0, admin.find('\n'));
  Ran keyed = Archil({"share", mnt_ + "/f"}, {{"ARCHIL_API_KEY", admin}});
  ASSERT_EQ(keyed.exit_code, 0) << keyed.err;
  const std::string by_key = keyed.out.substr(0, keyed.out.find('\n'));

  // Another user may not read the root-owned 0600 token file (nor the admin key): the CLI says
  // an API key is needed, and why the mount's token is not used.
  int err_pipe[2];
  ASSERT_EQ(pipe2(err_pipe, O_CLOEXEC), 0);
  std::vector<std::string> argv = {kBin + "/archil", "share", mnt_ + "/f"};
  std::vector<std::string> envv = Environment(env_);
  const int rc = RunAs(65534, 65534, [&] {
    dup2(err_pipe[1], 2);
    auto args = Pointers(argv);
    auto envp = Pointers(envv);
    execve(args[0], args.data(), envp.data());
    return 127;
  });
  close(err_pipe[1]);
  std::string err;
  char buf[4096];
  for (ssize_t n; (n = read(err_pipe[0], buf, sizeof(buf))) > 0;) err.append(buf, n);
  close(err_pipe[0]);
  EXPECT_NE(rc, 0) << err;
  EXPECT_NE(rc, 127) << err;
  EXPECT_NE(err.find("archil share needs an API key"), std::string::npos) << err;
  EXPECT_NE(err.find(token_file), std::string::npos) << err;

  // Removing the user ends the links it made, over HTTP and from the CLI, not the key's.
  ASSERT_EQ(Api("DELETE", "/api/disks/" + disk + "/users/" + identifier, "").status, 200);
  ExpectRefused(Fetch(by_http), 410, "disk token");
  ExpectRefused(Fetch(by_cli), 410, "disk token");
  EXPECT_EQ(Fetch(by_key).body, "data");
  EXPECT_EQ(Share(disk, {{"key", "f"}}, "Bearer " + token).status, 401);
}

}  // namespace
}  // namespace archil::testing
