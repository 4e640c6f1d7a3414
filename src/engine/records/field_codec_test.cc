// field_codec.h on a toy record: exact size and bytes, round trip, lengths and ranges refused with
// record_util.h's messages, reserved bytes ignored, a count, a layout without fmt.
#include "engine/records/field_codec.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/types.h"

namespace archil::engine {
namespace {

enum class CodecToyColor : uint8_t { kRed = 1, kGreen = 2, kBlue = 3 };

struct CodecToy {
  CodecToyColor color = CodecToyColor::kRed;
  uint16_t small = 0;
  uint32_t level = 0;  // 0..1000
  uint64_t big = 0;
  int64_t time = 0;
  Epoch epoch;
  std::array<uint8_t, 4> tag{};
  std::vector<uint32_t> items;  // follows the layout; the layout holds its count
  bool operator==(const CodecToy&) const = default;
};

// clang-format off
constexpr auto kCodecToyLayout = Layout<CodecToy>(
    Fmt(),
    Field(&CodecToy::color, "color", CodecToyColor::kRed, CodecToyColor::kBlue),
    Field(&CodecToy::small),
    Field(&CodecToy::level, "level", 0, 1000),
    Count16(&CodecToy::items),
    Reserved(2),
    Field(&CodecToy::big),
    Field(&CodecToy::time),
    Field(&CodecToy::epoch),
    Field(&CodecToy::tag));

// An operand-like layout: no fmt byte, the first byte is an enum its decoder checks itself.
constexpr auto kCodecToyOpLayout = Layout<CodecToy>(
    UncheckedEnum(&CodecToy::color),
    Reserved(1),
    Field(&CodecToy::small));
// clang-format on
static_assert(kCodecToyLayout.size() == 1 + 1 + 2 + 4 + 2 + 2 + 8 + 8 + 8 + 4);
static_assert(kCodecToyOpLayout.size() == 4);

CodecToy SampleCodecToy() {
  CodecToy t;
  t.color = CodecToyColor::kGreen;
  t.small = 0x1211;
  t.level = 999;
  t.big = 0x2827262524232221;
  t.time = -2;
  t.epoch = Epoch(0x3837363534333231);
  t.tag = {0x41, 0x42, 0x43, 0x44};
  t.items = {7, 8, 9};
  return t;
}

// Without the items, which the layout does not hold.
CodecToy CodecToyWithoutItems(CodecToy t) {
  t.items.clear();
  return t;
}

TEST(FieldCodecTest, EncodesEveryFieldInOrderLittleEndian) {
  const std::string v = kCodecToyLayout.Encode(SampleCodecToy());
  const std::string want = std::string("\x01", 1) +              // fmt
                           "\x02" +                              // color
                           "\x11\x12" +                          // small
                           std::string("\xE7\x03\x00\x00", 4) +  // level 999
                           std::string("\x03\x00", 2) +          // count of items
                           std::string("\x00\x00", 2) +          // reserved
                           "\x21\x22\x23\x24\x25\x26\x27\x28" +  // big
                           "\xFE\xFF\xFF\xFF\xFF\xFF\xFF\xFF" +  // time -2
                           "\x31\x32\x33\x34\x35\x36\x37\x38" +  // epoch
                           "\x41\x42\x43\x44";                   // tag
  ASSERT_EQ(v.size(), kCodecToyLayout.size());
  EXPECT_EQ(v, want);

  std::string appended = "head";
  kCodecToyLayout.Put(&appended, SampleCodecToy());
  EXPECT_EQ(appended, "head" + want);
}

TEST(FieldCodecTest, RoundTrips) {
  const std::string v = kCodecToyLayout.Encode(SampleCodecToy());
  auto d = kCodecToyLayout.DecodeExact("toy", "TOY", v);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(*d, CodecToyWithoutItems(SampleCodecToy()));
  EXPECT_EQ(kCodecToyLayout.CountIn(v), 3u);

  CodecToy got;
  ASSERT_TRUE(kCodecToyLayout.Get("TOY", v + "tail", &got).ok());  // Get reads the prefix only
  EXPECT_EQ(got, CodecToyWithoutItems(SampleCodecToy()));

  // Reserved bytes are ignored on read.
  std::string rsv = v;
  rsv[10] = 'x';
  rsv[11] = 'y';
  EXPECT_EQ(*kCodecToyLayout.DecodeExact("toy", "TOY", rsv),
            CodecToyWithoutItems(SampleCodecToy()));
}

TEST(FieldCodecTest, RefusesWrongLengthsAndFmtWithRecordUtilsMessages) {
  const std::string v = kCodecToyLayout.Encode(SampleCodecToy());
  auto message = [](std::string_view in) {
    auto d = kCodecToyLayout.DecodeExact("toy", "TOY", in);
    EXPECT_EQ(d.status().code(), Status::Code::kCorruption);
    return d.status().message();
  };
  EXPECT_EQ(message(""), "TOY record: 0 bytes, want at least 1");
  EXPECT_EQ(message(v.substr(0, v.size() - 1)), "TOY record: 39 bytes, want 40");
  EXPECT_EQ(message(v + '\0'), "TOY record: 41 bytes, want 40");
  std::string bad_fmt = v;
  bad_fmt[0] = 2;
  EXPECT_EQ(message(bad_fmt), "toy fmt 2 unsupported");

  auto op = [](std::string_view in) { return kCodecToyOpLayout.DecodeExact("toy op", in); };
  EXPECT_EQ(op(std::string("\x02\x00\x11\x12", 4))->small, 0x1211);
  EXPECT_EQ(op(std::string("\x02\x00\x11", 3)).status().message(),
            "toy op record: 3 bytes, want 4");
  EXPECT_EQ(op(std::string("\x02\x00\x11\x12\x13", 5)).status().message(),
            "toy op record: 5 bytes, want 4");
}

TEST(FieldCodecTest, RefusesValuesOutOfRangeWithBadEnum) {
  const std::string v = kCodecToyLayout.Encode(SampleCodecToy());
  auto message = [](std::string in) {
    return kCodecToyLayout.DecodeExact("toy", "TOY", in).status().message();
  };
  std::string bad = v;
  bad[1] = 0;
  EXPECT_EQ(message(bad), "TOY record: color 0 out of range");
  bad[1] = 4;
  EXPECT_EQ(message(bad), "TOY record: color 4 out of range");
  bad = v;
  bad[4] = static_cast<char>(0xE9);  // level 1001
  EXPECT_EQ(message(bad), "TOY record: level 1001 out of range");
  bad[1] = 9;  // both out of range: the first field's error
  EXPECT_EQ(message(bad), "TOY record: color 9 out of range");

  // The bounds themselves are in range.
  CodecToy edge = SampleCodecToy();
  edge.color = CodecToyColor::kBlue;
  edge.level = 1000;
  EXPECT_TRUE(kCodecToyLayout.DecodeExact("toy", "TOY", kCodecToyLayout.Encode(edge)).ok());

  // An unchecked enum is read as is, for its decoder to check.
  auto op = kCodecToyOpLayout.DecodeExact("toy op", std::string("\x09\x00\x00\x00", 4));
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(static_cast<int>(op->color), 9);
}

}  // namespace
}  // namespace archil::engine
