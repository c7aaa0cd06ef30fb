//! The library's error type and the exit codes of the CLI contract (ARCHITECTURE.md).

/// Process exit codes. Scripts rely on these; change them only together with the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// Everything worked (0).
    Ok,
    /// Something failed that has no more specific code (1).
    Failure,
    /// Bad usage, a broken config file or a broken manifest (2).
    Usage,
    /// A network failure that retries could not overcome (3).
    Network,
    /// Verification failed: a checksum, a size, an unsafe archive, a check that did not pass (4).
    Verification,
    /// No compatible stack exists, or the system is unsupported (5).
    Unsupported,
    /// The user cancelled (Ctrl-C, or "no" at a prompt) (130).
    Cancelled,
    /// The code of a command cudaup ran for the user and watched (`monitor -- CMD`), passed
    /// through as a shell would (128 + N for a signal).
    Passed(u8),
}

impl ExitCode {
    /// The numeric code handed to the operating system.
    pub fn code(self) -> i32 {
        match self {
            ExitCode::Ok => 0,
            ExitCode::Failure => 1,
            ExitCode::Usage => 2,
            ExitCode::Network => 3,
            ExitCode::Verification => 4,
            ExitCode::Unsupported => 5,
            ExitCode::Cancelled => 130,
            ExitCode::Passed(code) => i32::from(code),
        }
    }
}

/// Errors raised by the cudaup library. Each names what it was working on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An I/O error; `fs-err` already puts the path into the message.
    #[error(transparent)]
    Io(#[from] std::io::Error),

    /// The catalog could not be loaded (a manifest unreadable or off its schema).
    #[error(transparent)]
    Catalog(#[from] crate::catalog::CatalogError),

    /// A System JSON given with `--system` could not be read.
    #[error(transparent)]
    SystemFile(#[from] crate::detect::picture::PictureError),

    /// The command line asked for something impossible.
    #[error("{0}")]
    Usage(String),

    /// Flags, variables or the config file cannot be used (exit code 2).
    #[error(transparent)]
    Settings(#[from] crate::settings::SettingsError),

    /// The driver step failed (a package manager's command, the reboot marker): exit code 1,
    /// never "bad usage".
    #[error(transparent)]
    Driver(#[from] crate::install::driver::DriverStepError),

    /// Some rc files could not be hooked (each message says what to add by hand).
    #[error(transparent)]
    Hook(#[from] crate::install::env::HookError),

    /// `$CUDAUP_HOME` is locked by another cudaup (`--no-wait`), or cannot be locked.
    #[error(transparent)]
    Home(#[from] crate::install::home::HomeError),

    /// `uninstall` refused a directory that is not cudaup's home (exit code 2).
    #[error(transparent)]
    Uninstall(#[from] crate::install::uninstall::UninstallError),

    /// The request cannot be served on this machine (exit code 5).
    #[error("{0}")]
    Unsupported(String),

    /// A question got no answer (no terminal to ask at, Ctrl-C, a failed terminal).
    #[error(transparent)]
    Prompt(#[from] crate::world::prompt::PromptError),

    /// A container command failed.
    #[error(transparent)]
    Container(#[from] crate::container::ContainerError),

    /// The Python environment step failed.
    #[error(transparent)]
    PyEnv(#[from] crate::install::python::PyEnvError),

    /// An install failed (the machine is left as it was).
    #[error(transparent)]
    Install(#[from] crate::install::InstallError),

    /// A driver an earlier install put in waits for a reboot (exit code 2).
    #[error(transparent)]
    RebootPending(#[from] crate::install::run::RebootPending),

    /// `mirror create` could not make its bundle (what its layers did not say themselves).
    #[error(transparent)]
    Mirror(Box<crate::install::mirror::MirrorError>),

    /// `repair` could not act on a receipt (exit code 2).
    #[error(transparent)]
    Repair(Box<crate::install::repair::RepairError>),

    /// No install plan (no stack fits, or the resolver broke an invariant).
    #[error(transparent)]
    InstallPlan(#[from] crate::install::plan::PlanError),

    /// A download failed.
    #[error(transparent)]
    Fetch(#[from] crate::fetch::FetchError),

    /// cudaup's own copy could not be put in `$CUDAUP_HOME/bin`.
    #[error("{err}\nhint: {hint}", err = .0, hint = .0.hint())]
    SelfCopy(crate::install::self_copy::SelfCopyError),

    /// `manifests update` produced no catalog (the one in effect is unchanged).
    #[error(transparent)]
    Update(#[from] crate::catalog::update::UpdateError),

    /// `monitor` could not watch: no GPU, a broken recording, a command that did not start.
    #[error(transparent)]
    Monitor(#[from] crate::monitor::MonitorError),

    /// An external command could not be run.
    #[error(transparent)]
    Run(#[from] crate::world::runner::RunError),

    /// `guard on|off|status` could not act on a venv.
    #[error(transparent)]
    Guard(#[from] crate::install::guard::GuardError),

    /// A lock could not be made, read, or installed.
    #[error(transparent)]
    Lock(Box<crate::lock::LockError>),
}

impl Error {
    /// The exit code this error maps to.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Catalog(_)
            | Error::SystemFile(_)
            | Error::Usage(_)
            | Error::Settings(_)
            | Error::RebootPending(_)
            | Error::Uninstall(crate::install::uninstall::UninstallError::NotAHome(_)) => {
                ExitCode::Usage
            }
            Error::Uninstall(crate::install::uninstall::UninstallError::ContainerReceipt(e)) => {
                edit_code(e)
            }
            Error::Home(_) | Error::Driver(_) | Error::Hook(_) => ExitCode::Failure,
            Error::Io(_) | Error::Run(_) | Error::SelfCopy(_) => ExitCode::Failure,
            Error::Fetch(e) => fetch_code(e),
            Error::Unsupported(_) => ExitCode::Unsupported,
            Error::PyEnv(e) => match e {
                crate::install::python::PyEnvError::Check(_) => ExitCode::Verification,
                crate::install::python::PyEnvError::NoVenv { .. } => ExitCode::Unsupported,
                crate::install::python::PyEnvError::NotAVenv(_)
                | crate::install::python::PyEnvError::NoInterpreter { .. }
                | crate::install::python::PyEnvError::Plan(_) => ExitCode::Usage,
                crate::install::python::PyEnvError::Unsupported(_) => ExitCode::Unsupported,
                crate::install::python::PyEnvError::Cancelled { .. } => ExitCode::Cancelled,
                crate::install::python::PyEnvError::NoRoute(r) if r.is_network() => {
                    ExitCode::Network
                }
                crate::install::python::PyEnvError::NoRoute(_) => ExitCode::Unsupported,
                _ => ExitCode::Failure,
            },
            Error::Install(e) => install_code(e),
            Error::Repair(_) => ExitCode::Usage,
            Error::Mirror(e) => match e.as_ref() {
                crate::install::mirror::MirrorError::NoPip => ExitCode::Unsupported,
                crate::install::mirror::MirrorError::OutsideBase { .. } => ExitCode::Usage,
                _ => ExitCode::Failure,
            },
            Error::InstallPlan(e) => {
                use crate::install::plan::PlanError as P;
                match e {
                    P::Unsupported(_) => ExitCode::Unsupported,
                    P::NoToolkit(_)
                    | P::NoCudaVersion
                    | P::TensorrtNeedsTorch
                    | P::Components(_) => ExitCode::Usage,
                }
            }
            Error::Prompt(e) => {
                use crate::world::prompt::PromptError as P;
                match e {
                    P::NoTerminal(_) => ExitCode::Usage,
                    P::Cancelled => ExitCode::Cancelled,
                    P::Io(_) => ExitCode::Failure,
                }
            }
            Error::Container(e) => {
                use crate::container::ContainerError as C;
                match e {
                    C::Edit(e) => edit_code(e),
                    C::Driver(_) => ExitCode::Failure,
                    C::LinuxOnly { .. } => ExitCode::Unsupported,
                    C::Toolkit(t) => {
                        use crate::container::toolkit_install::InstallError as T;
                        match t {
                            T::Fetch { .. } => ExitCode::Network,
                            T::NotAKey { .. } => ExitCode::Verification,
                            T::NotInstalled { .. } => ExitCode::Failure,
                        }
                    }
                    C::Setup(_)
                    | C::Cdi(_)
                    | C::Image(_)
                    | C::Dockerfile(_)
                    | C::NoEngine(_)
                    | C::NoDriver(_)
                    | C::NeedsRoot { .. } => ExitCode::Usage,
                }
            }
            Error::Monitor(e) => {
                use crate::monitor::MonitorError as M;
                match e {
                    M::NoGpu(_) => ExitCode::Unsupported,
                    M::Replay { .. } => ExitCode::Usage,
                    M::Nvml(_) | M::Spawn { .. } | M::Write { .. } | M::Display(_) => {
                        ExitCode::Failure
                    }
                }
            }
            Error::Guard(e) => {
                use crate::install::guard::GuardError as G;
                match e {
                    G::NotCudaups { .. } | G::NothingPinned(_) | G::NoSite(_) => ExitCode::Usage,
                    G::Foreign(..) | G::Io(_) => ExitCode::Failure,
                }
            }
            Error::Lock(e) => {
                use crate::lock::LockError as L;
                use crate::sources::pypi::IndexError as I;
                match e.as_ref() {
                    L::Parse { .. } => ExitCode::Usage,
                    L::NotCovered { .. } | L::NoWheel { .. } => ExitCode::Unsupported,
                    L::Mismatch { .. } => ExitCode::Verification,
                    L::Fetch(f) | L::Index(I::Fetch(f)) => fetch_code(f),
                    L::Index(I::NoProject { .. } | I::NoMatch { .. }) => ExitCode::Unsupported,
                    L::Differs(_) | L::Resolve(_) | L::Index(_) | L::Io(_) => ExitCode::Failure,
                }
            }
            Error::Update(e) => {
                use crate::catalog::update::UpdateError as U;
                match e {
                    U::Network { .. } | U::NothingRead(_) => ExitCode::Network,
                    U::BadData { .. } | U::Check(_) => ExitCode::Verification,
                    U::Usage(_) => ExitCode::Usage,
                    U::Io(_) => ExitCode::Failure,
                }
            }
        }
    }
}

impl From<crate::lock::LockError> for Error {
    fn from(e: crate::lock::LockError) -> Self {
        Error::Lock(Box::new(e))
    }
}

/// What `install::locate` could not read keeps the exit code and text of its own error.
impl From<crate::install::locate::LocateError> for Error {
    fn from(e: crate::install::locate::LocateError) -> Self {
        use crate::install::locate::LocateError as L;
        match e {
            L::Settings(e) => Error::Settings(e),
            L::Fetch(e) => Error::Fetch(e),
            L::Install(e) => Error::Install(e),
            L::PyEnv(e) => Error::PyEnv(e),
            L::SelfCopy(e) => Error::SelfCopy(e),
            L::Unsupported(e) => Error::Unsupported(e),
        }
    }
}

/// A failed install step keeps the exit code and text of its own error.
impl From<crate::install::steps::StepError> for Error {
    fn from(e: crate::install::steps::StepError) -> Self {
        use crate::install::steps::StepError as S;
        match e {
            S::Driver(e) => Error::Driver(e),
            S::Install(e) => Error::Install(e),
            S::PyEnv(e) => Error::PyEnv(e),
            S::Hook(e) => Error::Hook(e),
            S::SelfCopy(e) => Error::SelfCopy(e),
            S::Io(e) => Error::Io(e),
        }
    }
}

/// A failed install run keeps the exit code and text of its own error. `Declined` (the user
/// answered no) is the CLI's to say; as an error it is a cancellation (130).
impl From<crate::install::run::RunError> for Error {
    fn from(e: crate::install::run::RunError) -> Self {
        use crate::install::run::RunError as R;
        match e {
            R::RebootPending(e) => Error::RebootPending(e),
            R::Locate(e) => e.into(),
            R::Step(e) => e.into(),
            R::Prompt(e) => Error::Prompt(e),
            R::Declined => Error::Prompt(crate::world::prompt::PromptError::Cancelled),
        }
    }
}

/// What `mirror create` could not do keeps the exit code and text of its layer's error.
impl From<crate::install::mirror::MirrorError> for Error {
    fn from(e: crate::install::mirror::MirrorError) -> Self {
        use crate::install::mirror::MirrorError as M;
        match e {
            M::Plan(e) => Error::InstallPlan(e),
            M::Settings(e) => Error::Settings(e),
            M::Fetch(e) => Error::Fetch(e),
            M::Install(e) => Error::Install(e),
            M::PyEnv(e) => Error::PyEnv(e),
            M::Io(e) => Error::Io(e),
            e @ (M::NoPip | M::OutsideBase { .. }) => Error::Mirror(Box::new(e)),
        }
    }
}

/// A failed repair keeps the exit code and text of its layer's error; a receipt it cannot act
/// on is bad usage (2), as the Usage errors it was.
impl From<crate::install::repair::RepairError> for Error {
    fn from(e: crate::install::repair::RepairError) -> Self {
        use crate::install::repair::RepairError as R;
        match e {
            R::Step(e) => e.into(),
            R::Fetch(e) => Error::Fetch(e),
            R::Settings(e) => Error::Settings(e),
            e @ R::Receipt(_) => Error::Repair(Box::new(e)),
        }
    }
}

// Not `#[from]`: that would make the inner error the source, and main would print it twice.
impl From<crate::install::self_copy::SelfCopyError> for Error {
    fn from(e: crate::install::self_copy::SelfCopyError) -> Self {
        Error::SelfCopy(e)
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A host file that could not be changed or put back is a failure (1); asked for on a system
/// whose host files cudaup does not edit, unsupported (5).
fn edit_code(e: &crate::install::host_files::EditError) -> ExitCode {
    match e {
        crate::install::host_files::EditError::LinuxOnly { .. } => ExitCode::Unsupported,
        _ => ExitCode::Failure,
    }
}

fn fetch_code(e: &crate::fetch::FetchError) -> ExitCode {
    use crate::fetch::FetchError as F;
    match e {
        F::Cancelled => ExitCode::Cancelled,
        F::BadLocation { .. } | F::InsecureHttp { .. } | F::InsecureRedirect { .. } => {
            ExitCode::Usage
        }
        F::Local(_) => ExitCode::Failure,
        e if e.is_verification() => ExitCode::Verification,
        e if e.is_network() => ExitCode::Network,
        _ => ExitCode::Failure,
    }
}

fn install_code(e: &crate::install::InstallError) -> ExitCode {
    use crate::install::InstallError as I;
    use crate::sources::pypi::IndexError;
    use crate::sources::redist::RedistError;
    match e {
        I::Fetch(f) | I::Index(IndexError::Fetch(f)) => fetch_code(f),
        I::Redist(RedistError::Malformed { .. }) | I::Index(IndexError::Malformed { .. }) => {
            ExitCode::Verification
        }
        I::Redist(_)
        | I::Index(IndexError::NoMatch { .. } | IndexError::NoProject { .. })
        | I::Unsupported(_) => ExitCode::Unsupported,
        I::Unpack { source, .. } => match source {
            crate::unpack::UnpackError::Cancelled => ExitCode::Cancelled,
            crate::unpack::UnpackError::Io(_) => ExitCode::Failure,
            _ => ExitCode::Verification,
        },
        I::Conflict { .. } => ExitCode::Verification,
        I::Prefix(_) => ExitCode::Usage,
        I::Io(_) | I::NoSpace(_) => ExitCode::Failure,
        I::Cancelled => ExitCode::Cancelled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_driver_command_or_a_refused_rc_file_is_a_failure_not_bad_usage() {
        let driver = crate::install::driver::DriverStepError::CommandFailed {
            command: "sudo apt-get install -y nvidia-open-580".into(),
            status: Some(100),
            output: "E: Unable to locate package".into(),
            completed: 1,
        };
        assert_eq!(Error::from(driver).exit_code(), ExitCode::Failure);
        let hook = crate::install::env::HookError::Refused(vec!["~/.bashrc: read-only".into()]);
        assert_eq!(Error::from(hook).exit_code(), ExitCode::Failure);
        let lock = crate::install::home::HomeError::Busy {
            lock: "/h/.cudaup.lock".into(),
            holder: "pid 1".into(),
        };
        assert_eq!(Error::from(lock).exit_code(), ExitCode::Failure);
        let not_a_home = crate::install::uninstall::UninstallError::NotAHome(
            crate::install::home::NotAHome::Unmarked("/home/u/projects".into()),
        );
        assert_eq!(Error::from(not_a_home).exit_code(), ExitCode::Usage);
        let damaged = crate::install::uninstall::UninstallError::ContainerReceipt(
            crate::install::host_files::EditError::Damaged {
                path: "/h/receipts/container/host-files.json".into(),
                message: "EOF while parsing".into(),
                named: vec!["/etc/cdi/cudaup-nvidia.json".into()],
            },
        );
        assert_eq!(Error::from(damaged).exit_code(), ExitCode::Failure);
        let downgrade = crate::fetch::FetchError::InsecureRedirect {
            from: "https://developer.download.nvidia.com/x.json".into(),
            to: "http://example.com/x.json".into(),
        };
        assert_eq!(Error::from(downgrade).exit_code(), ExitCode::Usage);
        let run = crate::world::runner::RunError::new(std::path::Path::new("nvcc"), "not found");
        assert_eq!(Error::from(run).exit_code(), ExitCode::Failure);
        let full =
            crate::install::InstallError::NoSpace(Box::new(crate::install::space::NoSpace {
                rooms: Vec::new(),
                met: None,
            }));
        assert_eq!(Error::from(full).exit_code(), ExitCode::Failure);
        use crate::install::guard::GuardError as G;
        let not_ours = G::NotCudaups {
            venv: "/opt/v".into(),
            home: "/h/receipts".into(),
        };
        assert_eq!(Error::from(not_ours).exit_code(), ExitCode::Usage);
        assert_eq!(
            Error::from(G::NothingPinned("/opt/v".into())).exit_code(),
            ExitCode::Usage
        );
        assert_eq!(
            Error::from(G::NoSite("/opt/v".into())).exit_code(),
            ExitCode::Usage
        );
        let foreign = G::Foreign("/opt/v/pip.conf".into(), "/opt/v".into());
        assert_eq!(Error::from(foreign).exit_code(), ExitCode::Failure);
        use crate::lock::LockError as L;
        let code = |e: L| Error::from(e).exit_code();
        let parse = L::Parse {
            path: "l.toml".into(),
            message: "x".into(),
        };
        assert_eq!(code(parse), ExitCode::Usage);
        let uncovered = L::NotCovered {
            path: "l.toml".into(),
            why: "GPU class".into(),
        };
        assert_eq!(code(uncovered), ExitCode::Unsupported);
        let changed = L::Mismatch {
            what: "torch.whl".into(),
            found: "a".into(),
            locked: "b".into(),
        };
        assert_eq!(code(changed), ExitCode::Verification);
        assert_eq!(code(L::Differs("x".into())), ExitCode::Failure);
        assert_eq!(code(L::Resolve("no solution".into())), ExitCode::Failure);
    }

    #[test]
    fn monitor_errors_and_a_watched_commands_code() {
        use crate::monitor::MonitorError as M;
        let code = |e: M| Error::from(e).exit_code();
        assert_eq!(code(M::NoGpu("no driver".into())), ExitCode::Unsupported);
        let replay = M::Replay {
            path: "run.jsonl".into(),
            message: "line 3: not JSON".into(),
        };
        assert_eq!(code(replay), ExitCode::Usage);
        assert_eq!(code(M::Nvml("GPU lost".into())), ExitCode::Failure);
        assert_eq!(ExitCode::Passed(137).code(), 137);
        assert_eq!(ExitCode::Cancelled.code(), 130);
    }

    #[test]
    fn typed_errors_below_the_cli_keep_their_exit_codes() {
        use crate::install::python::PyEnvError;
        let manifest = crate::catalog::CatalogError::Manifest {
            path: "cuda.toml".into(),
            message: "line 3".into(),
        };
        assert_eq!(Error::from(manifest).exit_code(), ExitCode::Usage);
        let plan = PyEnvError::Plan("the plan has no torch".into());
        assert_eq!(Error::from(plan).exit_code(), ExitCode::Usage);
        let python = PyEnvError::Unsupported("no Python in range".into());
        assert_eq!(Error::from(python).exit_code(), ExitCode::Unsupported);
        let venv = PyEnvError::NoInterpreter {
            venv: "/nonexistent/venv".into(),
            python: "/nonexistent/venv/bin/python".into(),
        };
        assert_eq!(Error::from(venv).exit_code(), ExitCode::Usage);
        // Issue 37: Ctrl-C while pip or uv runs is a cancellation (130), not a failure.
        let cancelled = PyEnvError::Cancelled {
            what: "installing the framework".into(),
            left: "the venv it was making is removed".into(),
            from: "from the wheels downloaded in full, kept in /h/.cudaup/cache/uv".into(),
        };
        assert_eq!(Error::from(cancelled).exit_code(), ExitCode::Cancelled);
        // M15a: the install plan's invariants keep exit 2; no fitting stack is 5.
        use crate::install::plan::PlanError;
        let none = PlanError::NoToolkit("pytorch".into());
        assert_eq!(Error::from(none).exit_code(), ExitCode::Usage);
        assert_eq!(
            Error::from(PlanError::NoCudaVersion).exit_code(),
            ExitCode::Usage
        );
        // M17c: a driver waiting for its reboot stays exit 2 (it was a Usage error).
        let pending = crate::install::run::RebootPending {
            driver: "580.95.05".into(),
            reason: "the new kernel module loads at boot".into(),
        };
        assert_eq!(
            Error::from(crate::install::run::RunError::from(pending)).exit_code(),
            ExitCode::Usage
        );
        // M18: mirror create without pip stays 5 (it was Unsupported), an archive outside the
        // mirror's base stays 2 (it was a Usage error), a bad picture stays 2.
        use crate::install::mirror::MirrorError;
        assert_eq!(
            Error::from(MirrorError::NoPip).exit_code(),
            ExitCode::Unsupported
        );
        let outside = MirrorError::OutsideBase {
            location: "https://elsewhere.example/a.tar.xz".into(),
            base: "https://mirror.example/".into(),
        };
        assert_eq!(Error::from(outside).exit_code(), ExitCode::Usage);
        let picture = crate::detect::picture::PictureError {
            path: "gpu.json".into(),
            message: "line 1, column 1: expected value".into(),
        };
        assert_eq!(Error::from(picture).exit_code(), ExitCode::Usage);
        // M20a: a receipt repair cannot read stays exit 2 (it was a Usage error).
        let unreadable = crate::install::repair::RepairError::Receipt(
            "/p: unreadable source in the receipt".into(),
        );
        assert_eq!(Error::from(unreadable).exit_code(), ExitCode::Usage);
        // M15b: --with tensorrt without PyTorch, and an unknown --components, stay exit 2.
        for e in [
            PlanError::TensorrtNeedsTorch,
            PlanError::Components("no component 'x'".into()),
        ] {
            assert_eq!(Error::from(e).exit_code(), ExitCode::Usage);
        }
    }

    /// M12: one confirmation; no terminal to ask at is bad usage (2) as before, Ctrl-C is 130.
    #[test]
    fn a_question_without_a_terminal_is_bad_usage() {
        use crate::world::prompt::{PromptError, NO_TERMINAL};
        let none = PromptError::NoTerminal(NO_TERMINAL.into());
        assert_eq!(Error::from(none).exit_code(), ExitCode::Usage);
        assert_eq!(
            Error::from(PromptError::Cancelled).exit_code(),
            ExitCode::Cancelled
        );
    }

    /// M11: a host-file edit or a driver command that failed under `container setup` is a
    /// failure (1), as install's are; what the user must change stays 2. A `fleet report`
    /// directory that cannot be listed is an I/O failure (1).
    #[test]
    fn container_errors_and_a_fleet_read_error_map_like_installs() {
        use crate::container::ContainerError as C;
        let edit = crate::install::host_files::EditError::NotText("/etc/docker/daemon.json".into());
        assert_eq!(Error::from(C::from(edit)).exit_code(), ExitCode::Failure);
        let driver = crate::install::driver::DriverStepError::CommandFailed {
            command: "sudo apt-get install -y nvidia-container-toolkit".into(),
            status: Some(100),
            output: String::new(),
            completed: 0,
        };
        assert_eq!(Error::from(C::from(driver)).exit_code(), ExitCode::Failure);
        let root = C::NeedsRoot {
            paths: "/etc/docker/daemon.json".into(),
            toolkit: "",
        };
        assert_eq!(Error::from(root).exit_code(), ExitCode::Usage);
        // Issue 43: asked for on Windows, container commands and host-file edits are
        // unsupported (5), not a failure.
        let windows = C::LinuxOnly { os: "windows" };
        assert_eq!(Error::from(windows).exit_code(), ExitCode::Unsupported);
        let edit = crate::install::host_files::EditError::LinuxOnly {
            path: "C:\\ProgramData\\Docker\\config\\daemon.json".into(),
            os: "windows",
        };
        assert_eq!(
            Error::from(C::from(edit)).exit_code(),
            ExitCode::Unsupported
        );
        // Issue 39: the toolkit's key that cannot be fetched is the network (3), one that is not
        // a key fails verification (4), packages that did not install are a failure (1).
        use crate::container::toolkit_install::InstallError as T;
        let fetch = T::Fetch {
            url: "https://nvidia.github.io/libnvidia-container/gpgkey".into(),
            message: "curl exited with 6".into(),
        };
        assert_eq!(Error::from(C::from(fetch)).exit_code(), ExitCode::Network);
        let not_a_key = T::NotAKey {
            url: "https://nvidia.github.io/libnvidia-container/gpgkey".into(),
            message: "it is empty".into(),
        };
        assert_eq!(
            Error::from(C::from(not_a_key)).exit_code(),
            ExitCode::Verification
        );
        let missing = T::NotInstalled {
            wanted: "1.20.0".into(),
            found: "1.17.8".into(),
        };
        assert_eq!(Error::from(C::from(missing)).exit_code(), ExitCode::Failure);
        // M21: the config directory setup cannot tell is still the user's to fix (2).
        let config = C::from(crate::container::setup::SetupError::NoConfigHome);
        assert_eq!(Error::from(config).exit_code(), ExitCode::Usage);
        let engine = C::NoEngine("neither docker nor podman".into());
        assert_eq!(Error::from(engine).exit_code(), ExitCode::Usage);
        let fleet = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert_eq!(Error::from(fleet).exit_code(), ExitCode::Failure);
    }
}
