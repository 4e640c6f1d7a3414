#include "control/advertisement.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "io/sim_env.h"

namespace archil {
namespace {

// The advertisement a local CLI resolves is the one written, and a power loss right after the
// write keeps it (it is written atomically and durably).
TEST(AdvertisementTest, WrittenAtomicallyAndReadBackByTheResolver) {
  io::SimEnv env;
  ASSERT_TRUE(
      WriteAdvertisement(&env, "/run", {"local", "http://127.0.0.1:5", "127.0.0.1:6", ""}, 4242)
          .ok());
  env.SimulatePowerLoss(1);
  auto f = env.OpenFile("/run/local.json", {.read_only = true});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  std::string text(4096, '\0');
  size_t n = *(*f)->Pread(0, text.size(), text.data());
  text.resize(n);
  EXPECT_EQ(text, AdvertisementJson({"local", "http://127.0.0.1:5", "127.0.0.1:6", ""}, 4242));
  EXPECT_EQ(WriteAdvertisement(&env, "/missing/run", {"x", "http://a:1", "", ""}, 1).sys_errno(),
            ENOENT);
}

}  // namespace
}  // namespace archil
