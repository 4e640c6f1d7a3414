#include "proto/validate.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <tuple>
#include <vector>

#include "base/crc32c.h"

namespace archil::proto {
namespace {

namespace v1 = ::archil::v1;

FrameHeader Of(uint16_t type) {
  FrameHeader h;
  h.type = type;
  return h;
}

WireStatus Check(uint16_t type, const Message& m, std::string_view payload = {},
                 ValidationContext ctx = {}) {
  std::string why;
  WireStatus s = ValidateRequest(Of(type), m, payload, ctx, &why);
  EXPECT_EQ(s == WireStatus::kOk, why.empty()) << "a refusal says why, a pass says nothing";
  return s;
}

TEST(Validate, NamesFollowTheNamespaceRules) {
  std::string why;
  EXPECT_EQ(CheckName("a", &why), WireStatus::kOk);
  EXPECT_EQ(CheckName(std::string(255, 'n'), &why), WireStatus::kOk);
  EXPECT_EQ(CheckName(std::string(256, 'n'), &why), WireStatus::kNameTooLong);
  for (const std::string& bad : {std::string(), std::string("."), std::string(".."),
                                 std::string("a/b"), std::string("a\0b", 3)}) {
    EXPECT_EQ(CheckName(bad, &why), WireStatus::kInvalid) << bad;
  }
  // The first rule decides: too long and holding '/' is INVALID.
  EXPECT_EQ(CheckName(std::string(300, '/'), &why), WireStatus::kInvalid);
  // Any other byte is fine: names are bytes.
  EXPECT_EQ(CheckName("\xff\xfe..x", &why), WireStatus::kOk);
}

// The attribute puts any mutation may carry, and PUT_ATTRS that carries only them (§5.3.2).
TEST(Validate, AttributePutsAreBoundedAndHoldOnlyValues) {
  v1::PutAttrs alone;
  EXPECT_EQ(Check(kTypePutAttrs, alone), WireStatus::kInvalid) << "without its Mut";
  alone.mutable_mut();
  EXPECT_EQ(Check(kTypePutAttrs, alone), WireStatus::kOk) << "no puts: nothing to do";
  auto put = [](v1::Mut* mut, uint64_t ino, uint32_t valid, uint32_t mode = 0) {
    v1::AttrPut* p = mut->add_puts();
    p->set_ino(ino);
    p->set_valid(valid);
    p->set_mode(mode);
    p->set_ctime_ns(1);
  };
  put(alone.mutable_mut(), 5, 1 | 2 | 4 | 16 | 32, 04755);
  EXPECT_EQ(Check(kTypePutAttrs, alone), WireStatus::kOk);

  v1::Mkdir carrier;  // any mutation carries them
  carrier.set_parent(1);
  carrier.set_name("d");
  put(carrier.mutable_mut(), 5, 1, 0644);
  EXPECT_EQ(Check(kTypeMkdir, carrier), WireStatus::kOk);
  for (auto [ino, valid, mode] : {std::tuple<uint64_t, uint32_t, uint32_t>{0, 1, 0644},
                                  {5, 8, 0},          // a size is never a put
                                  {5, 128, 0},        // nor "now": the client's clock decides
                                  {5, 1024, 0},       // the change time is always there
                                  {5, 1, 010644}}) {  // type bits
    v1::Mkdir bad = carrier;
    put(bad.mutable_mut(), ino, valid, mode);
    EXPECT_EQ(Check(kTypeMkdir, bad), WireStatus::kInvalid) << ino << " " << valid << " " << mode;
  }
  v1::PutAttrs many;
  for (size_t i = 0; i < kMaxAttrPuts; ++i) put(many.mutable_mut(), 5 + i, 2);
  EXPECT_EQ(Check(kTypePutAttrs, many), WireStatus::kOk);
  put(many.mutable_mut(), 1, 2);
  EXPECT_EQ(Check(kTypePutAttrs, many), WireStatus::kInvalid);
}

TEST(Validate, WritePutsAreBoundedAndCarryTheirChecksum) {
  auto write = [](v1::Mut* mut, uint64_t ino, uint64_t offset, const std::string& data) {
    v1::WritePut* w = mut->add_writes();
    w->set_ino(ino);
    w->set_offset(offset);
    w->set_data(data);
    w->set_crc32c(Crc32c(data));
    return w;
  };
  v1::Mkdir carrier;
  carrier.set_parent(1);
  carrier.set_name("d");
  write(carrier.mutable_mut(), 5, 0, std::string(kMaxWritePutBytes - 1, 'a'));
  write(carrier.mutable_mut(), 5, kMaxWritePutBytes - 1, "b");
  EXPECT_EQ(Check(kTypeMkdir, carrier), WireStatus::kOk);
  v1::Mkdir over = carrier;
  write(over.mutable_mut(), 5, kMaxWritePutBytes, "c");
  EXPECT_EQ(Check(kTypeMkdir, over), WireStatus::kInvalid) << "over the bytes";
  v1::PutAttrs alone;
  for (size_t i = 0; i < kMaxWritePuts; ++i) write(alone.mutable_mut(), 5, i, "x");
  EXPECT_EQ(Check(kTypePutAttrs, alone), WireStatus::kOk);
  write(alone.mutable_mut(), 5, kMaxWritePuts, "x");
  EXPECT_EQ(Check(kTypePutAttrs, alone), WireStatus::kInvalid) << "over the count";

  v1::PutAttrs one;
  one.mutable_mut();
  v1::PutAttrs nobody = one;
  write(nobody.mutable_mut(), 0, 0, "x");
  EXPECT_EQ(Check(kTypePutAttrs, nobody), WireStatus::kInvalid) << "ino 0";
  v1::PutAttrs empty = one;
  write(empty.mutable_mut(), 5, 0, "");
  EXPECT_EQ(Check(kTypePutAttrs, empty), WireStatus::kInvalid) << "no data";
  v1::PutAttrs far = one;
  write(far.mutable_mut(), 5, kMaxFileEnd, "x");
  EXPECT_EQ(Check(kTypePutAttrs, far), WireStatus::kFileTooBig);
  v1::PutAttrs torn = one;
  write(torn.mutable_mut(), 5, 0, "xyz")->set_data("xyZ");
  EXPECT_EQ(Check(kTypePutAttrs, torn), WireStatus::kChecksumMismatch);
}

// Create puts (§5.3.2): bounded in count, each naming a parent and a number, with a valid name
// and the mode of a file, FIFO, socket or device; INO_GRANT asks for 1..kMaxInoGrant numbers.
v1::RemovePut Remove(uint64_t parent, const std::string& name, uint64_t ino) {
  v1::RemovePut r;
  r.set_parent(parent);
  r.set_name(name);
  r.set_ino(ino);
  r.set_time_ns(-1);
  return r;
}

TEST(Validate, RemovePutsAreBoundedAndNameAnEntryAndItsInode) {
  auto remove = [](v1::Mut* mut, uint64_t parent, const std::string& name) {
    *mut->add_removes() = Remove(parent, name, 9);
  };
  v1::PutAttrs many;
  for (size_t i = 0; i < kMaxRemovePuts; ++i) remove(many.mutable_mut(), 1, "f");
  EXPECT_EQ(Check(kTypePutAttrs, many), WireStatus::kOk);
  remove(many.mutable_mut(), 1, "f");
  EXPECT_EQ(Check(kTypePutAttrs, many), WireStatus::kInvalid) << "over the count";
  const std::vector<std::pair<v1::RemovePut, WireStatus>> bad = {
      {Remove(0, "f", 9), WireStatus::kInvalid},
      {Remove(1, "", 9), WireStatus::kInvalid},
      {Remove(1, "f", 0), WireStatus::kInvalid},
      {Remove(1, "a/b", 9), WireStatus::kInvalid},
      {Remove(1, ".", 9), WireStatus::kInvalid},
      {Remove(1, std::string(256, 'n'), 9), WireStatus::kNameTooLong},
  };
  for (const auto& [put, want] : bad) {
    v1::Unlink m;  // carried by any mutation, not only PUT_ATTRS
    m.set_parent(1);
    m.set_name("x");
    *m.mutable_mut()->add_removes() = put;
    EXPECT_EQ(Check(kTypeUnlink, m), want) << put.ShortDebugString();
  }
}

TEST(Validate, CreatePutsAreBoundedAndNameWhatMknodOrMkdirCouldMake) {
  auto create = [](v1::Mut* mut, uint64_t parent, const std::string& name, uint64_t ino,
                   uint32_t mode) {
    v1::CreatePut* c = mut->add_creates();
    c->set_parent(parent);
    c->set_name(name);
    c->set_ino(ino);
    c->set_mode(mode);
  };
  v1::PutAttrs ok;
  for (uint32_t type : {S_IFREG, S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK, S_IFDIR}) {
    create(ok.mutable_mut(), 1, "n" + std::to_string(type), 9, type | 07777);
  }
  EXPECT_EQ(Check(kTypePutAttrs, ok), WireStatus::kOk);
  v1::PutAttrs many;
  for (size_t i = 0; i < kMaxCreatePuts; ++i) create(many.mutable_mut(), 1, "f", 9, S_IFREG);
  EXPECT_EQ(Check(kTypePutAttrs, many), WireStatus::kOk);
  create(many.mutable_mut(), 1, "f", 9, S_IFREG);
  EXPECT_EQ(Check(kTypePutAttrs, many), WireStatus::kInvalid) << "over the count";
  struct Bad {
    uint64_t parent;
    std::string name;
    uint64_t ino;
    uint32_t mode;
    WireStatus want;
  };
  for (const Bad& b :
       std::vector<Bad>{{0, "f", 9, S_IFREG, WireStatus::kInvalid},
                        {1, "f", 0, S_IFREG, WireStatus::kInvalid},
                        {1, "a/b", 9, S_IFREG, WireStatus::kInvalid},
                        {1, "..", 9, S_IFREG, WireStatus::kInvalid},
                        {1, std::string(256, 'n'), 9, S_IFREG, WireStatus::kNameTooLong},
                        {1, "d", 9, S_IFDIR | 010755, WireStatus::kInvalid},
                        {1, "l", 9, S_IFLNK | 0777, WireStatus::kInvalid},
                        {1, "m", 9, S_IFREG | 010000, WireStatus::kInvalid}}) {
    v1::Mkdir carrier;
    carrier.set_parent(1);
    carrier.set_name("d");
    create(carrier.mutable_mut(), b.parent, b.name, b.ino, b.mode);
    EXPECT_EQ(Check(kTypeMkdir, carrier), b.want) << b.name << " " << b.mode;
  }
  v1::Mkdir device_dir;
  device_dir.set_parent(1);
  device_dir.set_name("d");
  create(device_dir.mutable_mut(), 1, "d", 9, S_IFDIR | 0755);
  device_dir.mutable_mut()->mutable_creates(0)->set_rdev(5);
  EXPECT_EQ(Check(kTypeMkdir, device_dir), WireStatus::kInvalid) << "a directory with a device";
  v1::InoGrant grant;
  grant.mutable_mut();
  for (uint32_t count : {1u, kMaxInoGrant}) {
    grant.set_count(count);
    EXPECT_EQ(Check(kTypeInoGrant, grant), WireStatus::kOk) << count;
  }
  for (uint32_t count : {0u, kMaxInoGrant + 1}) {
    grant.set_count(count);
    EXPECT_EQ(Check(kTypeInoGrant, grant), WireStatus::kInvalid) << count;
  }
}

TEST(Validate, NamespaceRequests) {
  v1::Lookup lookup;
  lookup.set_parent(1);
  lookup.set_name("f");
  EXPECT_EQ(Check(kTypeLookup, lookup), WireStatus::kOk);
  lookup.set_parent(0);
  EXPECT_EQ(Check(kTypeLookup, lookup), WireStatus::kInvalid);

  v1::Create create;
  create.mutable_mut()->set_slot(0);
  create.set_parent(1);
  create.set_name("f");
  create.set_mode(S_IFREG | 0644);
  EXPECT_EQ(Check(kTypeCreate, create), WireStatus::kOk);
  create.set_mode(S_IFDIR | 0755);
  EXPECT_EQ(Check(kTypeCreate, create), WireStatus::kInvalid);
  create.set_mode(S_IFREG | 0644);
  create.clear_mut();
  EXPECT_EQ(Check(kTypeCreate, create), WireStatus::kInvalid) << "a mutation without its Mut";

  v1::Mknod mknod;
  mknod.mutable_mut();
  mknod.set_parent(1);
  mknod.set_name("p");
  for (uint32_t type : {S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK, S_IFREG}) {
    mknod.set_mode(type | 0600);
    EXPECT_EQ(Check(kTypeMknod, mknod), WireStatus::kOk) << type;
  }
  mknod.set_mode(S_IFDIR | 0600);
  EXPECT_EQ(Check(kTypeMknod, mknod), WireStatus::kInvalid);

  v1::Symlink link;
  link.mutable_mut();
  link.set_parent(1);
  link.set_name("l");
  link.set_target(std::string(4095, 't'));
  EXPECT_EQ(Check(kTypeSymlink, link), WireStatus::kOk);
  link.set_target(std::string(4096, 't'));
  EXPECT_EQ(Check(kTypeSymlink, link), WireStatus::kNameTooLong);
  link.set_target("");
  EXPECT_EQ(Check(kTypeSymlink, link), WireStatus::kInvalid);

  v1::Rename rename;
  rename.mutable_mut();
  rename.set_parent(1);
  rename.set_name("a");
  rename.set_new_parent(1);
  rename.set_new_name("b");
  for (uint32_t flags : {0u, 1u, 2u}) {
    rename.set_flags(flags);
    EXPECT_EQ(Check(kTypeRename, rename), WireStatus::kOk) << flags;
  }
  rename.set_flags(3);
  EXPECT_EQ(Check(kTypeRename, rename), WireStatus::kInvalid);
  rename.set_flags(0);
  rename.set_new_name("..");
  EXPECT_EQ(Check(kTypeRename, rename), WireStatus::kInvalid);

  v1::ReadDir rd;
  rd.set_dir(1);
  rd.set_max_entries(4096);
  EXPECT_EQ(Check(kTypeReadDir, rd), WireStatus::kOk);
  rd.set_max_entries(4097);
  EXPECT_EQ(Check(kTypeReadDir, rd), WireStatus::kInvalid);

  v1::SetAttr sa;
  sa.mutable_mut();
  sa.set_ino(5);
  sa.set_valid(1 | 8 | 1024);
  EXPECT_EQ(Check(kTypeSetAttr, sa), WireStatus::kOk);
  sa.set_valid(64);  // not a bit §5.3 lists
  EXPECT_EQ(Check(kTypeSetAttr, sa), WireStatus::kInvalid);
}

TEST(Validate, DataRequests) {
  const std::string data(4096, 'd');
  v1::Write w;
  w.mutable_mut();
  w.set_ino(5);
  w.set_offset(8192);
  w.set_crc32c(Crc32c(data));
  EXPECT_EQ(Check(kTypeWrite, w, data), WireStatus::kOk);
  EXPECT_EQ(Check(kTypeWrite, w, std::string(4096, 'e')), WireStatus::kChecksumMismatch);
  EXPECT_EQ(Check(kTypeWrite, w, ""), WireStatus::kInvalid);
  w.set_offset(kMaxFileEnd - 10);
  EXPECT_EQ(Check(kTypeWrite, w, data), WireStatus::kFileTooBig);
  w.set_offset(UINT64_MAX);
  EXPECT_EQ(Check(kTypeWrite, w, data), WireStatus::kFileTooBig);

  v1::Read r;
  r.set_ino(5);
  r.set_length(4 << 20);
  EXPECT_EQ(Check(kTypeRead, r), WireStatus::kOk);
  r.set_length((4 << 20) + 1);
  EXPECT_EQ(Check(kTypeRead, r), WireStatus::kInvalid);
  r.set_length(1);
  r.set_offset(kMaxFileEnd);
  EXPECT_EQ(Check(kTypeRead, r), WireStatus::kFileTooBig);

  v1::Fallocate f;
  f.mutable_mut();
  f.set_ino(5);
  f.set_length(1);
  for (uint32_t mode : {0x00u, 0x01u, 0x03u, 0x10u, 0x11u}) {
    f.set_mode(mode);
    EXPECT_EQ(Check(kTypeFallocate, f), WireStatus::kOk) << mode;
  }
  for (uint32_t mode : {0x02u, 0x08u, 0x20u}) {  // punch without keep-size, collapse, insert
    f.set_mode(mode);
    EXPECT_EQ(Check(kTypeFallocate, f), WireStatus::kNotSupported) << mode;
  }
  // Linux checks the range before the mode: a length of 0 is EINVAL whatever the mode.
  f.set_length(0);
  for (uint32_t mode : {0x00u, 0x02u, 0x08u}) {
    f.set_mode(mode);
    EXPECT_EQ(Check(kTypeFallocate, f), WireStatus::kInvalid) << mode;
  }

  v1::Lseek l;
  l.set_ino(5);
  l.set_whence(3);
  EXPECT_EQ(Check(kTypeLseek, l), WireStatus::kOk);
  l.set_whence(0);
  EXPECT_EQ(Check(kTypeLseek, l), WireStatus::kInvalid);
}

TEST(Validate, XattrRequests) {
  v1::SetXattr s;
  s.mutable_mut();
  s.set_ino(5);
  s.set_name("user.k");
  s.set_value(std::string(65536, 'v'));
  EXPECT_EQ(Check(kTypeSetXattr, s), WireStatus::kOk);
  s.set_value(std::string(65537, 'v'));
  EXPECT_EQ(Check(kTypeSetXattr, s), WireStatus::kTooBig);
  s.set_value("v");
  s.set_flags(3);
  EXPECT_EQ(Check(kTypeSetXattr, s), WireStatus::kInvalid);
  s.set_flags(1);
  for (const char* name : {"trusted.x", "security.selinux"}) {
    s.set_name(name);
    EXPECT_EQ(Check(kTypeSetXattr, s), WireStatus::kOk) << name;
  }
  s.set_name("os2.x");
  EXPECT_EQ(Check(kTypeSetXattr, s), WireStatus::kNotSupported);
  s.set_name("user.");
  EXPECT_EQ(Check(kTypeSetXattr, s), WireStatus::kNotSupported);
  s.set_name(std::string(256, 'u'));
  EXPECT_EQ(Check(kTypeSetXattr, s), WireStatus::kRange);

  v1::GetXattr g;
  g.set_ino(5);
  g.set_name("system.posix_acl_access");
  EXPECT_EQ(Check(kTypeGetXattr, g), WireStatus::kNotSupported);
  ValidationContext acl;
  acl.posix_acl = true;
  EXPECT_EQ(Check(kTypeGetXattr, g, {}, acl), WireStatus::kOk);
}

}  // namespace
}  // namespace archil::proto
