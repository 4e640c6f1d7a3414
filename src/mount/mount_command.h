// `archil mount` and `mount.archil` (the archil-mount binary, which `archil mount` execs): checks
// what can be checked before anything starts (root, FUSE, the mount point, a dead mount left by
// a killed daemon, the region's disk server, the token), forks the daemon (mount/daemon.h) and
// waits until the mount is usable, printing why not if it is not. docs/cli.md lists the flags.
#pragma once

namespace archil::mount {

// Returns the process's exit code (api/exit_code.h's table).
int MountMain(int argc, char** argv);

}  // namespace archil::mount
