// archil-mount: the mount daemon's binary, run as `archil mount ...` (which execs it) or as
// `mount.archil` by mount(8) (docs/adr/0013-mount-daemon-binary.md).
#include "mount/mount_command.h"

int main(int argc, char** argv) { return archil::mount::MountMain(argc, argv); }
