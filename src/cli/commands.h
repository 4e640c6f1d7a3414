// The CLI's subcommands, one file each. Each Add* registers its subcommand on `app`; when it
// runs, it stores its outcome in ctx->result.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.h"

namespace archil {

void AddDisksCommand(CLI::App& app, CliContext* ctx);
void AddKeysCommand(CLI::App& app, CliContext* ctx);
void AddUsersCommand(CLI::App& app, CliContext* ctx);
void AddServerCommand(CLI::App& app, CliContext* ctx);
void AddVersionCommand(CLI::App& app, CliContext* ctx);

// Replaces this process with archil-server (installed beside this binary) and `args`.
// Returns only on failure.
Status ExecServer(const std::vector<std::string>& args);

// Runs the CLI; returns the process exit code.
int RunCli(int argc, char** argv);

// A disk by id or name, as the API's disk object. NotFound names what was looked for.
Result<nlohmann::json> FindDisk(const ApiClient& api, const std::string& ref);

}  // namespace archil
