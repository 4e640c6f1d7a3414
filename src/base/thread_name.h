// NameThisThread: gives the calling thread a name that `top -H`, `ps -L`, perf and
// /proc/PID/task/TID/comm show, so that an operator (or a benchmark reading schedstat) can tell
// a server's request threads from its background ones.
//
// Linux keeps at most 15 bytes of a thread's name: a longer `name` is cut to its first 15.
#pragma once

#include <string>
#include <string_view>

namespace archil {

void NameThisThread(std::string_view name);

// The calling thread's name as the kernel holds it ("" if it cannot be read).
std::string ThisThreadName();

}  // namespace archil
