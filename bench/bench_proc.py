"""CPU time of processes from /proc, for the benchmark scripts that compare a peer tool with
drivelab on the same database server (bench/*.sh that run `python3 -`): one reading of a
server's CPU for all of them."""
import os

TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid, children_too):
    """utime + stime of `pid` in seconds (+ cutime + cstime, the children it has reaped, when
    `children_too`), from /proc/<pid>/stat (proc(5) fields 14-17); 0 when it is gone."""
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    t = int(f[11]) + int(f[12]) + ((int(f[13]) + int(f[14])) if children_too else 0)
    return t / TICK


def server_cpu(pid_file, kind):
    """CPU seconds a database server has used so far, or None when `pid_file` is empty or cannot
    be read. kind "postgres": the postmaster (first line of postmaster.pid), the backends it has
    reaped (cutime/cstime: a session's CPU lands there when it ends) and its live children
    (checkpointer, WAL writer, autovacuum, sessions still open). Any other kind: the one process
    (mariadbd: every session is a thread of it). The difference of two readings is the server's
    CPU between them, once the sessions of the measured run have ended."""
    if not pid_file:
        return None
    try:
        pid = int(open(pid_file).read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    if kind != "postgres":
        return proc_cpu(pid, False)
    total = proc_cpu(pid, True)
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == pid:
                total += proc_cpu(int(d), False)
    return total
