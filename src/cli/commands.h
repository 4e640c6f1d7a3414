// The CLI's subcommands, one file each. Each Add* registers its subcommand on `app`; when the
// command line chose it, it stores what to do in ctx->action, which RunCli runs after parsing.
#pragma once

#include <CLI/CLI.hpp>

#include "api/wire.h"
#include "cli/context.h"

namespace archil {

void AddDisksCommand(CLI::App& app, CliContext* ctx);
void AddKeysCommand(CLI::App& app, CliContext* ctx);
void AddUsersCommand(CLI::App& app, CliContext* ctx);
void AddServerCommand(CLI::App& app, CliContext* ctx);
void AddVersionCommand(CLI::App& app, CliContext* ctx);
void AddMountCommands(CLI::App& app, CliContext* ctx);    // mount (listed), unmount, status
void AddLineageCommands(CLI::App& app, CliContext* ctx);  // checkpoints, branches
void AddMetricsCommand(CLI::App& app, CliContext* ctx);
void AddShareCommand(CLI::App& app, CliContext* ctx);  // share, share-key
// Needs every other command registered first (it describes them).
void AddCompletionCommand(CLI::App& app, CliContext* ctx);

// Replaces this process with archil-server (installed beside this binary) and `args`.
// Returns only on failure.
Status ExecServer(const std::vector<std::string>& args);
// Replaces this process with `binary` (installed beside this one) and `args` (archil-mount for
// `archil mount`, docs/adr/0013-mount-daemon-binary.md). Returns only on failure.
Status ExecBeside(const std::string& binary, const std::vector<std::string>& args);

// Runs the CLI; returns the process exit code.
int RunCli(int argc, char** argv);

// A disk by id or name: the API's disk object as sent (for --json) and decoded. NotFound names
// what was looked for; Corruption if the server's answer is not a disk.
struct FoundDisk {
  nlohmann::json raw;
  wire::Disk disk;
};
Result<FoundDisk> FindDisk(const ApiClient& api, const std::string& ref);
// The disk id of `ref`: an id as it is (it may be a branch, which has no name, or a deleted root
// kept for its branches), a name looked up with FindDisk.
Result<std::string> DiskIdOf(const ApiClient& api, const std::string& ref);

}  // namespace archil
