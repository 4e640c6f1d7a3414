// /api/health reports a catalog that has been busy with one operation for too long (a commit
// waiting for a stalled disk) as 503, while the server still answers.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "base/clock.h"
#include "catalog/sqlite_catalog.h"
#include "control/api_router.h"
#include "control/service.h"

namespace archil {
namespace {

namespace fs = std::filesystem;

TEST(HealthTest, AStalledCatalogIs503) {
  const fs::path dir = fs::temp_directory_path() / ("archil-health-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto catalog = SqliteCatalog::Open((dir / "catalog.db").string());
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  ControlService service(catalog->get(), &SystemClock::Instance(), "test");
  ApiRouter router(&service);
  ApiRequest health;
  health.method = "GET";
  health.path = "/api/health";
  EXPECT_EQ(router.Handle(health).status, 200);

  // Another process holds the write lock, so the next write waits (as for a stalled fsync).
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "catalog.db").string().c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  std::thread writer([&] {
    (void)(*catalog)->AddApiKey({"00000000000000aa", "k", "", "abcd", std::string(64, 'a'), 1});
  });
  // Stalled once the write has waited 100 ms (bounded: the writer may start late under load).
  for (int i = 0; i < 1000 && service.Health(/*stalled_after_ms=*/100).ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(service.Health(/*stalled_after_ms=*/100).code(), Status::Code::kUnavailable);
  EXPECT_TRUE(service.Health(/*stalled_after_ms=*/60'000).ok());
  ASSERT_EQ(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  writer.join();
  EXPECT_TRUE(service.Health(100).ok());
  EXPECT_EQ(router.Handle(health).status, 200);
  catalog->reset();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace archil
