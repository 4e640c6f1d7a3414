// archil server ...: execs the archil-server binary installed beside this one, with the same
// arguments (docs/adr/0001-binary-split.md); `archil mount` execs archil-mount the same way.
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli/commands.h"

namespace archil {
namespace {

std::string SelfDir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/'));
}

}  // namespace

Status ExecServer(const std::vector<std::string>& args) {
  return ExecBeside("archil-server", args);
}

Status ExecBeside(const std::string& binary, const std::vector<std::string>& args) {
  std::string dir = SelfDir();
  std::vector<char*> argv;
  std::string arg0 = binary;
  argv.push_back(arg0.data());
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (const std::string& candidate : {dir + "/" + binary, dir + "/../libexec/archil/" + binary}) {
    execv(candidate.c_str(), argv.data());
    if (errno != ENOENT) {
      return Status::FromErrno(errno, "start " + candidate);
    }
  }
  return Status::NotFound(binary + " is not installed next to " + dir +
                          "/archil: reinstall (scripts/setup.sh builds every binary)");
}

void AddServerCommand(CLI::App& app, CliContext* ctx) {
  // RunCli() execs `archil server ...` before parsing, so that every argument, --help included,
  // reaches archil-server; this entry only lists the command in `archil --help`.
  CLI::App* server = app.add_subcommand(
      "server", "Run the control plane and disk server (see `archil server --help`)");
  server->allow_extras();
  server->callback(
      [ctx, server] { ctx->action = [server] { return ExecServer(server->remaining()); }; });
}

}  // namespace archil
