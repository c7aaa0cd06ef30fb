# cudaup's guard (docs/guard.md), loaded at every start of this venv's Python by cudaup_guard.pth.
# It compares the version of each planned distribution (from its .dist-info directory, one stat
# when all is well; no torch import, no CUDA) with the build cudaup installed, and when another
# build replaced it says so once per process tree, with the command that puts it back.
# `cudaup guard off VENV` removes it; CUDAUP_GUARD_QUIET=1 silences it.
import os
import sys

PLANNED = __PLANNED__
VENV = __VENV__
RESTORE = __RESTORE__


def _norm(name):
    out = []
    for c in name.lower():
        c = "_" if c in "-." else c
        if not (c == "_" and out and out[-1] == "_"):
            out.append(c)
    return "".join(out)


def _installed(site, names, name):
    """(version, installer, modified) of `name`'s dist-info in `site`, or None."""
    want = _norm(name)
    for entry in names:
        if not entry.endswith(".dist-info") or "-" not in entry:
            continue
        dist, version = entry[: -len(".dist-info")].split("-", 1)
        if _norm(dist) != want:
            continue
        info = os.path.join(site, entry)
        try:
            with open(os.path.join(info, "METADATA"), encoding="utf-8") as f:
                for line in f:
                    if line.startswith("Version:"):
                        version = line.split(":", 1)[1].strip()
                        break
                    if not line.strip():
                        break
        except OSError:
            pass
        try:
            with open(os.path.join(info, "INSTALLER"), encoding="utf-8") as f:
                installer = f.read().strip() or "an unknown installer"
        except OSError:
            installer = "an unknown installer"
        try:
            import time

            modified = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(os.stat(info).st_mtime))
        except OSError:
            modified = "an unknown time"
        return version, installer, modified
    return None


def _check():
    if os.environ.get("CUDAUP_GUARD_WARNED") or os.environ.get("CUDAUP_GUARD_QUIET") == "1":
        return
    site = os.path.dirname(os.path.abspath(__file__))
    names = None
    lines = []
    for name, version in PLANNED:
        if os.path.isdir(os.path.join(site, "%s-%s.dist-info" % (_norm(name), version))):
            continue
        if names is None:
            names = os.listdir(site)
        found = _installed(site, names, name)
        if found is None:
            lines.append("  %s %s is no longer installed" % (name, version))
        elif found[0] != version:
            lines.append(
                "  %s %s replaced the planned %s (installed by %s, %s)"
                % (name, found[0], version, found[1], found[2])
            )
    if not lines:
        return
    # Children (DataLoader workers, subprocesses) inherit the variable and stay quiet.
    os.environ["CUDAUP_GUARD_WARNED"] = "1"
    sys.stderr.write(
        "cudaup's guard: this venv (%s) no longer has the build cudaup installed:\n%s\n"
        "  restore it: %s\n"
        "  (`cudaup guard status %s` says more; `cudaup guard off %s` stops this check)\n"
        % (VENV, "\n".join(lines), RESTORE, VENV, VENV)
    )


try:
    _check()
except Exception:
    # The guard never stops Python from starting.
    pass
