// One op executed on one side of a lockstep run, and its result as text (Outcome).
//
// Contract: Apply makes the op's calls on the side (paths under its root, descriptors from its
// slots, which an open or a close updates) and writes the result so that the same behaviour on
// both sides gives equal Outcomes. Where kAllowed tolerates a difference, the side's result is
// written so that both give the same text, and the use is counted (Allowed). An op with Op::as set
// runs in a forked child, as that uid and gid with no supplementary groups. errno is not kept.
#pragma once

#include <string>
#include <utility>

#include "mount_diff/generate.h"
#include "mount_diff/ops.h"

namespace archil::testing::mount_diff {

// What an op did on one side; both fields are compared.
struct Outcome {
  // Implicit: `return {text}` and `return {text, data}` read best in Apply.
  Outcome(std::string t, std::string d = "")  // NOLINT(google-explicit-constructor)
      : text(std::move(t)), data(std::move(d)) {}
  std::string text;
  std::string data;  // bytes read, a link's target, an xattr's value
};

Outcome Apply(Side& s, const Op& op);

}  // namespace archil::testing::mount_diff
