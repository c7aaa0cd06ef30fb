//! Rootless Podman as a real non-root user (issue 39): as root, CI has the unprivileged user
//! `cudaup-ci` (`.ci/run` makes it; `useradd` gives it subordinate ids). Everything cudaup does
//! here runs as that user: `container plan` reads the real rootless Podman's `info`, `container
//! setup` refuses to write `/etc/cdi` without root and writes the spec under a root prefix when
//! given one, and a rootless container started by that user sees the devices and libraries of
//! the spec. Podman 4.3 (Debian 12) reads `/etc/cdi` only, so the prefix's spec directory is
//! bind-mounted there in a private mount namespace before dropping to the user: nothing is
//! written to the host's `/etc/cdi`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;
use crate::container::{fake_driver, podman_conf_with, sh, ETC_CDI};

/// The user `.ci/run` makes.
const USER: &str = "cudaup-ci";

/// `uid:gid` of `user`, when it exists.
fn ids(user: &str) -> Option<(u32, u32)> {
    let id = |flag: &str| -> Option<u32> {
        let o = Command::new("id").arg(flag).arg(user).output().ok()?;
        o.status
            .success()
            .then(|| String::from_utf8_lossy(&o.stdout).trim().parse().ok())?
    };
    Some((id("-u")?, id("-g")?))
}

/// Commands started as the user, with nothing of root's environment.
struct AsUser {
    uid: u32,
    gid: u32,
    home: PathBuf,
    run: PathBuf,
    conf: Option<PathBuf>,
}

impl AsUser {
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new("setpriv");
        c.arg(format!("--reuid={}", self.uid))
            .arg(format!("--regid={}", self.gid))
            .arg("--clear-groups")
            .arg(program)
            .current_dir(&self.home)
            .env_clear()
            .env("HOME", &self.home)
            .env("XDG_RUNTIME_DIR", &self.run)
            .env("PATH", "/usr/bin:/bin:/usr/sbin:/sbin")
            .env("NO_COLOR", "1")
            .env("CUDAUP_NO_NVML", "1")
            .env(GUARD, test_name());
        if let Some(conf) = &self.conf {
            c.env("CONTAINERS_CONF", conf);
        }
        c
    }

    fn cudaup(&self, exe: &Path, args: &[&str]) -> Run {
        let mut c = self.command(exe.to_str().unwrap());
        c.args(args);
        let out = guarded_output(&mut c);
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// Ends the rootless pause process Podman leaves behind for the user (it holds the user's
/// namespaces until killed), by the id in its pid file: whatever way the test ends.
struct PauseProcess(PathBuf);

impl Drop for PauseProcess {
    fn drop(&mut self) {
        let pid_file = self.0.join("libpod/tmp/pause.pid");
        if let Ok(pid) = fs_err::read_to_string(&pid_file) {
            if let Ok(pid) = pid.trim().parse::<u32>() {
                let _ = Command::new("kill").arg(pid.to_string()).status();
            }
        }
    }
}

fn chown(path: &Path, uid: u32, gid: u32) {
    std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
}

#[test]
fn needs_root_rootless_podman_as_a_real_user_gets_the_gpus_through_cdi() {
    let test = "needs_root_rootless_podman_as_a_real_user_gets_the_gpus_through_cdi";
    if !sh(Command::new("id").arg("-u")).stdout.starts_with(b"0") {
        return skipped(
            test,
            "not root: the test drops to an unprivileged user and makes device nodes",
        );
    }
    let Some((uid, gid)) = ids(USER) else {
        return skipped(test, "no user cudaup-ci (.ci/run makes it as root)");
    };
    for tool in ["podman", "setpriv", "unshare"] {
        if Command::new(tool).arg("--version").output().is_err() {
            return skipped(test, &format!("{tool} is not installed"));
        }
    }
    let Some(busybox) = ["/bin/busybox", "/usr/bin/busybox"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
    else {
        return skipped(test, "no busybox-static to build the test image from");
    };

    // Everything the user reads or writes lies in one directory it can reach.
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    fs_err::set_permissions(w, std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = w.join("home");
    let run = w.join("run");
    for d in [&home, &run] {
        fs_err::create_dir(d).unwrap();
        chown(d, uid, gid);
    }
    fs_err::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    let _pause = PauseProcess(run.clone());
    let exe = w.join("cudaup");
    if fs_err::hard_link(env!("CARGO_BIN_EXE_cudaup"), &exe).is_err() {
        fs_err::copy(env!("CARGO_BIN_EXE_cudaup"), &exe).unwrap();
    }
    fs_err::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut user = AsUser {
        uid,
        gid,
        home: home.clone(),
        run,
        conf: None,
    };

    // The image, imported into the user's own storage.
    let rootfs = w.join("rootfs");
    fs_err::create_dir_all(rootfs.join("bin")).unwrap();
    fs_err::copy(busybox, rootfs.join("bin/busybox")).unwrap();
    for app in ["sh", "ls", "cat", "env", "true", "id", "readlink"] {
        std::os::unix::fs::symlink("busybox", rootfs.join("bin").join(app)).unwrap();
    }
    let tar = w.join("rootfs.tar");
    assert!(sh(Command::new("tar")
        .arg("-C")
        .arg(&rootfs)
        .arg("-cf")
        .arg(&tar)
        .arg("."))
    .status
    .success());
    fs_err::set_permissions(&tar, std::fs::Permissions::from_mode(0o644)).unwrap();
    let image = "localhost/cudaup-test-busybox:latest";
    let imported = sh(user.command("podman").arg("import").arg(&tar).arg(image));
    if !imported.status.success() {
        return skipped(
            test,
            &format!(
                "rootless podman import failed as {USER}: {}",
                String::from_utf8_lossy(&imported.stderr).trim()
            ),
        );
    }
    let conf_dir = w.join("conf");
    fs_err::create_dir(&conf_dir).unwrap();
    let conf = match podman_conf_with(&conf_dir, image, &|| user.command("podman")) {
        Ok(c) => c,
        Err(why) => {
            return skipped(
                test,
                &format!("rootless podman cannot run a container here as {USER}: {why}"),
            )
        }
    };
    user.conf = Some(conf);

    // What cudaup sees as that user: rootless Podman, and a spec in /etc/cdi that needs root
    // once (Podman 4.3 reads no user directory).
    let plan = user.cudaup(&exe, &["container", "plan", "--json"]);
    assert_eq!(plan.code, 0, "{}\n{}", plan.stdout, plan.stderr);
    let j = plan.json();
    assert_eq!(j["host"]["root"], false, "{j}");
    let engine = &j["engines"][0];
    assert_eq!(engine["kind"], "podman", "{j}");
    assert_eq!(engine["rootless"], true, "{j}");
    let choice = j["choices"][0].to_string();
    assert!(choice.contains("/etc/cdi"), "{choice}");

    let driver = Tree::new();
    fake_driver(&driver, "580.95.05", true);
    fs_err::set_permissions(driver.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let driver_arg = driver.path().to_str().unwrap();

    // Without root and without a prefix: refused, naming the file, nothing written.
    let refused = user.cudaup(
        &exe,
        &[
            "container",
            "setup",
            "--engine",
            "podman",
            "--driver-root",
            driver_arg,
        ],
    );
    assert_eq!(refused.code, 2, "{}\n{}", refused.stdout, refused.stderr);
    assert!(
        refused.stderr.contains("/etc/cdi/cudaup-nvidia.json")
            && refused.stderr.contains("needs root"),
        "{}",
        refused.stderr
    );

    // With a prefix the user owns, the spec is written there, as that user.
    let prefix = w.join("prefix");
    fs_err::create_dir(&prefix).unwrap();
    chown(&prefix, uid, gid);
    let r = user.cudaup(
        &exe,
        &[
            "container",
            "setup",
            "--engine",
            "podman",
            "--root-prefix",
            prefix.to_str().unwrap(),
            "--driver-root",
            driver_arg,
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let spec_dir = prefix.join("etc/cdi");
    let spec = spec_dir.join("cudaup-nvidia.json");
    assert!(spec.is_file(), "{}", r.stdout);
    use std::os::unix::fs::MetadataExt;
    assert_eq!(fs_err::metadata(&spec).unwrap().uid(), uid);

    // A rootless container of that user, through the spec. In a private mount namespace: the
    // spec directory on /etc/cdi, and a private /dev (a copy of the host's, plus the fake
    // driver's nodes) because a rootless runtime cannot make device nodes and bind-mounts each
    // from the host's /dev at the container's path (on a GPU host they are the same nodes).
    // Rootless Podman keeps a pause process whose namespaces every later podman joins; `system
    // migrate` stops the one the import started, so the next is born inside this namespace.
    let private_dev = w.join("dev");
    fs_err::create_dir(&private_dev).unwrap();
    let _etc_cdi = ETC_CDI.lock().unwrap_or_else(|e| e.into_inner());
    let made_mount_point = !Path::new("/etc/cdi").exists();
    if made_mount_point {
        fs_err::create_dir("/etc/cdi").unwrap();
    }
    let inside = "ls -ln /dev/nvidia0 /dev/nvidiactl; cat /usr/lib/x86_64-linux-gnu/libcuda.so.1; nvidia-smi -L; id -u; env";
    let as_user = user.command("podman");
    let mut prefix_words: Vec<String> = vec![as_user.get_program().to_string_lossy().into_owned()];
    prefix_words.extend(as_user.get_args().map(|a| a.to_string_lossy().into_owned()));
    let script = format!(
        "set -e; mount -t tmpfs -o mode=755 cudaup-dev {dev}; cp -a /dev/. {dev}/; cp -a {driver}/dev/. {dev}/; mount --move {dev} /dev; mount --bind {specs} /etc/cdi; {user} system migrate; exec {user} run --rm --network=none --device nvidia.com/gpu=all {image} /bin/sh -c '{inside}'",
        dev = private_dev.display(),
        driver = driver.path().display(),
        specs = spec_dir.display(),
        user = prefix_words.join(" ")
    );
    let mut c = Command::new("unshare");
    c.arg("-m").arg("sh").arg("-c").arg(&script);
    for (k, v) in as_user.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    let o = sh(c.current_dir(&home));
    if made_mount_point {
        let _ = fs_err::remove_dir("/etc/cdi");
    }
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with('c') && l.ends_with("/dev/nvidia0")),
        "{out}"
    );
    assert!(out.contains("stand-in libcuda.so 580.95.05"), "{out}");
    assert!(
        out.contains("GPU 0: NVIDIA H200 (UUID: GPU-5f3a1b2c-0000-1111-2222-333344445555)"),
        "{out}"
    );
    assert!(out.contains("NVIDIA_VISIBLE_DEVICES=void"), "{out}");

    // And back, as the user: the spec and the directories setup made go.
    let un = user.cudaup(&exe, &["container", "uninstall"]);
    assert_eq!(un.code, 0, "{}\n{}", un.stdout, un.stderr);
    assert!(!spec_dir.exists());
    let _ = user.command("podman").args(["rmi", "-f", image]).output();
}
