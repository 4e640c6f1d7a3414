// PassLoop: a background thread that runs a pass every interval and whenever kicked, until it is
// stopped: the tier's machines (segment upload, log shipping, snapshots, collection, catalog
// copies, the bucket lease) and the control plane's purge of deleted disks. A failed pass is
// logged and the next one runs after `retry_ms`.
//
// Thread-safety: Start() once, from one thread; Kick() from any thread; Stop() from the thread
// that started it. The destructor stops and joins the thread: declare a PassLoop after every
// member its pass uses, so that it goes first.
#pragma once

#include <functional>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "base/status.h"

namespace archil {

class PassLoop {
 public:
  struct Options {
    int interval_ms = 1000;       // between passes (> 0)
    int retry_ms = -1;            // after a failed pass; negative: interval_ms
    int settle_ms = 0;            // after a kick, how long to wait for more before the pass, so
                                  // that a burst of kicks makes one pass
    bool first_at_start = false;  // a pass as soon as started, not an interval later
  };
  // `what` names the pass in logs and its thread ("segment upload").
  PassLoop(std::string what, Options options, std::function<Status()> pass)
      : what_(std::move(what)), options_(options), pass_(std::move(pass)) {}
  PassLoop(std::string what, int interval_ms, std::function<Status()> pass)
      : PassLoop(std::move(what), Options{.interval_ms = interval_ms}, std::move(pass)) {}
  ~PassLoop();
  PassLoop(const PassLoop&) = delete;
  PassLoop& operator=(const PassLoop&) = delete;

  void Start() ARCHIL_EXCLUDES(mu_);
  // Stops the thread after the pass it runs, if any, and joins it; then no pass runs but those
  // the owner calls itself. Idempotent; a no-op if never started.
  void Stop() ARCHIL_EXCLUDES(mu_);
  // Asks for a pass now (or right after the one running, or settle_ms from now); a no-op before
  // Start().
  void Kick() ARCHIL_EXCLUDES(mu_);

 private:
  void Run() ARCHIL_EXCLUDES(mu_);

  const std::string what_;
  const Options options_;
  const std::function<Status()> pass_;
  Mutex mu_;
  CondVar cv_{&mu_};
  bool kicked_ ARCHIL_GUARDED_BY(mu_) = false;
  bool stop_ ARCHIL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace archil
