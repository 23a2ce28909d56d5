// NcclLibrary: dlopen/dlsym of the NCCL entry points (research/parallel/nccl_library.h).
#include "research/parallel/nccl_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "absl/strings/str_cat.h"

namespace flashtick::nccl {
namespace {

constexpr char kDefaultLibrary[] = "libnccl.so.2";
constexpr char kHowToGet[] =
    "install nvidia-nccl-cu13 (pip) and point FLASHTICK_NCCL_LIBRARY at its libnccl.so.2 "
    "(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))'/lib), "
    "or set FLASHTICK_NCCL_LIBRARY to any libnccl.so.2";

template <typename Fn>
absl::Status Bind(void* handle, const char* name, const std::string& path, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (*fn == nullptr)
    return absl::FailedPreconditionError(
        absl::StrCat(path, " has no ", name, " (not NCCL 2.x?); ", kHowToGet));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NcclLibrary*> NcclLibrary::Load() {
  const char* env = std::getenv("FLASHTICK_NCCL_LIBRARY");
  const std::string path = env != nullptr && env[0] != '\0' ? env : kDefaultLibrary;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot load NCCL from ", path, " (", why != nullptr ? why : "unknown error", "): ",
        kHowToGet));
  }
  auto* lib = new NcclLibrary();  // process lifetime, like the dlopen handle
  lib->path_ = path;
  absl::Status s = Bind(handle, "ncclCommInitAll", path, &lib->CommInitAll);
  if (s.ok()) s = Bind(handle, "ncclGetUniqueId", path, &lib->GetUniqueId);
  if (s.ok()) s = Bind(handle, "ncclCommInitRank", path, &lib->CommInitRank);
  if (s.ok()) s = Bind(handle, "ncclCommDestroy", path, &lib->CommDestroy);
  if (s.ok()) s = Bind(handle, "ncclCommAbort", path, &lib->CommAbort);
  if (s.ok()) s = Bind(handle, "ncclAllReduce", path, &lib->AllReduce);
  if (s.ok()) s = Bind(handle, "ncclGroupStart", path, &lib->GroupStart);
  if (s.ok()) s = Bind(handle, "ncclGroupEnd", path, &lib->GroupEnd);
  // Optional: every NCCL since 2.4 has it; without it the watchdog relies on its timeout.
  if (s.ok() && !Bind(handle, "ncclCommGetAsyncError", path, &lib->CommGetAsyncError).ok())
    lib->CommGetAsyncError = nullptr;
  if (s.ok()) s = Bind(handle, "ncclGetErrorString", path, &lib->GetErrorString);
  if (s.ok()) s = Bind(handle, "ncclGetVersion", path, &lib->GetVersion);
  if (s.ok()) s = lib->Check(lib->GetVersion(&lib->version_), "ncclGetVersion");
  if (!s.ok()) {
    delete lib;
    dlclose(handle);
    return s;
  }
  return lib;
}

absl::StatusOr<const NcclLibrary*> NcclLibrary::Get() {
  static std::mutex mu;
  static absl::StatusOr<NcclLibrary*>* loaded = nullptr;  // the first attempt's outcome
  std::lock_guard<std::mutex> lock(mu);
  if (loaded == nullptr) loaded = new absl::StatusOr<NcclLibrary*>(Load());
  if (!loaded->ok()) return loaded->status();
  return static_cast<const NcclLibrary*>(**loaded);
}

absl::Status NcclLibrary::Check(ncclResult_t r, const char* what) const {
  if (r == ncclSuccess) return absl::OkStatus();
  const std::string msg = absl::StrCat(what, " failed: NCCL error ", static_cast<int>(r), " (",
                                       GetErrorString != nullptr ? GetErrorString(r) : "?",
                                       "); run with NCCL_DEBUG=WARN for NCCL's reason");
  switch (r) {
    case ncclInvalidArgument:
    case ncclInvalidUsage:
      return absl::InvalidArgumentError(msg);
    case ncclRemoteError:
      return absl::UnavailableError(msg);
    default:
      return absl::InternalError(msg);
  }
}

}  // namespace flashtick::nccl
