#include "catalog/events.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace archil {
namespace {

class Recorder : public CatalogListener {
 public:
  void OnDiskDeleted(const DiskId& disk) override { log.push_back("deleted " + disk.str()); }
  void OnTokenRevoked(const DiskId& disk, std::string_view token) override {
    log.push_back("revoked " + disk.str() + " " + std::string(token));
  }
  std::vector<std::string> log;
};

const DiskId kDisk = DiskId::Trusted("dsk-00000000000000aa");

TEST(CatalogEventsTest, FansOutToEverySubscriberInOrderUntilUnsubscribed) {
  CatalogEvents events;
  Recorder a, b;
  events.Subscribe(&a);
  events.Subscribe(&b);
  events.OnDiskDeleted(kDisk);
  events.Unsubscribe(&a);
  events.OnTokenRevoked(kDisk, "0123456789abcdef");
  EXPECT_EQ(a.log, std::vector<std::string>{"deleted dsk-00000000000000aa"});
  EXPECT_EQ(b.log, (std::vector<std::string>{"deleted dsk-00000000000000aa",
                                             "revoked dsk-00000000000000aa 0123456789abcdef"}));
}

// A listener may unsubscribe itself from its own callback (events are delivered unlocked).
TEST(CatalogEventsTest, ListenerMayUnsubscribeFromItsCallback) {
  CatalogEvents events;
  struct OneShot : Recorder {
    CatalogEvents* events = nullptr;
    void OnDiskDeleted(const DiskId& disk) override {
      Recorder::OnDiskDeleted(disk);
      events->Unsubscribe(this);
    }
  } once;
  once.events = &events;
  events.Subscribe(&once);
  events.OnDiskDeleted(kDisk);
  events.OnDiskDeleted(kDisk);
  EXPECT_EQ(once.log.size(), 1u);
}

}  // namespace
}  // namespace archil
