#include "api/mount_table.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace archil {
namespace {

constexpr char kTable[] =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
    "40 22 0:45 / /mnt/my\\040disk rw,nosuid,nodev,noatime shared:20 - fuse.archil "
    "archil:dsk-1 rw,user_id=0,group_id=0,default_permissions,allow_other\n"
    "41 22 0:46 / /mnt/d rw - tmpfs tmpfs rw\n"
    "42 41 0:47 / /mnt/d rw,nosuid - fuse.archil archil:dsk-2:/sub rw\n"
    "garbage line\n";

TEST(MountInfo, FindsTheTopmostMountByUnescapedPath) {
  std::optional<MountEntry> e = FindMount("/mnt/my disk", kTable);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->fs_type, "fuse.archil");
  EXPECT_EQ(e->source, "archil:dsk-1");
  EXPECT_EQ(e->minor, 45u);
  std::optional<MountEntry> top = FindMount("/mnt/d", kTable);
  ASSERT_TRUE(top.has_value());
  EXPECT_EQ(top->minor, 47u);
  EXPECT_EQ(top->source, "archil:dsk-2:/sub");
  EXPECT_FALSE(FindMount("/mnt", kTable).has_value());
}

TEST(MountInfo, ReadsTheRealTable) {
  std::optional<MountEntry> root = FindMount("/");
  ASSERT_TRUE(root.has_value());
  EXPECT_FALSE(root->fs_type.empty());
}

TEST(MountInfo, ListsEveryMountInOrder) {
  std::vector<MountEntry> all = ListMounts(kTable);
  ASSERT_EQ(all.size(), 4u);  // the garbage line is skipped
  EXPECT_EQ(all[0].mountpoint, "/");
  EXPECT_EQ(all[2].fs_type, "tmpfs");
  EXPECT_EQ(all[3].minor, 47u);
}

TEST(MountInfo, AbortingAConnectionThatDoesNotExistIsNotFound) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (the FUSE control files)";
  Status s = AbortFuseConnection(999999);
  // Without the fusectl file system (a container that cannot mount it) the error says so.
  EXPECT_FALSE(s.ok());
  if (s.code() != Status::Code::kNotFound) {
    EXPECT_NE(s.message().find("fusectl"), std::string::npos) << s.ToString();
  }
}

}  // namespace
}  // namespace archil
