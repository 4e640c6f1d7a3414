#include "mount/mount_args.h"

#include <gtest/gtest.h>

namespace archil::mount {
namespace {

TEST(MountArgs, FstabLineMapsToFlags) {
  Result<MountArgs> a =
      ParseMountHelperArgs({"demo:/src", "/mnt/d", "-o",
                            "rw,_netdev,ro,region=eu-1,token_file=/etc/t,read_ahead=0,"
                            "max-cache-mb=64,timeout=30,metrics-listen=127.0.0.1:9843,"
                            "x-systemd.automount,noauto"});
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a.value().disk_ref, "demo:/src");
  EXPECT_EQ(a.value().mountpoint, "/mnt/d");
  EXPECT_TRUE(a.value().read_only);
  EXPECT_EQ(a.value().region, "eu-1");
  EXPECT_EQ(a.value().token_file, "/etc/t");
  EXPECT_EQ(a.value().read_ahead_kb, 0u);
  EXPECT_EQ(a.value().max_cache_mb, 64u);
  EXPECT_EQ(a.value().timeout_s, 30u);
  EXPECT_EQ(a.value().metrics_listen, "127.0.0.1:9843");
  EXPECT_TRUE(a.value().quiet);
}

TEST(MountArgs, UnknownOptionsAreRefusedUnlessSloppy) {
  Result<MountArgs> a = ParseMountHelperArgs({"d", "/m", "-o", "rw,frobnicate"});
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("frobnicate"), std::string::npos);
  EXPECT_TRUE(ParseMountHelperArgs({"d", "/m", "-s", "-o", "rw,frobnicate"}).ok());
  EXPECT_FALSE(ParseMountHelperArgs({"d", "/m", "-o", "read_ahead=-1"}).ok());
  EXPECT_FALSE(ParseMountHelperArgs({"d", "/m", "-o", "read_ahead=12x"}).ok());
  EXPECT_FALSE(ParseMountHelperArgs({"d", "/m", "-o", "read_ahead=99999999999"}).ok());
  EXPECT_FALSE(ParseMountHelperArgs({"d", "/m", "-o"}).ok());
  EXPECT_FALSE(ParseMountHelperArgs({"d", "/m", "-o", "timeout=86401"}).ok());
  EXPECT_FALSE(ParseMountHelperArgs({"d", "/m", "-o", "timeout=soon"}).ok());
  EXPECT_FALSE(ParseMountHelperArgs({"d"}).ok());
  EXPECT_FALSE(ParseMountHelperArgs({"d", "/m", "/x"}).ok());
  EXPECT_FALSE(ParseMountHelperArgs({"d", "/m", "--weird"}).ok());
}

TEST(MountArgs, TheWriteBackOptions) {
  Result<MountArgs> d = ParseMountHelperArgs({"d", "/m"});
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d.value().sync);
  EXPECT_EQ(d.value().writeback_ms, 2000u);
  Result<MountArgs> a = ParseMountHelperArgs({"d", "/m", "-o", "sync,writeback-ms=500"});
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_TRUE(a.value().sync);
  EXPECT_EQ(a.value().writeback_ms, 500u);
  EXPECT_FALSE(ParseMountHelperArgs({"d", "/m", "-o", "writeback_ms=99"}).ok());
  EXPECT_FALSE(ParseMountHelperArgs({"d", "/m", "-o", "writeback_ms=600001"}).ok());
  EXPECT_FALSE(ParseMountHelperArgs({"d", "/m", "-o", "writeback_ms="}).ok());
  EXPECT_FALSE(ParseMountHelperArgs({"d", "/m", "-o", "sync=1"}).ok());
}

TEST(MountArgs, FakeAndFlagsOfMount8) {
  Result<MountArgs> a = ParseMountHelperArgs({"d", "/m", "-f", "-n", "-v", "-t", "archil"});
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a.value().fake);
  EXPECT_FALSE(a.value().read_only);
}

TEST(MountArgs, DiskRefs) {
  std::string disk, sub;
  ASSERT_TRUE(SplitDiskRef("demo", &disk, &sub).ok());
  EXPECT_EQ(disk, "demo");
  EXPECT_EQ(sub, "");
  ASSERT_TRUE(SplitDiskRef("dsk-123:/a/b/", &disk, &sub).ok());
  EXPECT_EQ(disk, "dsk-123");
  EXPECT_EQ(sub, "/a/b");
  ASSERT_TRUE(SplitDiskRef("demo:/", &disk, &sub).ok());
  EXPECT_EQ(sub, "");
  EXPECT_FALSE(SplitDiskRef(":/a", &disk, &sub).ok());
  EXPECT_FALSE(SplitDiskRef("a/b", &disk, &sub).ok());
  EXPECT_FALSE(SplitDiskRef("demo:/a/../b", &disk, &sub).ok());
}

}  // namespace
}  // namespace archil::mount
