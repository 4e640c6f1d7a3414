// The control-plane API over real HTTP: every route, every error, concurrency and restart.
// No response to bad input may be a 500, and every response carries the JSON envelope.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "base/test_seed.h"
#include "control_plane_harness.h"

namespace archil {
namespace {

using nlohmann::json;

class ControlApiTest : public ::testing::Test {
 protected:
  ControlApiTest() : cp_(::testing::UnitTest::GetInstance()->current_test_info()->name()) {}
  void SetUp() override { cp_.Start(); }

  httplib::Client Client() {
    httplib::Client c("127.0.0.1", cp_.port());
    c.set_read_timeout(10, 0);
    return c;
  }
  httplib::Headers Auth(const std::string& key) { return {{"Authorization", "Bearer " + key}}; }
  httplib::Headers Admin() { return Auth(cp_.admin_key()); }

  // Sends a request; returns (status, parsed envelope). Checks the envelope's shape.
  std::pair<int, json> Call(const std::string& method, const std::string& path,
                            const std::string& body = "", httplib::Headers headers = {}) {
    if (headers.empty()) headers = Admin();
    auto c = Client();
    httplib::Result r = method == "GET"      ? c.Get(path, headers)
                        : method == "POST"   ? c.Post(path, headers, body, "application/json")
                        : method == "DELETE" ? c.Delete(path, headers, body, "application/json")
                                             : c.Put(path, headers, body, "application/json");
    EXPECT_TRUE(r) << method << " " << path << ": " << httplib::to_string(r.error());
    if (!r) return {0, json()};
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json") << path;
    json j = json::parse(r->body, nullptr, false);
    EXPECT_TRUE(j.is_object() && j.contains("success")) << path << " -> " << r->body;
    EXPECT_LT(r->status, 500) << method << " " << path << " -> " << r->body;
    if (r->status >= 400) {
      EXPECT_EQ(j["success"], false);
      EXPECT_TRUE(j["error"].is_string() && j["code"].is_string()) << r->body;
    } else {
      EXPECT_EQ(j["success"], true);
    }
    return {r->status, j};
  }

  json CreateDisk(const std::string& name) {
    auto [status, j] = Call("POST", "/api/disks", json{{"name", name}}.dump());
    EXPECT_EQ(status, 201) << j.dump();
    return j["data"];
  }

  testing::ControlPlaneHarness cp_;
};

// Paths are routed as sent: a percent-encoded segment is not decoded first, so "/%61pi/tokens"
// is no way around the route table (it once listed the API keys).
TEST_F(ControlApiTest, PercentEncodedPathsAreNotDecodedBeforeRouting) {
  auto c = Client();
  c.set_url_encode(false);
  httplib::Result r = c.Get("/%61pi/tokens", Admin());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404) << r->body;
  auto [status, j] = Call("GET", "/api/tokens");
  EXPECT_EQ(status, 200) << j.dump();
}

// A Range header means nothing to the API: the whole envelope comes back, so a create's one-time
// token is never cut off, and many ranges never multiply a response (issue: 21 bytes of broken
// JSON for `Range: bytes=0-20`, 74 MB for 2,000 ranges on a list).
TEST_F(ControlApiTest, RangeHeadersAreIgnored) {
  httplib::Headers h = Admin();
  h.emplace("Range", "bytes=0-20");
  auto [status, j] = Call("POST", "/api/disks", R"({"name":"ranged"})", h);
  ASSERT_EQ(status, 201);
  ASSERT_TRUE(j.contains("data") && j["data"].contains("authorizedUsers")) << j.dump();
  const std::string token = j["data"]["authorizedUsers"][0]["token"];
  EXPECT_EQ(token.substr(0, 4), "adt_");
  std::string many = "bytes=0-0";
  for (int i = 1; i < 1500; ++i) many += ",0-0";  // within httplib's 8 KiB header line
  httplib::Headers h2 = Admin();
  h2.emplace("Range", many);
  auto c = Client();
  httplib::Result r = c.Get("/api/disks", h2);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_LT(r->body.size(), 4096u);
  EXPECT_TRUE(json::parse(r->body, nullptr, false).is_object()) << r->body.substr(0, 200);
}

TEST_F(ControlApiTest, HealthNeedsNoKey) {
  auto [status, j] = Call("GET", "/api/health", "", {{"X", "y"}});
  EXPECT_EQ(status, 200);
  EXPECT_EQ(j["data"]["status"], "ok");
}

// What a client that knows only the API's address needs to mount: where the disk server is.
TEST_F(ControlApiTest, TheRegionSaysWhereItsDiskServerIsWithoutAKey) {
  auto [status, j] = Call("GET", "/api/region", "", {{"X", "y"}});
  EXPECT_EQ(status, 200);
  EXPECT_EQ(j["data"]["mount"], "127.0.0.1:8421");
  EXPECT_FALSE(j["data"]["region"].get<std::string>().empty());
  EXPECT_EQ(Call("POST", "/api/region").first, 405);
}

TEST_F(ControlApiTest, CreateReturnsIdAndTokenOnce) {
  json d = CreateDisk("alpha");
  std::string id = d["diskId"];
  EXPECT_EQ(id.size(), 20u);
  EXPECT_EQ(id.substr(0, 4), "dsk-");
  ASSERT_EQ(d["authorizedUsers"].size(), 1u);
  json u = d["authorizedUsers"][0];
  std::string token = u["token"];
  EXPECT_EQ(token.substr(0, 4), "adt_");
  EXPECT_EQ(u["tokenSuffix"], token.substr(token.size() - 4));
  EXPECT_EQ(u["type"], "token");
  EXPECT_TRUE(u["identifier"].is_string());

  // Idempotent: same name and settings -> 200, same disk, and no token (only its hash is kept).
  auto [status, again] = Call("POST", "/api/disks", R"({"name":"alpha"})");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(again["data"]["diskId"], id);
  EXPECT_EQ(again["data"]["created"], false);
  EXPECT_FALSE(again["data"]["authorizedUsers"][0].contains("token"));

  // Different settings -> 409.
  auto [conflict, cj] = Call("POST", "/api/disks", R"({"name":"alpha","rootAttrs":{"mode":448}})");
  EXPECT_EQ(conflict, 409);
  EXPECT_EQ(cj["code"], "conflict");

  auto [got, gj] = Call("GET", "/api/disks/" + id);
  EXPECT_EQ(got, 200);
  EXPECT_EQ(gj["data"]["name"], "alpha");
  EXPECT_EQ(gj["data"]["rootAttrs"]["mode"], 0755);
  EXPECT_FALSE(gj.dump().find(token.substr(21)) != std::string::npos) << "secret leaked";
}

TEST_F(ControlApiTest, RootAttrsAreStored) {
  auto [status, j] = Call("POST", "/api/disks",
                          R"({"name":"owned","rootAttrs":{"uid":1000,"gid":100,"mode":448}})");
  ASSERT_EQ(status, 201) << j.dump();
  EXPECT_EQ(j["data"]["disk"]["rootAttrs"], (json{{"uid", 1000}, {"gid", 100}, {"mode", 448}}));
}

TEST_F(ControlApiTest, BadCreateBodiesAre400) {
  const std::string too_long(101, 'x');
  for (const std::string& body :
       {std::string(""),
        std::string("{"),
        std::string("[]"),
        std::string("null"),
        std::string(R"({})"),
        std::string(R"({"name":""})"),
        R"({"name":")" + too_long + R"("})",
        std::string(R"({"name":"a b"})"),
        std::string(R"({"name":"a/b"})"),
        std::string(R"({"name":"caf\u00e9"})"),
        std::string(R"({"name":5})"),
        std::string(R"({"name":null})"),
        std::string(R"({"name":["x"]})"),
        std::string(R"({"name":"x","rootAttrs":"rw"})"),
        std::string(R"({"name":"x","rootAttrs":{"uid":-1}})"),
        std::string(R"({"name":"x","rootAttrs":{"mode":4096}})"),
        std::string(R"({"name":"x","rootAttrs":{"mode":1.5}})"),
        std::string(R"({"name":"x","rootAttrs":{"owner":1}})"),
        std::string(R"({"name":"x","mounts":[]})"),
        std::string("{\"name\":\"x\xff\"}"),
        std::string("{\"name\":\"\xc0\xaf\"}"),
        std::string(R"({"name":"x"} {"name":"y"})"),
        "{\"name\":" + std::string(5000, '[') + "1" + std::string(5000, ']') + "}"}) {
    auto [status, j] = Call("POST", "/api/disks", body);
    EXPECT_EQ(status, 400) << body.substr(0, 80) << " -> " << j.dump();
    EXPECT_EQ(j["code"], "invalid_argument");
  }
  auto [status, j] = Call("GET", "/api/disks");
  EXPECT_EQ(j["data"].size(), 0u) << "a rejected create stored something";
}

TEST_F(ControlApiTest, HugeBodyIs413) {
  std::string body = R"({"name":")" + std::string(1 << 20, 'a') + R"("})";
  auto [status, j] = Call("POST", "/api/disks", body);
  EXPECT_EQ(status, 413);
  EXPECT_EQ(j["code"], "too_large");
}

TEST_F(ControlApiTest, Authentication) {
  auto expect = [&](httplib::Headers h, int want) {
    auto [status, j] = Call("GET", "/api/disks", "", h);
    EXPECT_EQ(status, want) << (h.empty() ? "" : h.begin()->second) << " -> " << j.dump();
  };
  const std::string key = cp_.admin_key();
  expect({{"X-None", "1"}}, 401);
  expect({{"Authorization", ""}}, 401);
  expect({{"Authorization", "Bearer"}}, 401);
  expect({{"Authorization", "Basic YWxhZGRpbjpvcGVuc2VzYW1l"}}, 401);
  expect({{"Authorization", "Bearer key-0000000000000000_" + std::string(48, '0')}}, 401);
  // The key with its last digit changed (it ends in '0' one time in 16).
  const char* other = key.back() == '0' ? "1" : "0";
  expect({{"Authorization", "Bearer " + key.substr(0, key.size() - 1) + other}}, 401);
  expect({{"Authorization", "Bearer \xff\xfe garbage"}}, 401);
  expect({{"Authorization", "Bearer " + key}}, 200);
  expect({{"Authorization", "key-" + key}}, 200);
  expect({{"Authorization", key}}, 200);

  // A disk token is a real credential, but not for the control plane.
  json d = CreateDisk("tok");
  std::string token = d["authorizedUsers"][0]["token"];
  auto [status, j] = Call("GET", "/api/disks", "", Auth(token));
  EXPECT_EQ(status, 403);
  EXPECT_NE(j["error"].get<std::string>().find("disk token"), std::string::npos);
}

TEST_F(ControlApiTest, GetAndDeleteErrors) {
  for (std::string bad : {"nope", "dsk-123", "dsk-0123456789ABCDEF", "dsk-0123456789abcdeg",
                          "dsk-0123456789abcdef0"}) {
    EXPECT_EQ(Call("GET", "/api/disks/" + bad).first, 400) << bad;
    EXPECT_EQ(Call("DELETE", "/api/disks/" + bad).first, 400) << bad;
  }
  EXPECT_EQ(Call("GET", "/api/disks/dsk-0123456789abcdef").first, 404);
  EXPECT_EQ(Call("DELETE", "/api/disks/dsk-0123456789abcdef").first, 404);

  json d = CreateDisk("gone");
  std::string id = d["diskId"];
  std::string token = d["authorizedUsers"][0]["token"];
  auto [status, j] = Call("DELETE", "/api/disks/" + id);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(j["data"]["status"], "deleting");
  EXPECT_EQ(Call("GET", "/api/disks/" + id).first, 404);
  EXPECT_EQ(Call("DELETE", "/api/disks/" + id).first, 404);
  // Its token died with it: now an unknown credential, not a valid disk token.
  EXPECT_EQ(Call("GET", "/api/disks", "", Auth(token)).first, 401);
  // The name is free again.
  EXPECT_NE(CreateDisk("gone")["diskId"], id);
}

TEST_F(ControlApiTest, ListPaginates) {
  std::set<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.insert(CreateDisk("p" + std::to_string(i))["diskId"]);
  std::set<std::string> seen;
  std::string cursor;
  int pages = 0;
  do {
    std::string path = "/api/disks?limit=2" + (cursor.empty() ? "" : "&cursor=" + cursor);
    auto [status, j] = Call("GET", path);
    ASSERT_EQ(status, 200) << j.dump();
    ASSERT_TRUE(j.contains("nextCursor"));
    for (const json& d : j["data"]) seen.insert(d["id"].get<std::string>());
    cursor = j["nextCursor"].is_null() ? "" : j["nextCursor"].get<std::string>();
    ++pages;
  } while (!cursor.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(seen, ids);

  auto [s1, by_name] = Call("GET", "/api/disks?name=p3");
  EXPECT_EQ(s1, 200);
  ASSERT_EQ(by_name["data"].size(), 1u);
  EXPECT_EQ(by_name["data"][0]["name"], "p3");
  EXPECT_TRUE(by_name["nextCursor"].is_null());
  for (std::string q : {"limit=0", "limit=101", "limit=abc", "limit=-1", "cursor=zzz", "cursor=c-5",
                        "name=a%20b", "name=%ff"}) {
    EXPECT_EQ(Call("GET", "/api/disks?" + q).first, 400) << q;
  }
}

TEST_F(ControlApiTest, DiskUsers) {
  std::string id = CreateDisk("shared")["diskId"];
  auto [s1, added] =
      Call("POST", "/api/disks/" + id + "/users", R"({"type":"token","nickname":"ci"})");
  ASSERT_EQ(s1, 201) << added.dump();
  std::string identifier = added["data"]["identifier"];
  EXPECT_EQ(added["data"]["nickname"], "ci");
  EXPECT_EQ(added["data"]["token"].get<std::string>().substr(0, 4), "adt_");

  auto [s2, listed] = Call("GET", "/api/disks/" + id + "/users");
  EXPECT_EQ(s2, 200);
  EXPECT_EQ(listed["data"].size(), 2u);
  for (const json& u : listed["data"]) EXPECT_FALSE(u.contains("token"));

  for (const std::string& body :
       {std::string("{}"), std::string(R"({"nickname":""})"), std::string(R"({"nickname":7})"),
        R"({"nickname":")" + std::string(256, 'n') + R"("})",
        std::string(R"({"type":"awssts","nickname":"x"})"),
        std::string("{\"nickname\":\"a\\u0001b\"}"), std::string("nope")}) {
    EXPECT_EQ(Call("POST", "/api/disks/" + id + "/users", body).first, 400) << body;
  }
  EXPECT_EQ(Call("POST", "/api/disks/dsk-0123456789abcdef/users", R"({"nickname":"x"})").first,
            404);

  EXPECT_EQ(Call("DELETE", "/api/disks/" + id + "/users/" + identifier).first, 200);
  EXPECT_EQ(Call("DELETE", "/api/disks/" + id + "/users/" + identifier).first, 404);
  // Archil's form: /users/token?identifier=...
  std::string first = listed["data"][0]["identifier"];
  EXPECT_EQ(Call("DELETE", "/api/disks/" + id + "/users/token?identifier=" + first).first, 200);
  EXPECT_EQ(Call("GET", "/api/disks/" + id + "/users").second["data"].size(), 0u);
}

TEST_F(ControlApiTest, ApiKeys) {
  auto [s1, created] = Call("POST", "/api/tokens", R"({"name":"ci","description":"runner"})");
  ASSERT_EQ(s1, 201) << created.dump();
  std::string key = created["data"]["token"];
  std::string id = created["data"]["id"];
  EXPECT_EQ(key.substr(0, 4), "key-");
  EXPECT_EQ(Call("GET", "/api/disks", "", Auth(key)).first, 200);

  auto [s2, listed] = Call("GET", "/api/tokens");
  EXPECT_EQ(s2, 200);
  EXPECT_EQ(listed["data"]["tokens"].size(), 2u);
  EXPECT_EQ(listed.dump().find(key.substr(21)), std::string::npos) << "secret leaked";

  for (const std::string& body :
       {std::string("{}"), std::string(R"({"name":""})"), std::string(R"({"name":1})"),
        R"({"name":")" + std::string(101, 'k') + R"("})",
        std::string(R"({"name":"x","description":false})"),
        std::string(R"({"name":"x","scope":"all"})")}) {
    EXPECT_EQ(Call("POST", "/api/tokens", body).first, 400) << body;
  }

  EXPECT_EQ(Call("DELETE", "/api/tokens/" + id).first, 200);
  EXPECT_EQ(Call("GET", "/api/disks", "", Auth(key)).first, 401) << "revoked key still works";
  EXPECT_EQ(Call("DELETE", "/api/tokens/" + id).first, 404);
  // The admin key is now the only one: deleting it would lock everyone out.
  std::string admin_id = Call("GET", "/api/tokens").second["data"]["tokens"][0]["id"];
  EXPECT_EQ(Call("DELETE", "/api/tokens/" + admin_id).first, 409);
}

TEST_F(ControlApiTest, UnknownRoutesAndMethods) {
  EXPECT_EQ(Call("GET", "/api/nothing").first, 404);
  EXPECT_EQ(Call("GET", "/").first, 404);
  EXPECT_EQ(Call("GET", "/api/disks/x/y/z/w").first, 404);
  EXPECT_EQ(Call("PUT", "/api/disks", "{}").first, 405);
  EXPECT_EQ(Call("POST", "/api/tokens/abc", "{}").first, 405);
}

TEST_F(ControlApiTest, HundredConcurrentKeepAliveClients) {
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 100; ++i) {
    threads.emplace_back([&] {
      httplib::Client c("127.0.0.1", cp_.port());
      c.set_keep_alive(true);
      c.set_read_timeout(20, 0);
      for (int k = 0; k < 5; ++k) {
        auto r = c.Get("/api/disks", Admin());
        if (r && r->status == 200) ok++;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 500);
}

TEST_F(ControlApiTest, HundredConcurrentCreatesOfOneNameMakeOneDisk) {
  std::atomic<int> created{0};
  std::atomic<int> existing{0};
  std::mutex mu;
  std::set<std::string> ids;
  std::vector<std::thread> threads;
  for (int i = 0; i < 100; ++i) {
    threads.emplace_back([&] {
      httplib::Client c("127.0.0.1", cp_.port());
      c.set_read_timeout(30, 0);
      auto r = c.Post("/api/disks", Admin(), R"({"name":"race"})", "application/json");
      if (!r) {
        ADD_FAILURE() << "request failed: " << httplib::to_string(r.error());
        return;
      }
      if (r->status != 200 && r->status != 201) ADD_FAILURE() << r->status << " " << r->body;
      json j = json::parse(r->body, nullptr, false);
      if (r->status == 201) created++;
      if (r->status == 200) existing++;
      std::lock_guard<std::mutex> lock(mu);
      if (j.is_object() && j["data"].is_object())
        ids.insert(j["data"]["diskId"].get<std::string>());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(created.load(), 1);
  EXPECT_EQ(existing.load(), 99);
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(Call("GET", "/api/disks").second["data"].size(), 1u);
}

TEST_F(ControlApiTest, RestartKeepsEverything) {
  json d = CreateDisk("durable");
  auto [s, k] = Call("POST", "/api/tokens", R"({"name":"second"})");
  std::string key = k["data"]["token"];
  std::string admin = cp_.admin_key();
  cp_.Stop();
  cp_.Start();
  EXPECT_EQ(cp_.admin_key(), admin) << "a restart must not issue a new admin key";
  auto [status, j] = Call("GET", "/api/disks/" + d["diskId"].get<std::string>(), "", Auth(key));
  EXPECT_EQ(status, 200);
  EXPECT_EQ(j["data"]["name"], "durable");
  EXPECT_EQ(Call("GET", "/api/tokens").second["data"]["tokens"].size(), 2u);
}

// GET and PUT /api/disks/{id}/allowed-ips: the list is normalized and stored, bad bodies and bad
// entries are 400 naming what is wrong, and another disk's id or an unknown one is 404.
TEST_F(ControlApiTest, AllowedIpsRoundTrip) {
  const std::string id = CreateDisk("guarded")["diskId"];
  const std::string other = CreateDisk("open")["diskId"];
  const std::string path = "/api/disks/" + id + "/allowed-ips";
  auto [s0, empty] = Call("GET", path);
  ASSERT_EQ(s0, 200) << empty.dump();
  EXPECT_EQ(empty["data"], json({{"allowedIps", json::array()}}));

  auto [s1, put] = Call("PUT", path,
                        R"({"allowedIps":["10.0.0.0/8","10.200.1.2","2001:0DB8::/32",)"
                        R"("::ffff:192.168.0.0/112","10.0.0.0/8"]})");
  ASSERT_EQ(s1, 200) << put.dump();
  const json normalized = {"10.0.0.0/8", "10.200.1.2/32", "2001:db8::/32", "192.168.0.0/16"};
  EXPECT_EQ(put["data"]["allowedIps"], normalized);
  EXPECT_EQ(Call("GET", path).second["data"]["allowedIps"], normalized);
  // Another disk's list is its own.
  EXPECT_EQ(Call("GET", "/api/disks/" + other + "/allowed-ips").second["data"]["allowedIps"],
            json::array());

  // Cleared: any address again.
  auto [s2, cleared] = Call("PUT", path, R"({"allowedIps":[]})");
  EXPECT_EQ(s2, 200);
  EXPECT_EQ(cleared["data"]["allowedIps"], json::array());
  EXPECT_EQ(Call("GET", path).second["data"]["allowedIps"], json::array());
}

TEST_F(ControlApiTest, AllowedIpsErrors) {
  const std::string id = CreateDisk("strict")["diskId"];
  const std::string path = "/api/disks/" + id + "/allowed-ips";
  ASSERT_EQ(Call("PUT", path, R"({"allowedIps":["10.0.0.0/8"]})").first, 200);
  json many = json::array();
  for (int i = 0; i < 101; ++i) many.push_back("10.0." + std::to_string(i) + ".0/24");
  json hundred = many;
  hundred.erase(hundred.end() - 1);
  for (const std::string& body : {std::string(""),
                                  std::string("{"),
                                  std::string("[]"),
                                  std::string("null"),
                                  std::string("{}"),
                                  std::string(R"({"allowedIps":null})"),
                                  std::string(R"({"allowedIps":"10.0.0.0/8"})"),
                                  std::string(R"({"allowedIps":[10]})"),
                                  std::string(R"({"allowedIps":[["10.0.0.0/8"]]})"),
                                  std::string(R"({"allowedIps":["10.0.0.0/8"],"mounts":[]})"),
                                  std::string(R"({"allowedIps":[],"allowedIps":["1.2.3.4"]})"),
                                  std::string(R"({"allowedIps":["1.2.3.4/33"]})"),
                                  std::string(R"({"allowedIps":["::/129"]})"),
                                  std::string(R"({"allowedIps":["1.2.3"]})"),
                                  std::string(R"({"allowedIps":[" 1.2.3.4"]})"),
                                  std::string(R"({"allowedIps":["1.2.3.4/"]})"),
                                  std::string(R"({"allowedIps":["01.2.3.4"]})"),
                                  std::string(R"({"allowedIps":[""]})"),
                                  std::string(R"({"allowedIps":["10.1.0.0/8"]})"),
                                  std::string(R"({"allowedIps":["example.com"]})"),
                                  R"({"allowedIps":[")" + std::string(10000, '1') + R"("]})",
                                  std::string("{\"allowedIps\":[\"1.2.3.4\xff\"]}"),
                                  json{{"allowedIps", many}}.dump()}) {
    auto [status, j] = Call("PUT", path, body);
    EXPECT_EQ(status, 400) << body.substr(0, 80) << " -> " << j.dump();
    EXPECT_EQ(j["code"], "invalid_argument");
    EXPECT_LT(j["error"].get<std::string>().size(), 300u) << j.dump();
  }
  // The messages say what is wrong.
  auto message = [&](const std::string& body) {
    return Call("PUT", path, body).second["error"].get<std::string>();
  };
  EXPECT_NE(message(R"({"allowedIps":["10.1.0.0/8"]})").find("10.0.0.0/8"), std::string::npos);
  EXPECT_NE(message(json{{"allowedIps", many}}.dump()).find("at most 100"), std::string::npos);
  EXPECT_NE(message(R"({"allowedIps":"x"})").find("allowedIps"), std::string::npos);
  EXPECT_NE(message(R"({"nope":1})").find("nope"), std::string::npos);
  // None of them changed the list; 100 entries are allowed.
  EXPECT_EQ(Call("GET", path).second["data"]["allowedIps"], json({"10.0.0.0/8"}));
  EXPECT_EQ(Call("PUT", path, json{{"allowedIps", hundred}}.dump()).first, 200);

  // Unknown disks, malformed ids, a deleted disk: as every other disk route.
  for (const char* method : {"GET", "PUT"}) {
    EXPECT_EQ(
        Call(method, "/api/disks/dsk-0123456789abcdef/allowed-ips", R"({"allowedIps":[]})").first,
        404);
    EXPECT_EQ(Call(method, "/api/disks/nope/allowed-ips", R"({"allowedIps":[]})").first, 400);
  }
  const std::string gone = CreateDisk("gone")["diskId"];
  ASSERT_EQ(Call("DELETE", "/api/disks/" + gone).first, 200);
  EXPECT_EQ(Call("GET", "/api/disks/" + gone + "/allowed-ips").first, 404);
  EXPECT_EQ(Call("PUT", "/api/disks/" + gone + "/allowed-ips", R"({"allowedIps":[]})").first, 404);
  // Other methods, other keys.
  EXPECT_EQ(Call("POST", path, R"({"allowedIps":[]})").first, 405);
  EXPECT_EQ(Call("DELETE", path).first, 405);
  EXPECT_EQ(Call("GET", path, "", {{"X-None", "1"}}).first, 401);
  EXPECT_EQ(Call("PUT", path, R"({"allowedIps":[]})", {{"X-None", "1"}}).first, 401);
  EXPECT_EQ(Call("GET", path).second["data"]["allowedIps"].size(), 100u);
}

TEST_F(ControlApiTest, RandomRequestsNeverCrashOr500) {
  unsigned seed = TestSeed();
  std::mt19937 rng(seed);
  const std::vector<std::string> methods = {"GET", "POST", "DELETE", "PUT"};
  const std::vector<std::string> paths = {"/api/disks",
                                          "/api/disks/dsk-0123456789abcdef",
                                          "/api/disks/x/users",
                                          "/api/tokens",
                                          "/api/tokens/x",
                                          "/api/health",
                                          "/api/disks?limit=",
                                          "/api/%ff",
                                          "/api/disks/dsk-0123456789abcdef/allowed-ips"};
  const std::string alphabet = "{}[]\":,0123456789abcnametruefalsenull \\u\xff\xc3\x80";
  for (int i = 0; i < 300; ++i) {
    std::string body;
    size_t len = rng() % 64;
    for (size_t k = 0; k < len; ++k) body.push_back(alphabet[rng() % alphabet.size()]);
    if (rng() % 3 == 0) body = R"({"name":")" + body + R"("})";
    std::string path = paths[rng() % paths.size()];
    if (rng() % 4 == 0) path += std::to_string(rng());
    auto [status, j] = Call(methods[rng() % methods.size()], path, body);
    ASSERT_GT(status, 0) << "server died; seed " << seed;
  }
  EXPECT_EQ(Call("GET", "/api/health").first, 200);
}

}  // namespace
}  // namespace archil
