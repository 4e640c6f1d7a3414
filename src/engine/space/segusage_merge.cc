#include "engine/space/segusage_merge.h"

#include <optional>
#include <string_view>
#include <vector>

#include "base/log.h"
#include "engine/fs/chunk_map.h"

namespace archil::engine {
namespace {

class SegUsageMergeOperator final : public rocksdb::MergeOperator {
 public:
  const char* Name() const override { return "archil.SegUsageMerge"; }

  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    std::optional<std::string_view> base;
    if (in.existing_value) base = in.existing_value->ToStringView();
    std::vector<std::string_view> operands;
    operands.reserve(in.operand_list.size());
    for (const rocksdb::Slice& op : in.operand_list) operands.push_back(op.ToStringView());
    Result<std::string> merged = SegUsageFullMerge(base, operands);
    if (!merged.ok()) {
      ARCHIL_LOG(kError) << "segment liveness merge failed: " << merged.status().ToString();
      return false;
    }
    out->new_value = std::move(merged).value();
    return true;
  }
};

}  // namespace

std::shared_ptr<rocksdb::MergeOperator> NewSegUsageMergeOperator() {
  return std::make_shared<SegUsageMergeOperator>();
}

}  // namespace archil::engine
