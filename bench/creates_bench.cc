// creates_bench: the creates-per-second row of bench/mount.sh. In one process, N times: create a
// new file (open O_CREAT|O_EXCL|O_WRONLY, mode 0644), write SIZE bytes, close. Nothing is synced:
// a local file system answers these from its caches too, and the row is what a program that
// writes many small files waits for (syncs are rows of their own).
//
// Usage: creates_bench DIR [--files N] [--size BYTES]
//   DIR must not exist; it is made (mkdir) and left with the files in it.
// Prints "N files/s" (whole files per second of the loop's wall time) on stdout, or a message
// naming the failed call on stderr and exits 1.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "creates_bench: %s: %s\n", what.c_str(), std::strerror(errno));
  return 1;
}

bool ParseCount(const char* s, long* out) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v <= 0) return false;
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: creates_bench DIR [--files N] [--size BYTES]\n");
    return 2;
  }
  const std::string dir = argv[1];
  long files = 20000;
  long size = 1024;
  for (int i = 2; i < argc; i += 2) {
    const std::string flag = argv[i];
    long* to = flag == "--files" ? &files : flag == "--size" ? &size : nullptr;
    if (to == nullptr || i + 1 >= argc || !ParseCount(argv[i + 1], to) || size > (1 << 20)) {
      std::fprintf(stderr, "creates_bench: bad argument '%s' (--files N, --size 1..1048576)\n",
                   argv[i]);
      return 2;
    }
  }
  if (mkdir(dir.c_str(), 0755) != 0) return Fail("mkdir " + dir);
  const std::string data(static_cast<size_t>(size), 'x');
  char name[32];
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < files; ++i) {
    std::snprintf(name, sizeof(name), "/f%07ld", i);
    const std::string path = dir + name;
    const int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) return Fail("open " + path);
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0) return Fail("write " + path);
    if (n != static_cast<ssize_t>(data.size())) {
      std::fprintf(stderr, "creates_bench: write %s: %zd of %zu bytes\n", path.c_str(), n,
                   data.size());
      return 1;
    }
    if (close(fd) != 0) return Fail("close " + path);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%.0f files/s\n", static_cast<double>(files) / s);
  return 0;
}
