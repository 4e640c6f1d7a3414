// archil completion bash: a bash completion script made from the CLI's own definition (every
// command, subcommand and option this binary knows), so it never lists what the CLI does not
// take. Install: `archil completion bash > /etc/bash_completion.d/archil` (or source it).
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace archil {
namespace {

// Every option spelling of `app` (long and short), for completion.
std::vector<std::string> OptionWords(const CLI::App& app) {
  std::vector<std::string> words;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& l : o->get_lnames()) words.push_back("--" + l);
    for (const std::string& s : o->get_snames()) words.push_back("-" + s);
  }
  return words;
}

// One case arm per command path ("", "disks", "disks create"): the words that may follow it,
// each once (a subcommand's own --help and the global one are one word).
void Arms(const CLI::App& app, const std::string& path, const std::vector<std::string>& global,
          std::string* out) {
  std::vector<std::string> words = path.empty() ? std::vector<std::string>() : global;
  for (std::string& w : OptionWords(app)) words.push_back(std::move(w));
  for (const CLI::App* sub : app.get_subcommands({})) words.push_back(sub->get_name());
  std::set<std::string> seen;
  std::string line;
  for (const std::string& w : words) {
    if (!seen.insert(w).second) continue;
    line += (line.empty() ? "" : " ") + w;
  }
  *out += "    \"" + path + "\") words=\"" + line + "\" ;;\n";
  for (const CLI::App* sub : app.get_subcommands({})) {
    Arms(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), global, out);
  }
}

std::string BashScript(const CLI::App& app) {
  std::string arms;
  Arms(app, "", OptionWords(app), &arms);
  return "# bash completion for archil, made by `archil completion bash` from the CLI itself.\n"
         "_archil() {\n"
         "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" path=\"\" w i words\n"
         "  # The command path: the words before the cursor that name (sub)commands.\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    w=\"${COMP_WORDS[i]}\"\n"
         "    [[ $w == -* ]] && continue\n"
         "    if _archil_words \"${path:+$path }$w\" > /dev/null; then path=\"${path:+$path }$w\"; "
         "fi\n"
         "  done\n"
         "  words=\"$(_archil_words \"$path\")\"\n"
         "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
         "}\n"
         "_archil_words() {\n"
         "  local words\n"
         "  case \"$1\" in\n" +
         arms +
         "    *) return 1 ;;\n"
         "  esac\n"
         "  echo \"$words\"\n"
         "}\n"
         "# -o default: mount points and files complete as paths where no word matches.\n"
         "complete -o default -F _archil archil\n";
}

}  // namespace

void AddCompletionCommand(CLI::App& app, CliContext* ctx) {
  auto* completion =
      app.add_subcommand("completion", "Print a shell completion script: archil completion bash");
  auto shell = std::make_shared<std::string>();
  completion->add_option("shell", *shell, "The shell (bash)")->required();
  completion->footer(
      "Examples:\n"
      "  archil completion bash > /etc/bash_completion.d/archil\n"
      "  source <(archil completion bash)");
  CLI::App* root = &app;
  completion->callback([ctx, shell, root] {
    ctx->action = [shell, root]() -> Status {
      if (*shell != "bash") {
        return Status::InvalidArgument("no completion for '" + *shell + "' (bash is made)");
      }
      const std::string script = BashScript(*root);
      std::fwrite(script.data(), 1, script.size(), stdout);
      return Status::Ok();
    };
  });
}

}  // namespace archil
