// AttrLog: the attribute changes and small writes a client that alone changes its disk answers
// itself, and the order they reach the server in (ADR 0028, ADR 0029, docs/protocol.md §5.3.2).
//
// A file unpacked by `tar` costs the kernel's SETATTRs of its owner, mode and times, each one a
// round trip. On an exclusive mount the client knows an inode's attributes exactly when the last
// answer that carried them came from a mutation that was alone in flight (nothing else could
// change the inode meanwhile): a SETATTR of such an inode that changes no size is answered here,
// from those attributes, and becomes a *put*: the values it leaves, its change time included. The
// puts ride ahead of the next mutation this client sends (Mut.puts), or alone (PUT_ATTRS) at a
// sync point or when the oldest is `max_age` old.
//
// A WRITE that appends to such a file (at its size, the file dense: every block up to its size
// written, as a file this client created and wrote from the start is) is answered here the same
// way (AnswerWrite), while its data waiting here is at most `max_bytes`: the data rides ahead of
// the next mutation too (Mut.writes, before the puts, which hold the times the write showed). A
// read of such a file's data must send what waits first (Unsent).
//
// A create of a file, FIFO, socket, device or directory in a directory whose names the client
// knows is answered here the same way (AnswerCreate, ADR 0025), with an inode number the server
// granted the session (client/ino_pool.h): the create rides ahead of the next mutation
// (Mut.creates, before the writes, which may fill the new file), and a new non-directory is known
// from then on. A read that could see it (a LOOKUP or READDIR of its directory, a READ, GETXATTR
// or LISTXATTR of it; a GETATTR, LOOKUP in or READDIR of a new directory) must send it first
// (Unsent, UnsentIn, then AwaitCarrier). Creates are carried in the order of their numbers, which
// is the order they were answered in (the pool hands numbers out in increasing order), so a
// directory's create precedes the creates in it.
//
// A directory's attributes are never kept here (Get, Answer): they are DirAttrs'
// (client/dir_attrs.h), which creates and removes answered here in it change. A directory
// created here carries no attribute put (its creates in it set its times).
//
// An unlink of the only name of a file the mount does not have open, in a directory whose
// attributes it keeps, is answered here too (AnswerRemove): the remove rides after everything
// else the next mutation carries (Mut.removes). That gives the same result as the order it was
// answered in: the inode goes with the name, so nothing answered later can name it, and a create
// of a name whose remove waits is not answered here (it goes to the server, carrying the remove
// first). A LOOKUP of a removed name, or a READDIR of its directory, sends it first (UnsentIn).
//
// What waits is bounded by what one request may carry (protocol.md §5.3.2): at most kMaxCreates
// creates, kMaxRemoves removes, kMaxWrites files with written data and kMaxBytes bytes of it;
// past those an answer here is refused, and the operation goes to the server, carrying what
// waits.
//
// The order is the contract: the disk must hold a prefix of the client's operations.
//   - A SETATTR is answered here only while no mutation is in flight: every operation answered
//     before it has been applied by the server, so its put follows them.
//   - Begin hands every pending put to the mutation being sent (the *carrier*), and a mutation
//     that begins while a carrier is in flight waits for its answer: the puts are applied before
//     every operation that follows them. (One carrier at a time; mutations without puts run in
//     parallel as before.)
//   - A put is a value, not a change: applying it twice (a retry) leaves the same attributes.
// What the server did not apply (End with puts_applied false) is counted as lost: the mount
// reports it at the next sync point, as a local file system reports a write-back error.
//
// A non-directory's attributes are known (Get) from three sources: a put (pending or carried: what
// the server will hold), a create answered here, and an answer that carried an inode's attributes
// to a mutation alone in flight. Every mutation that begins forgets what was known from answers (it
// may change any inode: an unlink changes its target's link count); puts stay until their carrier's
// answer. So outside the creates answered here, at most one inode is known at a time, the last lone
// answer's (enough for the files an archive or a copy makes one after the other).
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/mutex.h"
#include "posix/types.h"

namespace archil::client {

class AttrLog {
 public:
  struct Stats {
    uint64_t answered = 0;          // SETATTRs answered here
    uint64_t answered_writes = 0;   // WRITEs answered here
    uint64_t answered_creates = 0;  // creates answered here
    size_t pending_creates = 0;     // creates waiting now
    uint64_t answered_removes = 0;  // unlinks answered here
    size_t pending_removes = 0;     // unlinks waiting now
    uint64_t carried = 0;           // puts and removes handed to a carrier
    uint64_t lost = 0;              // ... that its answer says were not applied (or never came)
    size_t pending = 0;             // puts and removes waiting now
    size_t pending_bytes = 0;       // bytes of written data waiting now
    int64_t oldest_pending_ns = 0;  // when the oldest of them was answered (0: none)
  };

  // A mutation's passage, from Begin to End.
  struct Ticket {
    uint64_t id = 0;
    bool alone_at_start = false;
    posix::Puts puts;  // what this mutation carries (its Mut.creates, writes, puts, removes)
  };

  // Before a mutation is sent: waits while another carries puts, then hands it every pending
  // put. REQUIRES: one End per Begin, on any thread.
  Ticket Begin() ARCHIL_EXCLUDES(mu_);
  // After its answer (or the failure to get one). `puts_applied`: the server applied the puts it
  // carried (an OK answer, or an error that does not say they were lost). `learned`: the
  // attributes of an inode the answer carried (its own inode: a create's, a write's), kept if the
  // mutation was alone in flight from Begin to End. `only_puts`: the mutation changed nothing but
  // what it carried (PUT_ATTRS); then, if it was alone and its puts applied, the carried inodes'
  // attributes stay known (they are what the server holds), so that a file written and fsynced
  // in turn keeps being answered here.
  void End(Ticket ticket, bool puts_applied, const std::optional<posix::Attr>& learned,
           bool only_puts = false) ARCHIL_EXCLUDES(mu_);

  // A SETATTR answered here: the attributes after it, or nullopt if it must go to the server (a
  // mutation is in flight, the inode's attributes are not known, or it changes a size). `now`: the
  // client's time for kNow updates and the change time; `now_ns` its CLOCK_MONOTONIC time (for the
  // age of the oldest put).
  std::optional<posix::Attr> Answer(posix::Ino ino, const posix::SetAttrRequest& request,
                                    posix::Timespec now, int64_t now_ns) ARCHIL_EXCLUDES(mu_);

  // A WRITE of `data` at `offset` answered here: the attributes after it, or nullopt if it must go
  // to the server (as Answer, and unless it appends to a dense regular file whose data waiting
  // here stays within `max_bytes`).
  std::optional<posix::Attr> AnswerWrite(posix::Ino ino, uint64_t offset, std::string_view data,
                                         size_t max_bytes, posix::Timespec now, int64_t now_ns)
      ARCHIL_EXCLUDES(mu_);

  // What one request may carry (protocol.md §5.3.2: proto::kMaxCreatePuts, kMaxRemovePuts,
  // kMaxWritePuts, kMaxWritePutBytes).
  static constexpr size_t kMaxCreates = 256;
  static constexpr size_t kMaxRemoves = 256;
  static constexpr size_t kMaxWrites = 64;
  static constexpr size_t kMaxBytes = 128 << 10;
  // A create answered here: `create` (its number granted to the session, its name absent from
  // its parent, which the caller knows) becomes a pending create of `attr`, the new inode's
  // attributes. False if it must go to the server: a mutation is in flight, kMaxCreates wait, or
  // a remove of its name waits.
  bool AnswerCreate(const posix::CreatePut& create, const posix::Attr& attr, int64_t now_ns)
      ARCHIL_EXCLUDES(mu_);
  // Whether the server may not hold what was answered here of `ino`: written data of it waits
  // here (not yet handed to a carrier), or it was created here and its create waits or its
  // carrier was not answered. A read of `ino` sends what waits first.
  bool Unsent(posix::Ino ino) const ARCHIL_EXCLUDES(mu_);
  // An unlink answered here: `remove` (of the only name of a non-directory the caller does not
  // have open, or of an empty directory it does not have open, in a directory whose attributes it
  // keeps) becomes a pending remove. False if it
  // must go to the server: a mutation is in flight, kMaxRemoves wait, or the file's create waits.
  bool AnswerRemove(const posix::RemovePut& remove, int64_t now_ns) ARCHIL_EXCLUDES(mu_);
  // Whether a create in directory `dir`, or a remove from it (of `name` only, if given: what a
  // LOOKUP of it could see), was answered here and the server may not hold it yet.
  bool UnsentIn(posix::Ino dir, std::optional<std::string_view> name = std::nullopt) const
      ARCHIL_EXCLUDES(mu_);
  // Waits until no carrier is in flight.
  void AwaitCarrier() const ARCHIL_EXCLUDES(mu_);

  // The attributes known of `ino`, if any (never of a directory: DirAttrs keeps those).
  std::optional<posix::Attr> Get(posix::Ino ino) const ARCHIL_EXCLUDES(mu_);
  // Replaces `*a` (an answer of the server to a read: LOOKUP, READDIRPLUS) with what a put not
  // yet answered says of its inode.
  void Overlay(posix::Attr* a) const ARCHIL_EXCLUDES(mu_);

  Stats stats() const ARCHIL_EXCLUDES(mu_);

 private:
  enum class State { kKnown, kPending, kCarried };
  struct Entry {
    posix::Attr attr;
    State state = State::kKnown;
    posix::AttrPut put;  // kPending, kCarried
    // kPending: data written here at data_offset, not yet carried (the put holds its times).
    uint64_t data_offset = 0;
    std::string data = {};
    // Created here (AnswerCreate): its create while pending, and its parent until the server
    // holds it (0: not created here, or held).
    std::optional<posix::CreatePut> create = {};
    uint64_t unsent_in = 0;
    // A directory created here: kept only for its create (Begin, Unsent); its attributes are
    // DirAttrs' (Get, Answer, Overlay never give them; End never keeps them). Directories are
    // entered by AnswerCreate only: End never learns one.
    bool dir = false;
  };
  // `e` is held by the server now: it is no longer counted in unsent_in_.
  void Held(Entry& e) ARCHIL_REQUIRES(mu_);
  // Makes `e` (of `ino`) pending if it is not: an empty put of it.
  void Pend(posix::Ino ino, Entry& e, int64_t now_ns) ARCHIL_REQUIRES(mu_);

  mutable Mutex mu_;
  mutable CondVar carrier_done_{&mu_};
  std::unordered_map<uint64_t, Entry> entries_ ARCHIL_GUARDED_BY(mu_);
  uint64_t next_id_ ARCHIL_GUARDED_BY(mu_) = 0;
  uint32_t in_flight_ ARCHIL_GUARDED_BY(mu_) = 0;
  bool carrier_in_flight_ ARCHIL_GUARDED_BY(mu_) = false;
  size_t pending_ ARCHIL_GUARDED_BY(mu_) = 0;
  size_t pending_bytes_ ARCHIL_GUARDED_BY(mu_) = 0;
  size_t pending_writes_ ARCHIL_GUARDED_BY(mu_) = 0;   // entries with data waiting
  size_t pending_creates_ ARCHIL_GUARDED_BY(mu_) = 0;  // entries with their create waiting
  // Directories with creates answered here that the server may not hold yet, and how many.
  std::unordered_map<uint64_t, uint32_t> unsent_in_ ARCHIL_GUARDED_BY(mu_);
  // Removes answered here and not yet carried; and, until their carrier's answer, the names of
  // those waiting or carried (their parent's 8 bytes, then the name) and their directories.
  // (Every remove answered here is carried by the next mutation, and none is answered while one
  // is in flight, so the carrier's answer clears the names.)
  std::vector<posix::RemovePut> removes_ ARCHIL_GUARDED_BY(mu_);
  std::unordered_set<std::string> removing_ ARCHIL_GUARDED_BY(mu_);
  std::unordered_map<uint64_t, uint32_t> removing_in_ ARCHIL_GUARDED_BY(mu_);
  int64_t oldest_pending_ns_ ARCHIL_GUARDED_BY(mu_) = 0;
  Stats counts_ ARCHIL_GUARDED_BY(mu_);
};

}  // namespace archil::client
