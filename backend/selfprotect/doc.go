// Package selfprotect closes a Yett process to the user's other processes,
// before it can hold a secret.
//
// An agent is a program of the same user. Where the kernel lets a process
// attach to another of the same user (Debian's default: no Yama, or
// ptrace_scope 0), it can read the memory of an unlocked Yett through
// /proc/<pid>/mem or PTRACE_ATTACH and find the vault's keys and every
// secret it used. Harden removes that, as ssh-agent and gpg-agent do:
//
//   - Linux: PR_SET_DUMPABLE 0 (the kernel then refuses ptrace and
//     /proc/<pid>/mem, environ, fd and maps to every process without
//     CAP_SYS_PTRACE, and /proc/<pid> belongs to root), and RLIMIT_CORE 0
//     (no core file with the keys in it).
//   - macOS: RLIMIT_CORE 0 and PT_DENY_ATTACH; the bundle is signed with the
//     hardened runtime and without get-task-allow (build/darwin).
//   - Windows: a process DACL that gives the user's other processes (through
//     OWNER RIGHTS, which also caps what the owner itself may do) only
//     query, synchronize and terminate: no PROCESS_VM_READ, PROCESS_VM_WRITE,
//     PROCESS_VM_OPERATION, PROCESS_CREATE_THREAD, PROCESS_DUP_HANDLE or
//     WRITE_DAC. An administrator with SeDebugPrivilege still gets in.
//
// What it cannot stop: root (or CAP_SYS_PTRACE), an administrator, a
// debugger the person attaches on purpose, and a process that runs before
// Harden does. docs/threat-model.md says so.
//
// Harden must not be called by `yett mcp`: the gateway reads the shim's
// /proc entries (who holds its stdio) as the same user, which a
// non-dumpable shim would refuse. The shim holds no secret.
package selfprotect
