"""What a worker process does to itself before its first script, so that code which escaped QuickJS stays boxed.

`confine()` runs in the worker after its imports and before it reports ready, in this order:

1. **Network namespace**: `unshare(CLONE_NEWNET)` as root, else `unshare(CLONE_NEWUSER | CLONE_NEWNET)` where
   unprivileged user namespaces are allowed. The new namespace has only a loopback device that is down: no
   address, local or remote, is reachable over IP, and abstract Unix sockets are the namespace's own.
2. **User**: started as root, the worker switches to `uid`/`gid` (65534, "nobody", unless configured) with no
   supplementary groups, so the process-count limit applies and it cannot read what only root may.
3. **Not dumpable**: another process of the same user cannot attach to it or read its memory.
4. **Resource limits**: address space, no core files, no file writes, 16 descriptors, and no new processes
   (RLIMIT_NPROC 0, which the kernel ignores for root; hence step 2).
5. **Landlock** (Linux 5.13+, where the kernel enables it): no file may be opened, read, written or executed
   (the worker has imported everything it needs by then), no TCP connect or bind (6.7+), and no signal to or
   abstract Unix socket of a process outside the worker (6.12+); no ptrace or /proc access to other processes.
6. **seccomp** (x86-64): a filter that refuses (EPERM) creating any socket, io_uring, starting a process or
   program, signalling another process, ptrace and cross-process memory access, new namespaces, mounts, BPF,
   perf events, keyrings and kernel modules. It keeps the worker off the network where no namespace could be
   made, and off Unix sockets in the file system, which a network namespace does not cover.

Each step that the OS refuses is skipped and said in the report, which the worker sends to the host with its
`ready`; the host logs it once, as a warning when the network is not cut off (see `sandbox.pool`).
"""

from __future__ import annotations

import ctypes
import os
import platform
import resource
import struct
from collections.abc import Iterable
from typing import Any

__all__ = [
    "NETWORK_MECHANISMS",
    "ConfinementUnavailable",
    "confine",
    "drop_user",
    "enter_network_namespace",
    "install_seccomp_filter",
    "restrict_with_landlock",
    "seccomp_program",
    "summary",
]

#: The steps that each, alone, keep the worker from opening any network connection.
NETWORK_MECHANISMS = ("namespace", "seccomp")

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


class ConfinementUnavailable(Exception):
    """The OS does not offer this step here; the message says why."""


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    libc.prctl.restype = ctypes.c_int
    libc.unshare.argtypes = [ctypes.c_int]
    libc.unshare.restype = ctypes.c_int
    return libc


def _failed(what: str) -> ConfinementUnavailable:
    errno = ctypes.get_errno()
    return ConfinementUnavailable(f"{what} failed: {os.strerror(errno)} (errno {errno})")


def _prctl(option: int, arg: int = 0) -> None:
    if _libc().prctl(option, arg, 0, 0, 0) != 0:
        raise _failed(f"prctl({option})")


# 1. Network namespace


def enter_network_namespace() -> None:
    """Move this process into a new, empty network namespace (in a new user namespace when not root)."""
    if platform.system() != "Linux":
        raise ConfinementUnavailable(f"network namespaces are Linux only, this is {platform.system()}")
    flags = _CLONE_NEWNET if os.geteuid() == 0 else _CLONE_NEWUSER | _CLONE_NEWNET
    if _libc().unshare(flags) != 0:
        what = "unshare(CLONE_NEWNET)" if os.geteuid() == 0 else "unshare(CLONE_NEWUSER | CLONE_NEWNET)"
        raise _failed(what)


# 2. User


def drop_user(uid: int, gid: int) -> None:
    """As root: become `uid`/`gid` with no supplementary groups, for good (real, effective and saved ids)."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getuid() == 0 or os.geteuid() == 0 or os.getgroups():
        raise ConfinementUnavailable("the process still has root's ids after setresuid")


# 4. Resource limits


def _set_limits(address_space: int) -> list[str]:
    """The rlimits; the names of those the platform refused."""
    limits = [
        (resource.RLIMIT_AS, address_space, "RLIMIT_AS"),
        (resource.RLIMIT_CORE, 0, "RLIMIT_CORE"),
        (resource.RLIMIT_FSIZE, 0, "RLIMIT_FSIZE"),
        (resource.RLIMIT_NOFILE, 16, "RLIMIT_NOFILE"),
    ]
    if hasattr(resource, "RLIMIT_NPROC") and os.getuid() != 0:
        limits.append((resource.RLIMIT_NPROC, 0, "RLIMIT_NPROC"))
    refused = []
    for which, value, name in limits:
        try:
            _, hard = resource.getrlimit(which)
            capped = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (capped, capped))
        except (ValueError, OSError):
            refused.append(name)
    return refused


# 5. Landlock

_LANDLOCK_CREATE_RULESET = 444
_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1


def restrict_with_landlock() -> int:
    """Enter a Landlock domain that grants nothing the kernel can restrict; the Landlock ABI version used.

    No rule is added, so every handled access is refused: file access of every kind, TCP connect and bind
    (ABI 4+), signals and abstract Unix sockets outside the domain (ABI 6+). Needs no_new_privs (set here).
    """
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "aarch64"):
        raise ConfinementUnavailable(f"Landlock is not used on {platform.system()} {platform.machine()}")
    libc = _libc()
    abi = libc.syscall(_LANDLOCK_CREATE_RULESET, None, 0, _LANDLOCK_CREATE_RULESET_VERSION)
    if abi < 1:
        raise _failed("landlock_create_ruleset (is Landlock enabled in the kernel's lsm= list?)")
    fs = (1 << 13) - 1  # ABI 1: execute, write, read, read dir, remove, make every kind of node
    if abi >= 2:
        fs |= 1 << 13  # refer (link or rename across directories)
    if abi >= 3:
        fs |= 1 << 14  # truncate
    if abi >= 5:
        fs |= 1 << 15  # ioctl on devices
    net = 0b11 if abi >= 4 else 0  # bind and connect TCP
    scoped = 0b11 if abi >= 6 else 0  # abstract Unix sockets and signals outside the domain
    attr = struct.pack("=QQQ", fs, net, scoped)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    buffer = ctypes.create_string_buffer(attr[:size], size)
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    ruleset = libc.syscall(_LANDLOCK_CREATE_RULESET, buffer, ctypes.c_size_t(size), 0)
    if ruleset < 0:
        raise _failed("landlock_create_ruleset")
    try:
        if libc.syscall(_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), 0) != 0:
            raise _failed("landlock_restrict_self")
    finally:
        os.close(ruleset)
    return int(abi)


# 6. seccomp

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_SYSCALL_BIT = 0x40000000
#: x86-64 system calls a worker never makes and escaped code would want.
_DENIED_X86_64 = {
    "socket": 41,
    "socketpair": 53,
    "clone": 56,
    "fork": 57,
    "vfork": 58,
    "execve": 59,
    "ptrace": 101,
    "pivot_root": 155,
    "chroot": 161,
    "mount": 165,
    "umount2": 166,
    "init_module": 175,
    "delete_module": 176,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "unshare": 272,
    "perf_event_open": 298,
    "open_by_handle_at": 304,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "finit_module": 313,
    "bpf": 321,
    "execveat": 322,
    "userfaultfd": 323,
    "pidfd_send_signal": 424,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "pidfd_open": 434,
    "clone3": 435,
    "pidfd_getfd": 438,
}
#: Signal-sending calls, allowed only when their first argument is the worker's own pid.
_SELF_ONLY_X86_64 = {"kill": 62, "rt_sigqueueinfo": 129, "tkill": 200, "tgkill": 234, "rt_tgsigqueueinfo": 297}

_BPF_LD_W_ABS = 0x20
_BPF_JEQ_K = 0x15
_BPF_JGE_K = 0x35
_BPF_RET_K = 0x06
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO_EPERM = 0x00050000 | 1
_RET_ALLOW = 0x7FFF0000


class _SockFilter(ctypes.Structure):
    _fields_ = (("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32))


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter)))


def seccomp_program(pid: int) -> list[tuple[int, int, int, int]]:
    """The BPF program as (code, jt, jf, k): refuse the denied calls, and signals to any pid but `pid`."""
    denied = sorted(_DENIED_X86_64.values())
    self_only = sorted(_SELF_ONLY_X86_64.values())
    # Layout: 0 ld arch; 1 jeq; 2 kill; 3 ld nr; 4 jge x32; denied...; self_only...; allow; ld arg0; jeq pid;
    # allow; deny.
    first = 5
    after_denied = first + len(denied)
    after_self = after_denied + len(self_only)
    check_pid, allow, deny = after_self + 1, after_self + 3, after_self + 4
    program: list[tuple[int, int, int, int]] = [
        (_BPF_LD_W_ABS, 0, 0, 4),
        (_BPF_JEQ_K, 1, 0, _AUDIT_ARCH_X86_64),
        (_BPF_RET_K, 0, 0, _RET_KILL_PROCESS),
        (_BPF_LD_W_ABS, 0, 0, 0),
        (_BPF_JGE_K, deny - 5, 0, _X32_SYSCALL_BIT),
    ]
    for index, number in enumerate(denied, start=first):
        program.append((_BPF_JEQ_K, deny - index - 1, 0, number))
    for index, number in enumerate(self_only, start=after_denied):
        program.append((_BPF_JEQ_K, check_pid - index - 1, 0, number))
    program += [
        (_BPF_RET_K, 0, 0, _RET_ALLOW),
        (_BPF_LD_W_ABS, 0, 0, 16),  # the low 32 bits of the first argument: the pid (an int) the call acts on
        (_BPF_JEQ_K, allow - check_pid - 2, deny - check_pid - 2, pid & 0xFFFFFFFF),
        (_BPF_RET_K, 0, 0, _RET_ALLOW),
        (_BPF_RET_K, 0, 0, _RET_ERRNO_EPERM),
    ]
    if any(jt > 255 or jf > 255 for _, jt, jf, _ in program):
        raise AssertionError("a seccomp jump is out of range")
    return program


def install_seccomp_filter() -> None:
    """Install the filter of `seccomp_program` for this process (x86-64 Linux only). Needs no_new_privs."""
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        raise ConfinementUnavailable(f"the seccomp filter is written for x86-64 Linux, this is {platform.machine()}")
    program = seccomp_program(os.getpid())
    filters = (_SockFilter * len(program))(*(_SockFilter(*instruction) for instruction in program))
    prog = _SockFprog(len(program), ctypes.cast(filters, ctypes.POINTER(_SockFilter)))
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    if _libc().prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0) != 0:
        raise _failed("prctl(PR_SET_SECCOMP)")


# All of it


def confine(*, uid: int, gid: int, address_space: int) -> dict[str, Any]:
    """Apply every step the OS allows, in order; the report the worker sends the host (JSON-able).

    `network` lists the applied steps of NETWORK_MECHANISMS, `landlock` the Landlock ABI used (0 for none),
    `uid` the user the worker now runs as (outside any user namespace), `skipped` why each step that was not
    applied was not.
    """
    skipped: dict[str, str] = {}
    network: list[str] = []
    landlock = 0
    # The user as the rest of the system sees it: inside a new user namespace getuid() says 65534 (unmapped).
    user = os.getuid()

    def attempt(name: str, step: Any, *args: object) -> Any:
        try:
            return step(*args)
        except (ConfinementUnavailable, OSError) as error:
            skipped[name] = str(error)
            return None

    if attempt("namespace", enter_network_namespace) is None and "namespace" not in skipped:
        network.append("namespace")
    if os.geteuid() == 0:
        attempt("user", drop_user, uid, gid)
        user = os.getuid()
    attempt("dumpable", _prctl, _PR_SET_DUMPABLE, 0)
    refused = _set_limits(address_space)
    if refused:
        skipped["limits"] = "the OS refused " + ", ".join(refused)
    landlock = attempt("landlock", restrict_with_landlock) or 0
    if attempt("seccomp", install_seccomp_filter) is None and "seccomp" not in skipped:
        network.append("seccomp")
    return {"network": network, "landlock": landlock, "uid": user, "skipped": skipped}


def summary(report: dict[str, Any]) -> str:
    """One line saying what confines the workers, from a worker's report."""
    network = _names(report.get("network", ()))
    parts = [f"network cut off by {' and '.join(network)}" if network else "network NOT cut off"]
    landlock = report.get("landlock") or 0
    parts.append(f"Landlock ABI {landlock}" if landlock else "no Landlock")
    parts.append(f"uid {report.get('uid')}")
    skipped = report.get("skipped") or {}
    if isinstance(skipped, dict) and skipped:
        parts.append("skipped: " + "; ".join(f"{name}: {why}" for name, why in sorted(skipped.items())))
    return ", ".join(parts)


def _names(values: Iterable[object]) -> list[str]:
    return [str(value) for value in values]
