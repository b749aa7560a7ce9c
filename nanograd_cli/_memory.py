"""How much more memory this process can use: the least of what the system has free, what its
own limits (`ulimit -v`, `ulimit -d`) leave and what its cgroup's limit (a container's memory
limit) leaves. Linux only; elsewhere nothing can be told."""

from __future__ import annotations

import os
import resource

# Each limit on this process, with the line of /proc/self/status saying how much of it is used.
PROCESS_LIMITS = ((resource.RLIMIT_AS, "VmSize"), (resource.RLIMIT_DATA, "VmData"))

# A cgroup limit this large means "no limit" (cgroup v1 writes 2**63 rounded down to a page).
NO_LIMIT = 1 << 62


def gigabytes(size: float) -> str:
    """A size in bytes as a message says it: `2.4 GB`, `1,200.0 GB`, `1.2e+15 GB`."""
    gb = size / 1e9
    return f"{gb:,.1f} GB" if gb < 1e6 else f"{gb:.2g} GB"


def available(meminfo: str = "/proc/meminfo") -> int | None:
    """Bytes this process can still allocate, or None when no limit can be told."""
    known = [
        left
        for left in (system_free(meminfo), process_limit_left(), cgroup_left())
        if left is not None
    ]
    return min(known) if known else None


def system_free(meminfo: str = "/proc/meminfo") -> int | None:
    """The system's available memory (MemAvailable: free memory and what can be reclaimed)."""
    fields = _fields(meminfo)
    return fields["MemAvailable"] if "MemAvailable" in fields else None


def process_limit_left(status: str = "/proc/self/status") -> int | None:
    """What the process's own limits (address space, data) leave of it, the least of them."""
    used = None
    left = []
    for limit, field in PROCESS_LIMITS:
        soft = resource.getrlimit(limit)[0]
        if soft == resource.RLIM_INFINITY:
            continue
        used = _fields(status) if used is None else used
        if field in used:
            left.append(max(0, soft - used[field]))
    return min(left) if left else None


def cgroup_left(root: str = "/sys/fs/cgroup", cgroups: str = "/proc/self/cgroup") -> int | None:
    """What the memory limit of the process's cgroup (v2 or v1) leaves: the limit less what
    the cgroup uses, page cache that can be dropped (inactive files) not counted as used."""
    try:
        with open(cgroups) as f:
            lines = [line.rstrip("\n").split(":", 2) for line in f]
    except OSError:
        return None
    for hierarchy, controllers, path in (line for line in lines if len(line) == 3):
        if hierarchy == "0" and not controllers:  # v2
            files = ("memory.max", "memory.current", "inactive_file")
            mount = root
        elif "memory" in controllers.split(","):  # v1
            files = ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")
            mount = os.path.join(root, "memory")
        else:
            continue
        # In a container, the cgroup's own directory is what is mounted.
        directory = os.path.join(mount, path.lstrip("/"))
        left = _cgroup_left(directory if os.path.isdir(directory) else mount, files)
        if left is not None:
            return left
    return None


def _cgroup_left(directory: str, files: tuple[str, str, str]) -> int | None:
    limit_file, usage_file, reclaimable = files
    try:
        with open(os.path.join(directory, limit_file)) as f:
            limit = f.read().strip()
        with open(os.path.join(directory, usage_file)) as f:
            usage = int(f.read())
    except (OSError, ValueError):
        return None
    if limit == "max" or not limit.isdigit() or int(limit) >= NO_LIMIT:
        return None
    stat = _fields(os.path.join(directory, "memory.stat"), separator=" ", unit=1)
    return max(0, int(limit) - usage + stat.get(reclaimable, 0))


def _fields(path: str, separator: str = ":", unit: int = 1024) -> dict[str, int]:
    """`name: number [kB]` lines as bytes (numbers in kB, or in bytes with `unit` 1)."""
    fields = {}
    try:
        with open(path) as f:
            for line in f:
                name, _, value = line.partition(separator)
                number = value.split()[:1]
                if number and number[0].isdigit():
                    fields[name.strip()] = int(number[0]) * unit
    except OSError:
        pass
    return fields
