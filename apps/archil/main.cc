// archil: the one command users run. Client and CLI roles live here; `archil server` execs the
// archil-server binary beside it (docs/adr/0001-binary-split.md).
#include "cli/commands.h"

int main(int argc, char** argv) { return archil::RunCli(argc, argv); }
