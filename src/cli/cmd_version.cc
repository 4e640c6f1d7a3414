// archil version
#include <cstdio>

#include "cli/commands.h"
#include "cli/output.h"

#ifndef ARCHIL_VERSION
#define ARCHIL_VERSION "0.0.0"
#endif
#ifndef ARCHIL_REVISION
#define ARCHIL_REVISION "unknown"
#endif

namespace archil {

void AddVersionCommand(CLI::App& app, CliContext* ctx) {
  CLI::App* version = app.add_subcommand("version", "Print the version");
  version->footer("Examples:\n  archil version\n  archil --json version");
  version->callback([ctx] {
    ctx->action = [ctx] {
      if (ctx->options.json) {
        PrintJson({{"version", ARCHIL_VERSION}, {"revision", ARCHIL_REVISION}});
      } else {
        std::printf("archil %s (%s)\n", ARCHIL_VERSION, ARCHIL_REVISION);
      }
      return Status::Ok();
    };
  });
}

}  // namespace archil
