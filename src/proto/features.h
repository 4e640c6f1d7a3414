// The feature bits of HELLO (docs/protocol.md §5.2): what a client asks for and a server grants
// (client.features & server.features).
#pragma once

#include <cstdint>

namespace archil::proto {

inline constexpr uint64_t kFeatureLseek = uint64_t{1} << 3;  // SEEK_DATA / SEEK_HOLE
// Mutations with Mut.unstable are answered once applied, before the server's WAL sync; COMMIT
// makes every one answered before it durable (protocol.md §8.2).
inline constexpr uint64_t kFeatureUnstable = uint64_t{1} << 7;
// Mut.puts: attribute changes a client answered itself, applied before the request that carries
// them, and PUT_ATTRS, which carries only them (protocol.md §5.3.2, ADR 0028).
inline constexpr uint64_t kFeatureAttrPuts = uint64_t{1} << 5;
// With kFeatureAttrPuts, Mut.writes: small writes a client answered itself, applied before the
// puts (protocol.md §5.3.2, ADR 0029).
inline constexpr uint64_t kFeatureWritePuts = uint64_t{1} << 6;
// With kFeatureWritePuts, Mut.creates: creates a client answered itself with inode numbers
// INO_GRANT gave its session, applied before the writes (protocol.md §5.3.2-5.3.3, ADR 0025).
inline constexpr uint64_t kFeatureCreatePuts = uint64_t{1} << 10;
// With kFeatureWritePuts, Mut.removes: unlinks a client answered itself, applied after the puts
// (protocol.md §5.3.2, ADR 0025).
inline constexpr uint64_t kFeatureRemovePuts = uint64_t{1} << 11;
// With kFeatureCreatePuts, a CreatePut may make a directory (S_IFDIR): a mkdir the client answered
// itself (protocol.md §5.3.2, ADR 0025).
inline constexpr uint64_t kFeatureDirPuts = uint64_t{1} << 12;

}  // namespace archil::proto
