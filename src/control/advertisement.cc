#include "control/advertisement.h"

#include <cerrno>

#include "io/atomic_file.h"

namespace archil {

Status WriteAdvertisement(io::Env* env, const std::string& run_dir, const Endpoints& endpoints,
                          pid_t pid) {
  Status made = env->CreateDir(run_dir);
  if (made.ok()) {
    ARCHIL_RETURN_IF_ERROR(env->SyncDir(io::ParentDir(run_dir)));
  } else if (made.sys_errno() != EEXIST) {
    return made;
  }
  return io::WriteFileAtomically(env, AdvertisementPath(run_dir, endpoints.region),
                                 AdvertisementJson(endpoints, pid), 0644);
}

}  // namespace archil
