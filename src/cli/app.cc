#include <algorithm>
#include <array>
#include <cstdio>
#include <exception>
#include <string>

#include "api/exit_code.h"
#include "base/log.h"
#include "cli/commands.h"

namespace archil {

namespace {

// The CLI's commands, by the adder that registers them (commands.h).
struct CommandSet {
  std::array<std::string_view, 3> names;  // unused places are empty
  void (*add)(CLI::App&, CliContext*);
};
constexpr CommandSet kCommands[] = {
    {{"disks"}, AddDisksCommand},
    {{"keys"}, AddKeysCommand},
    {{"users"}, AddUsersCommand},
    {{"server"}, AddServerCommand},
    {{"version"}, AddVersionCommand},
    {{"mount", "unmount", "status"}, AddMountCommands},
    {{"checkpoints", "branches"}, AddLineageCommands},
    {{"metrics"}, AddMetricsCommand},
    {{"share", "share-key"}, AddShareCommand},
    {{"completion"}, AddCompletionCommand},  // last: it describes the others
};

// The word of the command line that names its command: the first that is neither one of `app`'s
// own (global) options nor the value of one. Empty if there is none, or if an option comes first
// that `app` does not know (the full parser then says what is wrong).
std::string ChosenCommand(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") return "";
    if (word.empty() || word[0] != '-') return word;
    if (word.find('=') != std::string::npos) continue;  // --option=value
    const CLI::Option* o = app.get_option_no_throw(word);
    if (o == nullptr) return "";
    if (o->get_items_expected_min() > 0) ++i;  // its value is the next word
  }
  return "";
}

}  // namespace

int RunCli(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "server") {
    Status s = ExecServer(std::vector<std::string>(argv + 2, argv + argc));
    std::fprintf(stderr, "%s\n", ErrorLine(s).c_str());
    return ExitCodeFor(s.code());
  }
  if (argc >= 2 && std::string_view(argv[1]) == "mount") {
    Status s = ExecBeside("archil-mount", std::vector<std::string>(argv + 2, argv + argc));
    std::fprintf(stderr, "%s\n", ErrorLine(s).c_str());
    return ExitCodeFor(s.code());
  }
  CliContext ctx;
  GlobalOptions& g = ctx.options;
  CLI::App app{"archil: network disks with checkpoints and branches", "archil"};
  app.require_subcommand(1);
  app.fallthrough();  // global flags are accepted after the subcommand too
  app.add_option("--endpoint", g.endpoint,
                 "Control-plane URL (else ARCHIL_ENDPOINT, else --region)");
  app.add_option("--region", g.region,
                 "Region to talk to (else ARCHIL_REGION, else the local server)");
  app.add_option("--api-key", g.api_key, "API key (else ARCHIL_API_KEY)");
  app.add_option("--ca-file", g.ca_file,
                 "PEM CA bundle for a self-signed HTTPS server (else ARCHIL_CA_FILE)");
  app.add_option("--log-level", g.log_level, "trace|debug|info|warn|error")->capture_default_str();
  app.add_flag("--json", g.json, "Print JSON for scripts instead of tables");
  app.add_flag("-q,--quiet", g.quiet, "Print only what was asked for, and errors");
  app.add_flag("-v,--verbose", g.verbose, "Log debug messages");
  app.footer(
      "Examples:\n"
      "  archil server &                           a server with embedded defaults\n"
      "  archil disks create data                  prints the disk's token\n"
      "  ARCHIL_MOUNT_TOKEN=... archil mount data /mnt/data\n"
      "  archil checkpoints create /mnt/data cp-1\n"
      "  archil status\n"
      "Every command takes --help, with examples of its own.");

  // Only the chosen command's tree is built: building all of them is most of a short command's
  // start-up (measurements.md §5). Help and errors without a known command get every command.
  const std::string chosen = ChosenCommand(app, argc, argv);
  auto names = [&chosen](const CommandSet& c) {
    return !chosen.empty() && std::find(c.names.begin(), c.names.end(), chosen) != c.names.end();
  };
  // The completion script describes every command, so it needs them all.
  const bool all =
      chosen == "completion" || !std::any_of(std::begin(kCommands), std::end(kCommands), names);
  for (const CommandSet& c : kCommands) {
    if (all || names(c)) c.add(app, &ctx);
  }
  // A group's examples show in its subcommands' help too, unless they have their own.
  for (CLI::App* group : app.get_subcommands({})) {
    for (CLI::App* sub : group->get_subcommands({})) {
      if (sub->get_footer().empty()) sub->footer(group->get_footer());
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (app.get_subcommands().empty()) {
      // The first word that is not a flag names the command: say that it is not one.
      for (const std::string& word : app.remaining()) {
        if (!word.empty() && word[0] != '-') {
          what = "unknown command '" + word + "'";
          break;
        }
      }
    }
    std::fprintf(stderr, "archil: %s (see `archil --help`, or `archil <command> --help`)\n",
                 what.c_str());
    return 2;
  }
  Result<LogLevel> level = ParseLogLevel(g.verbose ? "debug" : g.log_level);
  if (!level.ok()) {
    std::fprintf(stderr, "%s\n", ErrorLine(level.status()).c_str());
    return 2;
  }
  SetLogLevel(*level);
  Status result;
  try {
    result = ctx.action ? ctx.action() : Status::Internal("no command chosen");
  } catch (const std::exception& e) {
    // A reply of an unexpected shape must not abort the CLI (the JSON library throws on a type
    // it was not asked for): it is the server's protocol error, said as such.
    result = Status::Corruption(std::string("the server's reply could not be read: ") + e.what());
  }
  if (!result.ok()) std::fprintf(stderr, "%s\n", ErrorLine(result).c_str());
  return ExitCodeFor(result.code());
}

}  // namespace archil
