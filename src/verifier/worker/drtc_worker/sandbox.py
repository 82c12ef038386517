"""The sandbox of an isolated candidate process, built with the kernel's own mechanisms
(namespaces, mounts, rlimits, credentials, no_new_privs) through libc, before any candidate
code runs. Every step that the platform refuses is recorded, never silently skipped: the
report says what holds.

`enter_namespaces()` runs first (before torch is imported): new mount, PID, network, IPC
and UTS namespaces (and a user namespace when drtc is not root), then a fork: the parent
stays outside as the keeper (trusted, holds no candidate code) and kills the namespace's
first process, and with it every process the candidate started, when the checker that
started it dies or asks; the child is that first process. `confine()` runs in the child
once torch is imported: a fresh /proc, empty tmpfs over homes, temporary directories and
the paths the checker names, the Python installation bound back read-only, rlimits, an
unprivileged uid, no_new_privs."""

import ctypes
import os
import resource
import signal
import subprocess
import sys
import time

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38

# what a candidate may see of the environment (everything else, secrets included, is gone)
ENV_ALLOWED = ("PATH", "LANG", "LC_ALL", "TZ", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
               "CUDA_HOME", "CUDA_PATH", "TRITON_INTERPRET", "TRITON_PTXAS_PATH",
               "TRITON_LIBCUDA_PATH", "TRITON_CUDACRT_PATH", "TRITON_CUDART_PATH",
               "OMP_NUM_THREADS", "MKL_NUM_THREADS", "DRTC_DEVICE", "DRTC_WORKER_THREADS",
               "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES")
# directories hidden behind an empty tmpfs (world-writable ones come back empty and private)
HIDDEN = ("/root", "/home", "/tmp", "/var/tmp", "/dev/shm", "/run/user", "/mnt", "/media",
          "/srv", "/opt/drtc")
WRITABLE = ("/tmp", "/var/tmp", "/dev/shm")
WORK_DIR = "/tmp/candidate"
FILE_SIZE_LIMIT = 1 << 30
OPEN_FILES_LIMIT = 4096
PROCESS_LIMIT = 2048

_libc = ctypes.CDLL(None, use_errno=True)


def _err(what):
    e = ctypes.get_errno()
    return f"{what}: {os.strerror(e)}"


def _prctl(option, value):
    return _libc.prctl(ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(0),
                       ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0


def _mount(source, target, fstype, flags, data=None):
    enc = (lambda s: s.encode() if s is not None else None)
    if _libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags),
                   enc(data)) != 0:
        raise OSError(_err(f"mount {target}"))


def candidate_env(base):
    """The allow-listed environment an isolated candidate process starts with."""
    return {k: v for k, v in base.items() if k in ENV_ALLOWED}


class Report:
    """What the sandbox holds: (mechanism, held, detail) lines."""

    def __init__(self):
        self.lines = []

    def add(self, mechanism, held, detail):
        self.lines.append({"mechanism": mechanism, "held": bool(held), "detail": detail})

    def as_list(self):
        return list(self.lines)


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


# Whether the device starts in a new PID namespace: a child unshares one and initializes
# the CUDA driver in its first process (under gVisor cuInit fails there, error 304).
_PID_NAMESPACE_PROBE = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(ctypes.c_int(0x20000000)) != 0:
    sys.exit(3)
pid = os.fork()
if pid == 0:
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        n = ctypes.c_int(0)
        ok = cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(n)) == 0 and n.value > 0
    except OSError:
        ok = False
    os._exit(0 if ok else 4)
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


def device_starts_in_pid_namespace(device):
    """True on CPU; on CUDA, whether the driver initializes inside a new PID namespace
    (asked once per checker, in a throwaway process). `DRTC_SANDBOX_PID_NAMESPACE=0` in the
    checker's environment says no (to test the subreaper keeper where namespaces work)."""
    if os.environ.get("DRTC_SANDBOX_PID_NAMESPACE") == "0":
        return False
    if device != "cuda":
        return True
    try:
        r = subprocess.run([sys.executable, "-I", "-c", _PID_NAMESPACE_PROBE],
                           capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def enter_namespaces(report, pid_namespace=True):
    """New namespaces and the keeper fork. Returns in the child (the namespace's first
    process when a PID namespace was made); the keeper never returns. Without
    `pid_namespace` (the device cannot start in one) the keeper is the subreaper of
    everything the candidate starts instead."""
    root = os.geteuid() == 0
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if pid_namespace:
        flags |= CLONE_NEWPID
    if not root:
        flags |= CLONE_NEWUSER
    made = 0
    if _libc.unshare(ctypes.c_int(flags)) == 0:
        made = flags
    else:
        why = _err("unshare")
        # one at a time: keep what the platform allows
        for f in (CLONE_NEWUSER if not root else 0, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET,
                  CLONE_NEWIPC, CLONE_NEWUTS):
            if f and _libc.unshare(ctypes.c_int(f)) == 0:
                made |= f
        report.add("namespaces", False, f"all at once refused ({why}); one at a time: "
                   f"{_names(made) or 'none'}")
    if made & CLONE_NEWUSER:
        try:
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"0 {uid} 1")
            _write("/proc/self/gid_map", f"0 {gid} 1")
        except OSError as e:
            report.add("user namespace", False, f"id maps refused: {e}")
    if made == flags:
        report.add("namespaces", True, _names(made))
    report.add("network", bool(made & CLONE_NEWNET),
               "own network namespace: no interface up, no loopback, no route out"
               if made & CLONE_NEWNET else "no network namespace: the host's network is "
               "reachable")
    parent = os.getppid()
    if not made & CLONE_NEWPID:
        return _subreaper_keeper(report, parent, pid_namespace, made)
    child = os.fork()
    if child != 0:
        _keep(child, parent)
    # the namespace's first process stays root and only reaps: the candidate runs in its
    # child (ordinary signal semantics, unlike a namespace's init), and when either dies,
    # the namespace and everything in it go
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    runner = os.fork()
    if runner != 0:
        _init(runner)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    report.add("process tree", True, "own PID namespace: everything the candidate starts, "
               "detached or not, dies with it; a keeper outside kills the namespace when "
               "the checker dies")
    return made


def _subreaper_keeper(report, parent, asked, made):
    """Without a PID namespace: the keeper becomes the subreaper of the candidate's process
    tree (an orphan, detached with setsid or not, is re-parented to it rather than to the
    machine's init) and kills every descendant when the candidate's process exits or the
    checker dies or asks. Returns in the candidate's process."""
    if not _prctl(PR_SET_CHILD_SUBREAPER, 1):
        report.add("process tree", False, _err("no PID namespace and no subreaper") + ": "
                   "processes the candidate detaches (setsid) may outlive it")
        return made
    child = os.fork()
    if child != 0:
        _keep(child, parent, subreaper=True)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    why = ("the device does not start in a PID namespace on this machine" if not asked
           else "no PID namespace")
    report.add("process tree", True, f"{why}: a keeper outside is the subreaper of "
               "everything the candidate starts, detached or not, and kills it all when the "
               "candidate's process exits or the checker dies")
    return made


def _descendants(root_pid):
    """Every process below `root_pid` (from /proc's parent links)."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: fields follow the last ')'
        ppid = int(stat[stat.rfind(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [root_pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _kill_descendants():
    """SIGKILLs every descendant of this process until none is left, reaping them."""
    for _ in range(100):
        pids = _descendants(os.getpid())
        if not pids:
            return
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        _reap_all()
        time.sleep(0.01)


def _reap_all():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _names(flags):
    names = [(CLONE_NEWUSER, "user"), (CLONE_NEWNS, "mount"), (CLONE_NEWPID, "pid"),
             (CLONE_NEWNET, "network"), (CLONE_NEWIPC, "ipc"), (CLONE_NEWUTS, "uts")]
    return ", ".join(n for f, n in names if flags & f)


def _exit_like(status):
    """Exits with a child's wait status: its code, or 128 + the signal that killed it."""
    if os.WIFSIGNALED(status):
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _init(runner):
    """The namespace's first process: reaps every orphan, and exits (taking the
    namespace with it) as the runner exits."""
    for fd in (0, 1):
        try:
            os.close(fd)
        except OSError:
            pass
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(0)
        except InterruptedError:
            continue
        if pid == runner:
            _exit_like(status)


def _keep(child, parent, subreaper=False):
    """The keeper: waits for the namespace's first process and kills it (and so the whole
    namespace) when the checker dies or signals. As a `subreaper` (no PID namespace) it
    kills every descendant instead, and reaps the orphans re-parented to it."""
    for fd in (0, 1):
        try:
            os.close(fd)
        except OSError:
            pass

    def stop(*_):
        try:
            os.kill(child, signal.SIGKILL)
        except OSError:
            pass
        if subreaper:
            _kill_descendants()
        os._exit(0)

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, stop)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        stop()
    while True:
        # as subreaper, any child: an orphan re-parented here is reaped as it exits
        try:
            pid, status = os.waitpid(-1 if subreaper else child, os.WNOHANG)
        except ChildProcessError:
            os._exit(0)
        if pid == child:
            if subreaper:
                _kill_descendants()
            _exit_like(status)
        if pid != 0:
            continue  # an orphan reaped: look again at once
        if os.getppid() != parent:
            stop()
        time.sleep(0.05)


def _needed_paths():
    """The Python installation the process runs from (its prefixes and import paths)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable))}
    own = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for p in sys.path:
        # the runner's own directory is not needed: its modules are imported by now
        if p and os.path.isdir(p) and os.path.realpath(p) != os.path.realpath(own):
            paths.add(p)
    real = {os.path.realpath(p) for p in paths} | paths
    out = []
    for p in sorted(real, key=len):
        if not any(p == q or p.startswith(q.rstrip("/") + "/") for q in out):
            out.append(p)
    return out


# directories the process needs whole: never hidden, nor any directory that holds one
SYSTEM = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/proc", "/sys", "/dev",
          "/var/lib", "/run/nvidia-persistenced")


def _holds_system(d):
    return d == "/" or any(s == d or s.startswith(d.rstrip("/") + "/") for s in SYSTEM)


def _under(path, dirs):
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def confine(report, made, extra_hidden, uid, memory_bytes, cpu_seconds):
    """Filesystem, limits and credentials. Returns the candidate's working directory."""
    root = os.geteuid() == 0
    hidden = [d for d in list(HIDDEN) + list(extra_hidden)
              if d and os.path.isdir(d) and not _holds_system(os.path.realpath(d))]
    work = None
    if made & CLONE_NEWNS:
        try:
            _mount(None, "/", None, MS_REC | MS_PRIVATE)
            if made & CLONE_NEWPID:
                _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            needed = [p for p in _needed_paths() if _under(p, hidden)]
            fds = {p: os.open(p, os.O_PATH) for p in needed}
            # the outermost hidden directories first; nested ones are hidden with them
            covered = []
            for d in sorted(set(os.path.realpath(h) for h in hidden), key=len):
                if _under(d, covered):
                    continue
                mode = "1777" if d in WRITABLE else "0755"
                _mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode},size=2g")
                covered.append(d)
            for p, fd in fds.items():
                os.makedirs(p, exist_ok=True)
                _mount(f"/proc/self/fd/{fd}", p, None, MS_BIND | MS_REC)
                _mount(None, p, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID)
                os.close(fd)
            back = ("; the Python installation bound back read-only (" + ", ".join(needed)
                    + ")") if needed else ""
            report.add("filesystem", True, "empty private tmpfs over " + ", ".join(covered)
                       + back)
        except OSError as e:
            report.add("filesystem", False, f"mount namespace set up failed: {e}")
    else:
        report.add("filesystem", False, "no mount namespace: homes and drtc's cache are "
                   "visible to the candidate's user")
    try:
        os.makedirs(WORK_DIR, exist_ok=True)
        work = WORK_DIR
    except OSError:
        work = os.getcwd()
    limits = [(resource.RLIMIT_CORE, 0, "core 0"),
              (resource.RLIMIT_FSIZE, FILE_SIZE_LIMIT, f"file size {FILE_SIZE_LIMIT >> 20} MiB"),
              (resource.RLIMIT_NOFILE, OPEN_FILES_LIMIT, f"open files {OPEN_FILES_LIMIT}"),
              (resource.RLIMIT_NPROC, PROCESS_LIMIT, f"processes/threads {PROCESS_LIMIT}"),
              (resource.RLIMIT_CPU, cpu_seconds, f"CPU {cpu_seconds} s")]
    if memory_bytes:
        limits.append((resource.RLIMIT_AS, memory_bytes,
                       f"address space {memory_bytes >> 20} MiB"))
    held = []
    for res, value, what in limits:
        try:
            resource.setrlimit(res, (value, value))
            held.append(what)
        except (OSError, ValueError) as e:
            report.add("rlimit", False, f"{what}: {e}")
    report.add("rlimits", True, ", ".join(held) + ("" if memory_bytes else
               "; memory not limited by address space (CUDA reserves virtual memory)"))
    if root:
        try:
            os.chown(work, uid, uid)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            report.add("user", True, f"runs as uid {uid} (unprivileged, no groups, no "
                       "capabilities)")
        except OSError as e:
            report.add("user", False, f"dropping root failed: {e}")
    else:
        report.add("user", os.geteuid() != 0, f"runs as drtc's own user (uid {os.getuid()}); "
                   "drtc is not root, so there is no other user to switch to")
    report.add("no_new_privs", _prctl(PR_SET_NO_NEW_PRIVS, 1), "no setuid gains")
    os.environ["HOME"] = work
    # the uid has no passwd entry: libraries that ask who runs them (getpass.getuser, for
    # cache directories) read these first
    os.environ["USER"] = os.environ["LOGNAME"] = "drtc-candidate"
    os.environ["TMPDIR"] = work
    os.environ["TRITON_CACHE_DIR"] = os.path.join(work, ".triton")
    os.chdir(work)
    return work
