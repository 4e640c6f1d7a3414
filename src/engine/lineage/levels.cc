#include "engine/lineage/levels.h"

#include <algorithm>

#include "base/coding.h"
#include "engine/records/meta_records.h"

namespace archil::engine {
namespace {

// Chains longer than this are a corrupt lineage (a cycle), not a deep one.
constexpr int kMaxLevels = 100000;

bool NamedTag(HistTag tag) { return tag == HistTag::kDentry || tag == HistTag::kXattr; }

Result<Envelope> EnvelopeOf(Cf cf, std::string_view value) {
  std::string_view body;
  return DecodeEnvelope(CfNames()[static_cast<size_t>(cf)], value, &body);
}

}  // namespace

LevelKey InodeLevelKey(Ino ino) { return {Cf::kInode, HistTag::kInode, ino, Ino8(ino)}; }

LevelKey DentryLevelKey(Ino parent, uint64_t cookie, std::string_view name) {
  std::string rel = Ino8(parent);
  PutFixed64BE(&rel, cookie);
  rel.append(name);
  return {Cf::kDentry, HistTag::kDentry, parent, std::move(rel)};
}

LevelKey XattrLevelKey(Ino ino, std::string_view name) {
  std::string rel = Ino8(ino);
  rel.append(name);
  return {Cf::kXattr, HistTag::kXattr, ino, std::move(rel)};
}

LevelKey ChunkLevelKey(Ino ino, uint64_t chunk) {
  std::string rel = Ino8(ino);
  PutFixed64BE(&rel, chunk);
  return {Cf::kChunk, HistTag::kChunk, ino, std::move(rel)};
}

std::string HeadKeyAt(DiskNo disk, const LevelKey& k) { return DiskPrefix(disk) + k.rel; }

std::string HistSuffixOf(const LevelKey& k) {
  std::string s = k.rel;
  if (NamedTag(k.tag)) s.push_back('\0');
  return s;
}

Result<std::optional<Found>> ResolveAt(KvReader& r, const Cfs& cfs, LevelRef at,
                                       const LevelKey& k) {
  Result<std::string> h = r.Get(cfs[k.cf], HeadKeyAt(at.disk, k));
  if (h.ok()) {
    ARCHIL_ASSIGN_OR_RETURN(Envelope env, EnvelopeOf(k.cf, *h));
    if (at.head() || env.birth <= at.epoch) {
      return std::optional<Found>(Found{env.kind, std::move(h).value()});
    }
  } else if (h.status().code() != Status::Code::kNotFound) {
    return h.status();
  }
  if (at.head()) return std::optional<Found>();
  // The version alive at `at.epoch` is the first one that died after it (§5.1 step 2).
  const std::string prefix = HistVersionsPrefix(at.disk, k.tag, HistSuffixOf(k));
  std::string seek = prefix;
  PutFixed64BE(&seek, at.epoch.value() + 1);
  auto it = r.NewIterator(cfs[Cf::kHist]);
  it->Seek(seek);
  if (it->Valid() && it->key().size() == prefix.size() + 8 && it->key().starts_with(prefix)) {
    std::string_view v = it->value().ToStringView();
    ARCHIL_ASSIGN_OR_RETURN(Envelope env, EnvelopeOf(k.cf, v));
    if (env.birth <= at.epoch) return std::optional<Found>(Found{env.kind, std::string(v)});
  }
  ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "read history"));
  return std::optional<Found>();
}

uint32_t Levels::IndexOf(DiskNo disk) const {
  if (disk == top_.disk) return top_index_;
  std::optional<DiskLineage> l = lineages_->Get(disk);
  return l ? l->lineage_index : UINT32_MAX;
}

Result<std::optional<std::string>> Levels::Get(KvReader& r, const LevelKey& k) const {
  std::optional<LevelRef> at = top_;
  for (int i = 0; at && i < kMaxLevels; ++i) {
    ARCHIL_ASSIGN_OR_RETURN(std::optional<Found> f, ResolveAt(r, *cfs_, *at, k));
    if (f) {
      if (f->kind == ValueKind::kWhiteout) return std::optional<std::string>();
      return std::optional<std::string>(std::move(f->value));
    }
    ARCHIL_ASSIGN_OR_RETURN(at, Below(r, *at, k.owner));
  }
  if (at) return Status::Corruption("lineage chain does not end");
  return std::optional<std::string>();
}

Result<bool> Levels::BelowHas(KvReader& r, const LevelKey& k) const {
  ARCHIL_ASSIGN_OR_RETURN(std::optional<LevelRef> below, Below(r, top_, k.owner));
  if (!below) return false;
  Levels lower(cfs_, lineages_, *below, IndexOf(below->disk));
  ARCHIL_ASSIGN_OR_RETURN(std::optional<std::string> v, lower.Get(r, k));
  return v.has_value();
}

Result<std::optional<LevelRef>> Levels::Below(KvReader& r, LevelRef at, Ino ino) const {
  if (LineageIndexOf(ino) == IndexOf(at.disk)) return std::optional<LevelRef>();  // created here
  // `at`'s own ORIGIN record, when it has one, says what this walk found when it was written, and
  // the walk's answer never changes (cached): read the cache, not the record.
  return WalkBelow(r, at.disk, ino);
}

Result<std::optional<LevelRef>> Levels::WalkBelow(KvReader& r, DiskNo disk, Ino ino) const {
  if (auto cached = lineages_->CachedWalk(disk, ino)) return *cached;
  std::optional<DiskLineage> l = lineages_->Get(disk);
  if (!l) return Status::Corruption("disk " + std::to_string(disk.value()) + " has no lineage");
  std::optional<LevelRef> found;
  DiskNo p = l->parent;
  Epoch e = l->fork_epoch;
  for (int i = 0; p.value() != 0 && i < kMaxLevels; ++i) {
    std::optional<DiskLineage> pl = lineages_->Get(p);
    if (!pl) return Status::Corruption("disk " + std::to_string(p.value()) + " has no lineage");
    bool holds = LineageIndexOf(ino) == pl->lineage_index;
    if (!holds) {
      Result<std::string> o = r.Get((*cfs_)[Cf::kMeta], MetaInoKey(p, MetaType::kOrigin, ino));
      if (!o.ok() && o.status().code() != Status::Code::kNotFound) return o.status();
      holds = o.ok();
    }
    if (holds) {
      found = LevelRef{p, e};
      break;
    }
    e = pl->fork_epoch;
    p = pl->parent;
  }
  lineages_->CacheWalk(disk, ino, found);
  return found;
}

Result<std::vector<LevelRef>> Levels::Chain(KvReader& r, Ino ino) const {
  std::vector<LevelRef> chain;
  std::optional<LevelRef> at = top_;
  for (int i = 0; at && i < kMaxLevels; ++i) {
    chain.push_back(*at);
    ARCHIL_ASSIGN_OR_RETURN(at, Below(r, *at, ino));
  }
  if (at) return Status::Corruption("lineage chain does not end");
  return chain;
}

// ---- LevelScan ----------------------------------------------------------------------------------

// The visible entries of one level in rel order: at a head, every head entry (WHITEOUTs
// included); at a frozen epoch, the head entries born by then merged with the history versions
// alive then.
class LevelScan::Cursor {
 public:
  Cursor(KvReader& r, const Cfs& cfs, LevelRef at, Cf cf, HistTag tag,
         const std::string& rel_prefix)
      : at_(at), cf_(cf), tag_(tag) {
    head_prefix_ = DiskPrefix(at.disk) + rel_prefix;
    head_ = r.NewIterator(cfs[cf]);
    if (!at.head()) {
      hist_prefix_ = HistVersionsPrefix(at.disk, tag, rel_prefix);
      hist_ = r.NewIterator(cfs[Cf::kHist]);
    }
  }
  void Seek(std::string_view rel) {
    head_->Seek(DiskPrefix(at_.disk) + std::string(rel));
    if (hist_) hist_->Seek(HistVersionsPrefix(at_.disk, tag_, rel));
    Settle();
  }
  void Next() { Settle(); }
  bool valid() const { return valid_; }
  const std::string& rel() const { return rel_; }
  const Found& found() const { return found_; }
  Status status() const { return status_; }

 private:
  bool HeadIn() const { return head_->Valid() && head_->key().starts_with(head_prefix_); }
  bool HistIn() const { return hist_ && hist_->Valid() && hist_->key().starts_with(hist_prefix_); }
  std::string HistRel() const {
    std::string_view k = hist_->key().ToStringView();
    std::string_view suffix = k.substr(9, k.size() - 9 - 8);
    if (NamedTag(tag_) && !suffix.empty()) suffix.remove_suffix(1);  // the NUL
    return std::string(suffix);
  }
  // Moves to the next visible entry (consuming the underlying positions it passes).
  void Settle() {
    valid_ = false;
    while (status_.ok()) {
      bool h = HeadIn(), s = HistIn();
      if (!h && !s) break;
      std::string hrel = h ? std::string(head_->key().ToStringView().substr(8)) : std::string();
      std::string srel = s ? HistRel() : std::string();
      std::string rel = !h ? srel : !s ? hrel : std::min(hrel, srel);
      std::optional<Found> pick;
      if (h && hrel == rel) {
        std::string_view v = head_->value().ToStringView();
        Result<Envelope> env = EnvelopeOf(cf_, v);
        if (!env.ok()) {
          status_ = env.status();
          break;
        }
        if (at_.head() || env->birth <= at_.epoch) pick = Found{env->kind, std::string(v)};
        head_->Next();
      }
      while (HistIn() && HistRel() == rel) {
        std::string_view k = hist_->key().ToStringView();
        uint64_t death = DecodeFixed64BE(k.data() + k.size() - 8);
        std::string_view v = hist_->value().ToStringView();
        Result<Envelope> env = EnvelopeOf(cf_, v);
        if (!env.ok()) {
          status_ = env.status();
          break;
        }
        if (!pick && death > at_.epoch.value() && env->birth <= at_.epoch) {
          pick = Found{env->kind, std::string(v)};
        }
        hist_->Next();
      }
      if (pick && status_.ok()) {
        rel_ = std::move(rel);
        found_ = std::move(*pick);
        valid_ = true;
        break;
      }
    }
    if (status_.ok()) status_ = FromRocks(head_->status(), "scan");
    if (status_.ok() && hist_) status_ = FromRocks(hist_->status(), "scan history");
    if (!status_.ok()) valid_ = false;
  }

  LevelRef at_;
  Cf cf_;
  HistTag tag_;
  std::string head_prefix_, hist_prefix_;
  std::unique_ptr<rocksdb::Iterator> head_, hist_;
  bool valid_ = false;
  std::string rel_;
  Found found_;
  Status status_;
};

LevelScan::LevelScan(KvReader& r, const Cfs& cfs, const std::vector<LevelRef>& chain, Cf cf,
                     HistTag tag, const std::string& rel_prefix) {
  for (const LevelRef& at : chain) {
    cursors_.push_back(std::make_unique<Cursor>(r, cfs, at, cf, tag, rel_prefix));
  }
}

LevelScan::~LevelScan() = default;

void LevelScan::Seek(std::string_view rel) {
  for (auto& c : cursors_) c->Seek(rel);
  Settle();
}

void LevelScan::Next() {
  // Every level positioned at the current entry moves past it.
  for (auto& c : cursors_) {
    if (c->valid() && c->rel() == rel_) c->Next();
  }
  Settle();
}

void LevelScan::Settle() {
  valid_ = false;
  for (;;) {
    for (auto& c : cursors_) {
      if (!c->status().ok()) {
        status_ = c->status();
        return;
      }
    }
    // The smallest rel; the uppermost level holding it decides.
    const Cursor* top = nullptr;
    for (auto& c : cursors_) {
      if (c->valid() && (!top || c->rel() < top->rel())) top = c.get();
    }
    if (!top) return;
    if (top->found().kind == ValueKind::kValue) {
      rel_ = top->rel();
      value_ = top->found().value;
      valid_ = true;
      return;
    }
    std::string hidden = top->rel();
    for (auto& c : cursors_) {
      if (c->valid() && c->rel() == hidden) c->Next();
    }
  }
}

}  // namespace archil::engine
