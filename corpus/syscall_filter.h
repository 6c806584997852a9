// Internal: the system calls the extraction child gives up before it reads a
// document (see extract_process.h).
#pragma once

namespace ragd::corpus::internal {

// Installs a seccomp filter on the calling process (and sets no_new_privs)
// under which these calls fail with EPERM: starting programs (execve), new
// processes (fork; clone without CLONE_THREAD or CLONE_VM), sockets, tracing other
// processes, signals to other processes (kill), opening a file for writing
// or creating one, and every call that changes the file system, mounts,
// namespaces, modules or keys. Reading files, memory management, threads
// and writing to descriptors already open keep working. Calls of another
// ABI than the binary's are refused. Under AddressSanitizer ptrace stays
// allowed: LeakSanitizer needs it at exit.
// False when the kernel or the architecture offers no seccomp filter (the
// process then runs under its resource limits only).
bool DenyDangerousSyscalls();

}  // namespace ragd::corpus::internal
