#include "engine/records/envelope.h"

#include "engine/records/record_util.h"

namespace archil::engine {

void PutEnvelope(std::string* dst, const Envelope& env) {
  dst->push_back(static_cast<char>(kValueFmt));
  dst->push_back(static_cast<char>(env.kind));
  PutFixed16LE(dst, env.flags);
  PutFixed64LE(dst, env.birth.value());
}

std::string EncodeWhiteout(Epoch birth) {
  std::string v;
  PutEnvelope(&v, Envelope{ValueKind::kWhiteout, 0, birth});
  return v;
}

Result<Envelope> DecodeEnvelope(std::string_view cf, std::string_view value,
                                std::string_view* body) {
  ARCHIL_RETURN_IF_ERROR(CheckFmt(cf, std::string(cf) + " envelope", value));
  if (value.size() < kEnvelopeSize) {
    return BadLength(std::string(cf) + " envelope", value.size(), "at least 12");
  }
  Envelope env;
  const uint8_t kind = static_cast<uint8_t>(value[1]);
  if (kind > static_cast<uint8_t>(ValueKind::kWhiteout)) {
    return Status::Corruption(std::string(cf) + " envelope: unknown kind " + std::to_string(kind));
  }
  env.kind = static_cast<ValueKind>(kind);
  env.flags = DecodeFixed16LE(value.data() + 2);
  env.birth = Epoch(DecodeFixed64LE(value.data() + 4));
  *body = value.substr(kEnvelopeSize);
  if (env.kind == ValueKind::kWhiteout && !body->empty()) {
    return BadLength(std::string(cf) + " WHITEOUT", value.size(), "12");
  }
  return env;
}

}  // namespace archil::engine
