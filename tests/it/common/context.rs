//! One test's world (uv's `TestContext` is the model): its own directory holding HOME and
//! `$CUDAUP_HOME`, a `bin/` of stand-ins first on a `PATH` that holds nothing of the host's but
//! [`tools`](super::tools), and a machine picture (a `--system` document, by default a machine
//! without a GPU) that every install and plan is given. Every command it starts carries the test
//! guard naming the test, and a run whose output shows the guard refusing something fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{guarded_output, hermetic, Run};

/// A test's private machine. Dropping it removes everything.
pub struct TestContext {
    dir: tempfile::TempDir,
    system: PathBuf,
    env: Vec<(String, String)>,
    /// Commands get neither `--home` nor `CUDAUP_HOME`: cudaup finds its default home.
    default_home: bool,
    /// `PATH` is the stand-ins' directory alone, without the host's tools.
    bare_path: bool,
}

impl Default for TestContext {
    fn default() -> Self {
        Self::new()
    }
}

impl TestContext {
    /// A fresh context: empty HOME and `$CUDAUP_HOME`, no stand-ins, the no-GPU picture.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "bin"] {
            fs_err::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let system = dir.path().join("system.json");
        fs_err::write(
            &system,
            serde_json::to_vec_pretty(&super::no_gpu_system_json()).unwrap(),
        )
        .unwrap();
        Self {
            dir,
            system,
            env: vec![("CUDAUP_TEST_NO_RETRY_DELAY".into(), "1".into())],
            default_home: false,
            bare_path: false,
        }
    }

    /// Runs cudaup without `--home` or `CUDAUP_HOME`, so it takes its default home under HOME
    /// (`~/.local/share/cudaup`), as a user who never chose one does.
    pub fn with_default_home(mut self) -> Self {
        self.default_home = true;
        self
    }

    /// Gives commands a `PATH` of the stand-ins' directory alone (empty until a test writes a
    /// stand-in): nothing of the host's takes part (no Python to probe, no fish or zsh to hook),
    /// and each run is that much cheaper.
    pub fn with_bare_path(mut self) -> Self {
        self.bare_path = true;
        self
    }

    /// Plans for the machine `picture` describes (a `detect --json` document) instead.
    pub fn with_system(self, picture: &serde_json::Value) -> Self {
        fs_err::write(&self.system, serde_json::to_vec_pretty(picture).unwrap()).unwrap();
        self
    }

    /// Plans for the picture in `file` (a fixture) instead.
    pub fn with_system_file(self, file: &Path) -> Self {
        fs_err::copy(file, &self.system).unwrap();
        self
    }

    /// Sets `key` for every command.
    pub fn with_env(mut self, key: &str, value: &str) -> Self {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// The test's own directory (scratch space beside HOME).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// HOME, and the directory every command runs in.
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// `$CUDAUP_HOME` (passed as `--home` too, so a test reads like a user's command line), or
    /// the default home under HOME ([`Self::with_default_home`]).
    pub fn cudaup_home(&self) -> PathBuf {
        if self.default_home {
            self.home().join(".local/share/cudaup")
        } else {
            self.home().join(".cudaup")
        }
    }

    /// The stand-ins' directory, first on `PATH`.
    pub fn bin(&self) -> PathBuf {
        self.dir.path().join("bin")
    }

    /// The `--system` file every install and plan gets.
    pub fn system(&self) -> &Path {
        &self.system
    }

    /// [`Self::system`] as an argument.
    pub fn system_arg(&self) -> String {
        self.system.display().to_string()
    }

    /// The `PATH` every command gets: the stand-ins, then the host's ordinary tools (only the
    /// stand-ins [`Self::with_bare_path`]).
    pub fn path_var(&self) -> String {
        if self.bare_path {
            self.bin().display().to_string()
        } else {
            super::path_with(&[&self.bin()])
        }
    }

    /// Writes an executable stand-in `name` into [`Self::bin`] (replacing, never writing
    /// through, what was there) and returns its path.
    pub fn stand_in(&self, name: &str, script: &str) -> PathBuf {
        let path = self.bin().join(name);
        write_exe(&path, script);
        path
    }

    /// A `nvidia-smi` stand-in that prints `banner` when run bare and `query` for
    /// `--query-gpu` (what the real one prints on the pictured machine).
    pub fn with_nvidia_smi(self, banner: &str, query: &str) -> Self {
        self.stand_in(
            "nvidia-smi",
            &format!(
                "#!/bin/sh\ncase \"$1\" in\n  --query-gpu=*) printf '%s' '{query}' ;;\n  '') cat <<'EOF'\n{banner}EOF\n  ;;\n  *) echo \"Invalid combination of input arguments.\" >&2; exit 2 ;;\nesac\n"
            ),
        );
        self
    }

    /// The cudaup binary with this context's environment and `--home`, not yet started.
    pub fn command(&self, args: &[&str]) -> Command {
        self.command_of(Path::new(env!("CARGO_BIN_EXE_cudaup")), args)
    }

    /// Like [`Self::command`] for `exe`: another build of cudaup, or its installed copy.
    pub fn command_of(&self, exe: &Path, args: &[&str]) -> Command {
        let cudaup_home = (!self.default_home).then(|| self.cudaup_home());
        self.build(exe, cudaup_home.as_deref(), args)
    }

    /// Like [`Self::command`] with `--home cudaup_home`: a home other than the context's.
    pub fn command_at(&self, cudaup_home: &Path, args: &[&str]) -> Command {
        self.build(
            Path::new(env!("CARGO_BIN_EXE_cudaup")),
            Some(cudaup_home),
            args,
        )
    }

    /// `exe args` in HOME with the context's environment, and `--home` and `CUDAUP_HOME` set to
    /// `cudaup_home` when there is one.
    fn build(&self, exe: &Path, cudaup_home: Option<&Path>, args: &[&str]) -> Command {
        let home = self.home();
        let mut cmd = Command::new(exe);
        if let Some(h) = cudaup_home {
            cmd.arg("--home").arg(h);
        }
        cmd.args(args).current_dir(&home);
        hermetic(&mut cmd, &home);
        cmd.env("PATH", self.path_var());
        if let Some(h) = cudaup_home {
            cmd.env(cudaup::world::vars::CUDAUP_HOME, h);
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs cudaup with `args`.
    pub fn cudaup(&self, args: &[&str]) -> Run {
        self.cudaup_env(args, &[])
    }

    /// Runs cudaup with `args` and extra variables (which win over the context's).
    pub fn cudaup_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = self.command(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        run(&mut cmd)
    }

    /// `cudaup install` for the context's picture with the driver kept, then `args`.
    pub fn install(&self, args: &[&str]) -> Run {
        let system = self.system_arg();
        let mut all = vec!["install", "--driver", "keep", "--system", &system];
        all.extend_from_slice(args);
        self.cudaup(&all)
    }
}

/// Runs `cmd` to the end (failing the test if the guard refused anything).
pub fn run(cmd: &mut Command) -> Run {
    let out = guarded_output(cmd);
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Writes an executable script at `path`, replacing (never writing through) what was there:
/// installed files may be links into cudaup's cache.
pub fn write_exe(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    fs_err::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = fs_err::remove_file(path);
    fs_err::write(path, text).unwrap();
    fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}
