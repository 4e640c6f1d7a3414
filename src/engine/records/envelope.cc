#include "engine/records/envelope.h"

#include "engine/records/field_codec.h"
#include "engine/records/record_util.h"

namespace archil::engine {

namespace {

// formats.md §4, one line per field. DecodeEnvelope checks the kind (its message names the CF).
// clang-format off
constexpr auto kEnvelopeLayout = Layout<Envelope>(
    Fmt(),
    UncheckedEnum(&Envelope::kind),
    Field(&Envelope::flags),
    Field(&Envelope::birth));
static_assert(kEnvelopeLayout.size() == kEnvelopeSize);
// clang-format on

}  // namespace

void PutEnvelope(std::string* dst, const Envelope& env) { kEnvelopeLayout.Put(dst, env); }

std::string EncodeWhiteout(Epoch birth) {
  return kEnvelopeLayout.Encode(Envelope{ValueKind::kWhiteout, 0, birth});
}

Result<Envelope> DecodeEnvelope(std::string_view cf, std::string_view value,
                                std::string_view* body) {
  ARCHIL_RETURN_IF_ERROR(CheckFmt(cf, std::string(cf) + " envelope", value));
  if (value.size() < kEnvelopeSize) {
    return BadLength(std::string(cf) + " envelope", value.size(), "at least 12");
  }
  Envelope env;
  ARCHIL_RETURN_IF_ERROR(kEnvelopeLayout.Get("envelope", value, &env));
  if (env.kind != ValueKind::kValue && env.kind != ValueKind::kWhiteout) {
    return Status::Corruption(std::string(cf) + " envelope: unknown kind " +
                              std::to_string(static_cast<unsigned>(env.kind)));
  }
  *body = value.substr(kEnvelopeSize);
  if (env.kind == ValueKind::kWhiteout && !body->empty()) {
    return BadLength(std::string(cf) + " WHITEOUT", value.size(), "12");
  }
  return env;
}

}  // namespace archil::engine
