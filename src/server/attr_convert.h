// Conversions between the engine's posix types and the protocol's messages (docs/protocol.md
// §5.3). Pure.
#pragma once

#include "posix/types.h"
#include "proto/messages.h"

namespace archil::server {

void ToProto(const posix::Attr& a, v1::Attr* out);
// SetAttr's `valid` bits (FUSE_SET_ATTR_* values) and fields as the engine's request. CTIME is
// ignored: the engine sets ctime on every change.
posix::SetAttrRequest FromProto(const v1::SetAttr& m);
// An attribute put (protocol.md §5.3.2) as the engine's.
posix::AttrPut FromProto(const v1::AttrPut& m);

}  // namespace archil::server
