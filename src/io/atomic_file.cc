#include "io/atomic_file.h"

#include "base/random.h"

namespace archil::io {

namespace {

Status WriteAndSync(Env* env, const std::string& tmp, std::string_view contents, uint32_t mode) {
  OpenOptions options;
  options.create = true;
  options.exclusive = true;
  options.mode = mode;
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<File> file, env->OpenFile(tmp, options));
  Status s = file->Pwrite(0, contents);
  if (s.ok()) s = file->Sync();
  Status closed = file->Close();
  return s.ok() ? closed : s;
}

}  // namespace

Status WriteFileAtomically(Env* env, const std::string& path, std::string_view contents,
                           uint32_t mode) {
  ARCHIL_ASSIGN_OR_RETURN(std::string suffix, SecureRandomHex(8));
  const std::string tmp = path + ".tmp-" + suffix;
  Status s = WriteAndSync(env, tmp, contents, mode);
  if (s.ok()) s = env->Rename(tmp, path);
  if (!s.ok()) {
    (void)env->Unlink(tmp);  // best effort; it may not exist
    return s.WithContext("write " + path);
  }
  return env->SyncDir(ParentDir(path)).WithContext("write " + path);
}

}  // namespace archil::io
