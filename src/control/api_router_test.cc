// Which requests the HTTP server answers on its I/O thread (ApiRouter::AnswersInline), and the
// route labels that decision and the metrics share (RouteLabel).
#include "control/api_router.h"

#include <gtest/gtest.h>

namespace archil {
namespace {

ApiRequest Req(std::string method, std::string path) {
  ApiRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  return r;
}

TEST(RouteLabelTest, NamesRoutesWithoutIds) {
  EXPECT_EQ(RouteLabel("/api/disks"), "/api/disks");
  EXPECT_EQ(RouteLabel("/api/disks/dsk-1/"), "/api/disks/{id}");
  EXPECT_EQ(RouteLabel("/api/disks/dsk-1/branches/b"), "/api/disks/{id}/branches/{id}");
  EXPECT_EQ(RouteLabel("/api/disks/dsk-1/grep"), "other");
  EXPECT_EQ(RouteLabel("/api/disks/dsk-1/users/u/x/y"), "other");
  EXPECT_EQ(RouteLabel("/metrics"), "other");
}

TEST(AnswersInlineTest, HealthRegionAndTheListsAreAnsweredInline) {
  for (const char* path :
       {"/api/health", "/api/region", "/api/health/", "/api/disks", "/api/tokens"}) {
    EXPECT_TRUE(ApiRouter::AnswersInline(Req("GET", path))) << path;
    EXPECT_TRUE(ApiRouter::AnswersInline(Req("HEAD", path))) << path;
  }
}

// A disk's own routes read the engine's lineage or the writer's connection: they can wait
// behind a commit, so not inline.
TEST(AnswersInlineTest, ADisksOwnReadsGoToTheHandlerPool) {
  for (const char* path :
       {"/api/disks/dsk-1", "/api/disks/dsk-1/checkpoints", "/api/disks/dsk-1/branches",
        "/api/disks/dsk-1/users", "/api/disks/dsk-1/allowed-ips"}) {
    EXPECT_FALSE(ApiRouter::AnswersInline(Req("GET", path))) << path;
  }
}

TEST(AnswersInlineTest, CommitsSearchesAndUnknownRoutesGoToTheHandlerPool) {
  EXPECT_FALSE(ApiRouter::AnswersInline(Req("POST", "/api/disks")));
  EXPECT_FALSE(ApiRouter::AnswersInline(Req("DELETE", "/api/disks/dsk-1")));
  EXPECT_FALSE(ApiRouter::AnswersInline(Req("PUT", "/api/disks/dsk-1/allowed-ips")));
  EXPECT_FALSE(ApiRouter::AnswersInline(Req("POST", "/api/disks/dsk-1/grep")));
  EXPECT_FALSE(ApiRouter::AnswersInline(Req("DELETE", "/api/tokens/key-1")));
  // A route added later is not answered inline until it is listed: it may block.
  EXPECT_FALSE(ApiRouter::AnswersInline(Req("GET", "/api/disks/dsk-1/grep")));
  EXPECT_FALSE(ApiRouter::AnswersInline(Req("GET", "/api/something-new")));
  EXPECT_FALSE(ApiRouter::AnswersInline(Req("OPTIONS", "/api/health")));
}

}  // namespace
}  // namespace archil
