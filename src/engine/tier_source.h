// TierSource: what the tier needs of the engine (docs/tiering.md §1-§4): the sealed segments to
// upload and the marks that they are stored, each disk's commit log (the outbox) and how far it
// is shipped, a consistent scan of a disk's state for snapshots, the lineage of every disk, and
// the deleted disks to mark in the bucket and then collect. The engine (engine/engine.h) is the
// one implementation; the tier's workers depend on this role, not on all of the engine.
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "engine/records/column_families.h"
#include "engine/types.h"

namespace archil::engine {

// A sealed segment the tier has to upload (TierSource::SealedSegments).
struct SealedSegment {
  DiskNo disk;  // the disk whose data it holds (seg_disk)
  DiskNo root;  // the root of that disk's lineage: the object's prefix (formats.md §8)
  SegNo seg;
  std::string path;  // its file: immutable while SEALED
  int64_t sealed_ns = 0;
};

// Where a disk sits in its lineage.
struct LineageInfo {
  DiskNo root;    // the lineage's root (the disk itself for a root)
  DiskNo parent;  // 0 for a root
  bool hidden = false;
};

class TierSource {
 public:
  virtual ~TierSource() = default;

  // The owner generation under which this engine writes to its object store (docs/tiering.md
  // §5: 1 until a recovery or a takeover raises it): new segments carry it in their numbers, and
  // log and snapshot objects in their names.
  virtual uint32_t owner_gen() const = 0;

  // ---- disks ----
  // Every disk, hidden ones (deleted, kept for their branches) included.
  virtual std::vector<DiskNo> ListDisksAndHidden() = 0;
  // Hidden disks included; NotFound if unknown (or deleted).
  virtual Result<LineageInfo> Lineage(DiskNo disk) = 0;

  // ---- segments (docs/tiering.md §1) ----
  // Every SEALED segment (not yet uploaded) of every disk, hidden ones included, oldest seal
  // first. A segment listed here may die or its disk be purged before the caller reads it: its
  // file is then gone (NotFound) and SegmentUploaded says NotFound.
  virtual Result<std::vector<SealedSegment>> SealedSegments() = 0;
  // The tier stored sealed segment `seg` of `disk` (it may be deleted once nothing in it is
  // live), as a link to the segment file itself when `stored_by_link` (such a segment is never
  // hole-punched). NotFound if the disk or segment is gone; FailedPrecondition if it is open.
  virtual Status SegmentUploaded(DiskNo disk, SegNo seg, bool stored_by_link) = 0;
  // Whether segment `seg` of `disk` is in the object store: UPLOADED, or no record (with a tier a
  // segment dies only once uploaded, so a record that referenced it was stored before).
  virtual Result<bool> SegmentStored(DiskNo disk, SegNo seg) = 0;
  // Every segment `disk`'s records name, with the path of its file (recovery puts it there).
  virtual Result<std::vector<std::pair<SegNo, std::string>>> SegmentFilesOf(DiskNo disk) = 0;

  // ---- the commit log (docs/tiering.md §2) ----
  // Up to `max` records of `disk`'s outbox with seq after `after`, in seq order, each as
  // formats.md §8.3 encodes it (engine/records/log_record.h).
  virtual Result<std::vector<std::pair<Seq, std::string>>> OutboxRecords(DiskNo disk, Seq after,
                                                                         size_t max) = 0;
  // The log shipper stored `disk`'s records up to `through`: one batch sets LOCAL.uploaded_seq
  // and deletes them from the outbox (Advance). A `through` at or below uploaded_seq changes
  // nothing.
  virtual Status LogShipped(DiskNo disk, Seq through) = 0;
  // The last seq of `disk`'s log that is in the object store (LOCAL.uploaded_seq; 0 if none).
  virtual Result<Seq> UploadedSeq(DiskNo disk) = 0;
  // The seq of `disk`'s last committed record (COUNTERS.last_seq; 0 if it has no log).
  virtual Result<Seq> LastSeq(DiskNo disk) = 0;

  // ---- snapshots (docs/tiering.md §3) ----
  // Reads every logged key of `disk` (LoggedKey) in one consistent view of the database: `begin`
  // gets the disk's last seq in that view, then `each` every key in (CF, key) order, merge CFs'
  // values merged. Returns the first non-OK status of a callback. NotFound if the disk has no
  // log (no COUNTERS record).
  virtual Status ScanDiskState(
      DiskNo disk, const std::function<Status(Seq)>& begin,
      const std::function<Status(Cf, std::string_view, std::string_view)>& each) = 0;

  // ---- deleted disks (docs/tiering.md §4) ----
  // A deleted disk's space is freed only once the tier has marked it deleted in the bucket, so
  // that no recovery brings it back: these are the deleted disks (and their lineage roots) still
  // to mark.
  virtual std::vector<std::pair<DiskNo, DiskNo>> DeletionsToMark() = 0;
  // The tier marked `disk` deleted: a tombstone is written for the collector and the disk is
  // purged. NotFound if it is not waiting for its mark.
  virtual Status DeletionMarked(DiskNo disk) = 0;
  // Deleted, marked and purged disks whose objects the collector has yet to delete, with their
  // lineage roots; ForgetDeletedDisk once it has.
  virtual Result<std::vector<std::pair<DiskNo, DiskNo>>> DeletedDisks() = 0;
  virtual Status ForgetDeletedDisk(DiskNo disk) = 0;
};

}  // namespace archil::engine
