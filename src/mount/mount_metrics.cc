#include "mount/mount_metrics.h"

namespace archil::mount {

void AddMountCollectors(metrics::Registry* registry, fuse::Adapter* adapter,
                        const fs::MountCore* core, const client::RemoteFs* remote,
                        const client::DiskClient* disk) {
  registry->AddCollector([adapter, core, remote, disk](metrics::Sink& s) {
    const fuse::AdapterStats& a = adapter->stats();
    s.Counter("archil_mount_requests_total", "Requests the kernel sent to the mount.", {},
              double(a.requests.load()));
    s.Gauge("archil_mount_requests_in_flight", "Requests of the kernel being answered now.", {},
            double(a.in_flight.load()));
    s.Counter("archil_mount_errors_total",
              "Requests answered EIO because the disk server could not be reached.", {},
              double(a.errors.load()));
    s.Counter("archil_mount_read_bytes_total", "File data read through the mount, in bytes.", {},
              double(a.bytes_read.load()));
    s.Counter("archil_mount_written_bytes_total", "File data written through the mount, in bytes.",
              {}, double(a.bytes_written.load()));

    const fs::CoreStats c = core->stats();
    s.Gauge("archil_mount_open_files", "Files and directories the kernel holds open.", {},
            double(c.open_files));
    s.Gauge("archil_mount_held_orphans",
            "Inodes held on the server because they are open after their last name went.", {},
            double(c.held_orphans));
    s.Counter("archil_mount_local_negative_lookups_total",
              "Lookups answered ENOENT without a request: the name is not in a directory this "
              "mount created.",
              {}, double(c.local_negative_lookups));
    s.Counter("archil_mount_local_listing_ends_total",
              "READDIRs past the end of a listing answered without a request.", {},
              double(c.local_listing_ends));
    s.Counter("archil_mount_local_listings_total",
              "Listings of a directory listed again at once, with no change of names since, "
              "answered without a request (rm -rf opens each directory twice).",
              {}, double(c.local_listings));
    s.Counter("archil_mount_local_getattrs_total",
              "GETATTRs answered without a request: a directory's from the answer to the last "
              "change of its names, an inode's whose attributes the mount knows exactly.",
              {}, double(remote->local_getattrs()));
    s.Counter("archil_mount_local_lookups_total",
              "LOOKUPs of a name the mount saw, answered without a request from the attributes "
              "it knows of the inode (the kernel asks again before every exclusive create).",
              {}, double(remote->local_lookups()));
    const client::AttrLog::Stats al = remote->attr_log_stats();
    s.Counter("archil_mount_local_setattrs_total",
              "SETATTRs answered by the mount and sent ahead of its next request (ADR 0028).", {},
              double(al.answered));
    s.Counter("archil_mount_attr_puts_lost_total",
              "Attribute changes the mount answered that did not reach the disk (write-back "
              "errors).",
              {}, double(al.lost));
    s.Gauge("archil_mount_attr_puts_pending",
            "Attribute changes and unlinks answered by the mount and not yet sent.", {},
            double(al.pending));
    s.Counter("archil_mount_local_writes_total",
              "Small WRITEs answered by the mount and sent ahead of its next request (ADR 0029).",
              {}, double(al.answered_writes));
    s.Gauge("archil_mount_write_puts_pending_bytes",
            "Bytes of WRITEs answered by the mount and not yet sent.", {},
            double(al.pending_bytes));
    s.Counter("archil_mount_local_creates_total",
              "Creates answered by the mount with inode numbers granted to its session and sent "
              "ahead of its next request (ADR 0025).",
              {}, double(al.answered_creates));
    s.Gauge("archil_mount_create_puts_pending", "Creates answered by the mount and not yet sent.",
            {}, double(al.pending_creates));
    s.Counter("archil_mount_local_removes_total",
              "Unlinks answered by the mount and sent after the other changes its next request "
              "carries (ADR 0025).",
              {}, double(al.answered_removes));
    s.Gauge("archil_mount_remove_puts_pending", "Unlinks answered by the mount and not yet sent.",
            {}, double(al.pending_removes));
    s.Gauge("archil_mount_known_directories",
            "Directories this mount created whose every name it knows.", {}, double(c.known_dirs));
    s.Counter("archil_mount_read_ahead_hits_total", "READs answered from read-ahead chunks.", {},
              double(c.read_ahead.hits));
    s.Counter("archil_mount_read_ahead_misses_total", "READs sent to the disk server directly.", {},
              double(c.read_ahead.misses));
    s.Gauge("archil_mount_read_ahead_bytes", "Bytes read ahead and held, in flight included.", {},
            double(c.read_ahead.bytes_cached));
    s.Counter("archil_mount_read_ahead_files_total",
              "Small files read ahead of their reader, in the order their directory was listed.",
              {}, double(c.read_ahead.files_ahead));
    s.Counter("archil_mount_read_ahead_dropped_total",
              "Read-ahead chunks dropped before a READ used all of them.", {},
              double(c.read_ahead.chunks_dropped));

    const client::ClientStats d = disk->stats();
    s.Counter("archil_client_reconnects_total",
              "Connections to the disk server opened after the first.", {}, double(d.reconnects));
    s.Counter("archil_client_resent_requests_total", "Requests sent again after a lost connection.",
              {}, double(d.retries));
    s.Counter("archil_client_sessions_recreated_total",
              "Sessions created again because the server had lost the old one.", {},
              double(d.recreated));
    s.Counter("archil_client_delayed_requests_total",
              "Requests the server answered DELAY (sent again after a wait).", {},
              double(d.delays));
    s.Counter("archil_client_bad_frames_total",
              "Connections broken by a frame from the server that failed its checks.", {},
              double(d.bad_frames));
    s.Gauge("archil_client_unreachable", "1 while no disk server answers a reconnection, else 0.",
            {}, d.unreachable_since_ms != 0 ? 1 : 0);
    s.Gauge("archil_client_waiting_requests",
            "Requests waiting for a disk server to answer a reconnection.", {}, double(d.waiting));
  });
}

}  // namespace archil::mount
