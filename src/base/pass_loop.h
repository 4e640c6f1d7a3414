// PassLoop: the background thread of a tier machine. It runs a pass every interval and whenever
// kicked, until it is destroyed; a failed pass is logged and the next one runs on time.
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

namespace archil::tier {

class PassLoop {
 public:
  // `what` names the pass in logs ("segment upload").
  PassLoop(std::string what, int interval_ms, std::function<Status()> pass)
      : what_(std::move(what)), interval_ms_(interval_ms), pass_(std::move(pass)) {}
  ~PassLoop();
  PassLoop(const PassLoop&) = delete;
  PassLoop& operator=(const PassLoop&) = delete;

  void Start() ARCHIL_EXCLUDES(mu_);
  // Stops the thread after the pass it runs, if any, and joins it; then no pass runs but those
  // the owner calls itself. Idempotent; a no-op if never started.
  void Stop() ARCHIL_EXCLUDES(mu_);
  // Asks for a pass now (or right after the one running); a no-op before Start().
  void Kick() ARCHIL_EXCLUDES(mu_);

 private:
  void Run() ARCHIL_EXCLUDES(mu_);

  const std::string what_;
  const int interval_ms_;
  const std::function<Status()> pass_;
  Mutex mu_;
  CondVar cv_{&mu_};
  bool kicked_ ARCHIL_GUARDED_BY(mu_) = false;
  bool stop_ ARCHIL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace archil::tier
