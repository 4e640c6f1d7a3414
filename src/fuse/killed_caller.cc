#include "fuse/killed_caller.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace archil::fuse {
namespace {

constexpr uint64_t kSigKillBit = uint64_t{1} << (9 - 1);  // signal n is bit n-1

// The hexadecimal mask after "<field>:\t" on its own line, or 0.
uint64_t Mask(std::string_view text, std::string_view field) {
  size_t at = 0;
  while ((at = text.find(field, at)) != std::string_view::npos) {
    if ((at == 0 || text[at - 1] == '\n') && text.substr(at + field.size(), 1) == ":") {
      const std::string rest(text.substr(at + field.size() + 1, 40));
      return std::strtoull(rest.c_str(), nullptr, 16);
    }
    at += field.size();
  }
  return 0;
}

}  // namespace

bool SigKillPending(std::string_view proc_status) {
  return ((Mask(proc_status, "SigPnd") | Mask(proc_status, "ShdPnd")) & kSigKillBit) != 0;
}

bool KilledCaller::Cancelled() const {
  if (tid_ <= 0) return false;
  const std::string path = "/proc/" + std::to_string(tid_) + "/status";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;  // gone: nobody waits for the answer
  char buf[4096];
  const ssize_t n = read(fd, buf, sizeof(buf));
  close(fd);
  return n > 0 && SigKillPending(std::string_view(buf, static_cast<size_t>(n)));
}

}  // namespace archil::fuse
