#include "corpus/syscall_filter.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ragd::corpus::internal {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
constexpr uint32_t kArch = 0;
#endif

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

constexpr uint32_t kDeny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
constexpr uint32_t kNoSys = SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA);

class Program {
 public:
  void Load(uint32_t offset) { f_.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset)); }
  void Return(uint32_t action) { f_.push_back(BPF_STMT(BPF_RET | BPF_K, action)); }
  // With the call number loaded: `action` for call `nr`.
  void Refuse(long nr, uint32_t action = kDeny) {
    f_.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 1));
    Return(action);
  }
  // With the call number loaded: for call `nr`, refuse when the low word of
  // argument `arg` has a bit of `mask` set (`when_set`) or none of them.
  void RefuseByFlags(long nr, int arg, uint32_t mask, bool when_set) {
    f_.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 4));
    Load(static_cast<uint32_t>(offsetof(seccomp_data, args) + sizeof(uint64_t) * static_cast<size_t>(arg)));
    const __u8 to_refusal = when_set ? 0 : 1, to_allow = when_set ? 1 : 0;
    f_.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, mask, to_refusal, to_allow));
    Return(kDeny);
    Return(SECCOMP_RET_ALLOW);  // the call matched and passed: done
  }
  void RefuseAtOrAbove(uint32_t nr) {
    f_.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, nr, 0, 1));
    Return(kDeny);
  }
  std::vector<sock_filter>& filter() { return f_; }

 private:
  std::vector<sock_filter> f_;
};

}  // namespace

bool DenyDangerousSyscalls() {
  if (kArch == 0) return false;
  Program p;
  p.Load(offsetof(seccomp_data, arch));
  p.filter().push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0));
  p.Return(kDeny);
  p.Load(offsetof(seccomp_data, nr));
#if defined(__x86_64__)
  p.RefuseAtOrAbove(0x40000000);  // the x32 ABI's numbers
#endif
  for (long nr : {
         SYS_execve, SYS_execveat, SYS_socket, SYS_socketpair, SYS_connect, SYS_bind, SYS_listen, SYS_accept,
             SYS_accept4, SYS_kill, SYS_process_vm_readv, SYS_process_vm_writev, SYS_unlinkat, SYS_renameat,
             SYS_renameat2, SYS_mkdirat, SYS_linkat, SYS_symlinkat, SYS_fchmod, SYS_fchmodat, SYS_fchown,
             SYS_fchownat, SYS_truncate, SYS_ftruncate, SYS_mknodat, SYS_mount, SYS_umount2, SYS_pivot_root,
             SYS_chroot, SYS_setns, SYS_unshare, SYS_init_module, SYS_finit_module, SYS_delete_module,
             SYS_kexec_load, SYS_bpf, SYS_perf_event_open, SYS_keyctl, SYS_add_key, SYS_request_key,
             SYS_io_uring_setup, SYS_userfaultfd, SYS_reboot, SYS_swapon, SYS_swapoff,
#if defined(__x86_64__)
             SYS_fork, SYS_vfork, SYS_unlink, SYS_rename, SYS_mkdir, SYS_rmdir, SYS_link, SYS_symlink,
             SYS_chmod, SYS_chown, SYS_lchown, SYS_creat, SYS_mknod,
#endif
       }) {
    p.Refuse(nr);
  }
  if (!kSanitized) p.Refuse(SYS_ptrace);
  // clone3's flags sit in a structure the filter cannot read: glibc falls
  // back to clone, whose flags it can.
  p.Refuse(SYS_clone3, kNoSys);
  p.Refuse(SYS_openat2, kNoSys);
  constexpr uint32_t kWriting = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
  p.RefuseByFlags(SYS_openat, 2, kWriting, /*when_set=*/true);
#if defined(__x86_64__)
  p.RefuseByFlags(SYS_open, 1, kWriting, /*when_set=*/true);
#endif
  // A thread, or a clone sharing memory (LeakSanitizer's tracer), but no new process.
  p.RefuseByFlags(SYS_clone, 0, CLONE_THREAD | CLONE_VM, /*when_set=*/false);
  p.Return(SECCOMP_RET_ALLOW);

  sock_fprog program{static_cast<unsigned short>(p.filter().size()), p.filter().data()};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
  return ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

}  // namespace ragd::corpus::internal
