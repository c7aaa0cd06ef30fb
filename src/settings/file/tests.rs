use super::*;
use crate::model::version::Version;

fn pin(s: &str) -> VersionPin {
    VersionPin::parse(s).unwrap()
}

const FILE: &str = "/etc/cudaup.toml";

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new(FILE))
}

/// Parses `text`, which must fail, and returns (line, column, message).
fn fails(text: &str) -> (usize, usize, String) {
    match parse(text) {
        Ok(c) => panic!("accepted:\n{text}\n{c:?}"),
        Err(e) => {
            assert_eq!(e.file, Path::new(FILE));
            (e.line, e.column, e.message)
        }
    }
}

fn err(line: usize, column: usize, message: &str) -> (usize, usize, String) {
    (line, column, message.to_owned())
}

#[cfg(unix)] // for the tests of a Unix file URL
const FULL: &str = r#"version = 1
profile = "full"
lang = "zh"

[pins]
cuda = "12.8"
cudnn = "9.10"
torch = "2.8"
python = "3.12"

[driver]
policy = "580.95.05"

[install]
prefix = "/opt/cuda"
venv = "/opt/venvs/torch"
no_cudnn = false
verify = true

[shell]
modify_path = true
shells = ["bash", "zsh", "fish", "powershell"]

[sources]
source = "redist"
nvidia_mirror = "https://mirror.example/nvidia"
index_url = "https://mirrors.example/pypi/simple"
pypi_index = "file:///srv/pypi/simple"
torch_index = "/srv/pytorch/whl"
allow_http = false
"#;

// --- good configs ------------------------------------------------------------------------------

#[test]
fn minimal_config_answers_nothing() {
    let c = parse("version = 1\n").unwrap();
    assert_eq!(c, Config::new(PathBuf::from(FILE)));
    assert_eq!(parse(&c.to_toml()).unwrap(), c);
}

#[cfg(unix)] // a Unix file URL (file:///srv/...); Windows ones carry a drive letter
#[test]
fn full_config_reads_every_key() {
    let c = parse(FULL).unwrap();
    assert_eq!(c.path, Path::new(FILE));
    assert_eq!(c.profile, Some(Profile::Full));
    assert_eq!(c.lang, Some(Lang::Zh));
    assert_eq!(
        c.pins,
        Pins {
            cuda: Some(pin("12.8")),
            cudnn: Some(pin("9.10")),
            torch: Some(pin("2.8")),
            tensorflow: None,
            jax: None,
            python: Some(pin("3.12")),
        }
    );
    assert_eq!(
        c.driver,
        Some(DriverPolicy::Version(Version::parse("580.95.05").unwrap()))
    );
    assert_eq!(
        c.install,
        InstallConfig {
            prefix: Some("/opt/cuda".into()),
            venv: Some("/opt/venvs/torch".into()),
            no_cudnn: Some(false),
            components: None,
            verify: Some(true),
        }
    );
    assert_eq!(
        c.shell,
        ShellConfig {
            modify_path: Some(true),
            shells: Some(vec![
                ShellName::Bash,
                ShellName::Zsh,
                ShellName::Fish,
                ShellName::Powershell
            ]),
        }
    );
    assert_eq!(
        c.sources,
        SourcesConfig {
            source: Some(SourceKind::Redist),
            nvidia_mirror: crate::fetch::GivenLocation::parse("https://mirror.example/nvidia").ok(),
            index_url: crate::fetch::GivenLocation::parse("https://mirrors.example/pypi/simple")
                .ok(),
            pypi_index: crate::fetch::GivenLocation::parse("file:///srv/pypi/simple").ok(),
            torch_index: crate::fetch::GivenLocation::parse("/srv/pytorch/whl").ok(),
            torch_source: None,
            allow_http: Some(false),
        }
    );
}

#[cfg(unix)] // a Unix file URL (file:///srv/...); Windows ones carry a drive letter
#[test]
fn to_toml_round_trips() {
    let tensorflow = "version = 1\nprofile = \"tensorflow\"\n[pins]\ntensorflow = \"2.20\"\n\
                      [driver]\npolicy = \"skip\"\n[sources]\nsource = \"wheels\"\n\
                      index_url = \"http://10.0.0.2/simple\"\nallow_http = true\n";
    let cpu = "version = 1\nprofile = \"cpu\"\n[pins]\ntorch = \"2.8\"\npython = \"3.11\"\n\
               [shell]\nmodify_path = false\n[driver]\npolicy = \"keep\"\n";
    let jax = "version = 1\nprofile = \"jax\"\n[pins]\njax = \"0.12\"\npython = \"3.12\"\n";
    for text in [FULL, "version = 1\n", tensorflow, jax, cpu] {
        let c = parse(text).unwrap();
        let written = c.to_toml();
        let back = parse(&written).unwrap_or_else(|e| panic!("{e}\n{written}"));
        assert_eq!(back, c, "{written}");
        // Writing again gives the same text.
        assert_eq!(back.to_toml(), written);
    }
}

#[test]
fn a_config_built_in_code_round_trips() {
    let mut c = Config::new(PathBuf::from(FILE));
    c.profile = Some(Profile::CudaDev);
    c.pins.cuda = Some(pin("13.0"));
    c.driver = Some(DriverPolicy::Latest);
    c.install.prefix = Some("/opt/cuda \"13\"".into());
    c.shell.shells = Some(vec![ShellName::Sh]);
    c.sources.source = Some(SourceKind::Wheels);
    c.sources.nvidia_mirror = crate::fetch::GivenLocation::parse("/mnt/c/mirror").ok();
    let written = c.to_toml();
    assert!(
        written.contains("# The format of this file.\nversion = 1\n"),
        "{written}"
    );
    assert!(written.contains("# lang = \"en\"\n"), "{written}");
    assert_eq!(parse(&written).unwrap(), c, "{written}");
}

#[test]
fn inline_tables_and_dotted_keys_read_the_same() {
    let dotted = parse("version = 1\npins.cuda = \"12.8\"\ndriver.policy = \"keep\"\n").unwrap();
    let inline =
        parse("version = 1\npins = { cuda = \"12.8\" }\ndriver = { policy = \"keep\" }\n").unwrap();
    assert_eq!(dotted, inline);
    assert_eq!(dotted.pins.cuda, Some(pin("12.8")));
}

#[test]
fn driver_words_map_to_policies() {
    let policy = |word: &str| {
        parse(&format!("version = 1\n[driver]\npolicy = \"{word}\"\n"))
            .unwrap()
            .driver
            .unwrap()
    };
    assert_eq!(policy("auto"), DriverPolicy::Auto);
    assert_eq!(policy("keep"), DriverPolicy::Keep);
    assert_eq!(policy("latest"), DriverPolicy::Latest);
    assert_eq!(policy("install"), DriverPolicy::Latest);
    assert_eq!(policy("upgrade"), DriverPolicy::Latest);
    assert_eq!(policy("skip"), DriverPolicy::Skip);
    assert_eq!(
        policy("575.57.08"),
        DriverPolicy::Version(Version::parse("575.57.08").unwrap())
    );
}

#[test]
fn shells_map_to_families() {
    use crate::shell::Shell;
    assert_eq!(ShellName::Bash.family(), Shell::Posix);
    assert_eq!(ShellName::Zsh.family(), Shell::Posix);
    assert_eq!(ShellName::Fish.family(), Shell::Fish);
    assert_eq!(ShellName::Powershell.family(), Shell::PowerShell);
}

#[test]
fn http_is_fine_with_allow_http() {
    let c = parse(
        "version = 1\n[sources]\nnvidia_mirror = \"http://10.0.0.2/nvidia\"\nallow_http = true\n",
    )
    .unwrap();
    assert_eq!(
        c.sources
            .nvidia_mirror
            .as_ref()
            .map(crate::fetch::GivenLocation::as_str),
        Some("http://10.0.0.2/nvidia")
    );
}

#[test]
fn wheels_with_cuda_13_is_fine() {
    let c =
        parse("version = 1\n[pins]\ncuda = \"13.0\"\n[sources]\nsource = \"wheels\"\n").unwrap();
    assert_eq!(c.sources.source, Some(SourceKind::Wheels));
}

// --- TOML-level errors -------------------------------------------------------------------------

#[test]
fn unknown_top_level_key() {
    assert_eq!(
        fails("version = 1\nprofiles = \"full\"\n"),
        err(
            2,
            1,
            "unknown field `profiles`, expected one of `version`, `profile`, `lang`, `pins`, \
             `driver`, `install`, `shell`, `sources`"
        )
    );
}

#[test]
fn unknown_key_in_each_table() {
    assert_eq!(
        fails("version = 1\n[pins]\ncuda = \"12.8\"\npytorch = \"2.8\"\n"),
        err(
            4,
            1,
            "unknown field `pytorch`, expected one of `cuda`, `cudnn`, `torch`, `tensorflow`, \
             `jax`, `python`"
        )
    );
    assert_eq!(
        fails("version = 1\n[driver]\nversion = \"580\"\n"),
        err(3, 1, "unknown field `version`, expected `policy`")
    );
    assert_eq!(
        fails("version = 1\n[install]\n  toolkit = \"/opt/cuda\"\n"),
        err(
            3,
            3,
            "unknown field `toolkit`, expected one of `prefix`, `venv`, `no_cudnn`, `components`, \
             `verify`"
        )
    );
    assert_eq!(
        fails("version = 1\n[shell]\nshell = [\"bash\"]\n"),
        err(
            3,
            1,
            "unknown field `shell`, expected `modify_path` or `shells`"
        )
    );
    assert_eq!(
        fails("version = 1\n[sources]\nmirror = \"https://m.example\"\n"),
        err(
            3,
            1,
            "unknown field `mirror`, expected one of `source`, `nvidia_mirror`, `index_url`, \
             `pypi_index`, `torch_index`, `torch_source`, `allow_http`"
        )
    );
}

#[test]
fn wrong_types() {
    assert_eq!(
        fails("version = 1\nprofile = 3\n"),
        err(2, 11, "invalid type: integer `3`, expected a string")
    );
    assert_eq!(
        fails("version = 1\n[pins]\ncuda = 12.8\n"),
        err(
            3,
            8,
            "invalid type: floating point `12.8`, expected a string: put the version in quotes"
        )
    );
    assert_eq!(
        fails("version = 1\n[shell]\nshells = \"bash\"\n"),
        err(3, 10, "invalid type: string \"bash\", expected a sequence")
    );
    assert_eq!(
        fails("version = 1\n[install]\nverify = \"yes\"\n"),
        err(3, 10, "invalid type: string \"yes\", expected a boolean")
    );
    assert_eq!(
        fails("version = \"1\"\n"),
        err(1, 11, "invalid type: string \"1\", expected i64")
    );
}

#[test]
fn duplicate_key() {
    assert_eq!(
        fails("version = 1\n[pins]\ncuda = \"12.8\"\ncuda = \"12.6\"\n"),
        err(4, 1, "duplicate key `cuda` in table `pins`")
    );
}

#[test]
fn unterminated_string() {
    assert_eq!(
        fails("version = 1\nprofile = \"full\n"),
        err(2, 16, "invalid basic string")
    );
}

// --- the version key ---------------------------------------------------------------------------

#[test]
fn missing_version() {
    assert_eq!(
        fails("profile = \"full\"\n"),
        err(
            1,
            1,
            "missing `version = 1`: the first line of a cudaup config"
        )
    );
}

#[test]
fn other_version() {
    assert_eq!(
        fails("# made by cudaup 2\nversion = 2\n"),
        err(2, 1, "version = 2: this cudaup reads config version 1")
    );
}

// --- bad values --------------------------------------------------------------------------------

#[test]
fn bad_profile() {
    assert_eq!(
        fails("version = 1\nprofile = \"gpu\"\n"),
        err(
            2,
            1,
            "profile = \"gpu\": not a profile: use full, pytorch, tensorflow, jax, cuda-dev or cpu"
        )
    );
}

#[test]
fn torch_source_is_one_of_three_words() {
    let c = parse("version = 1\n[sources]\ntorch_source = \"pypi\"\n").unwrap();
    assert_eq!(
        c.sources.torch_source,
        Some(crate::model::request::TorchSource::Pypi)
    );
    assert!(c.to_toml().contains("torch_source = \"pypi\""));
    assert_eq!(
        fails("version = 1\n[sources]\ntorch_source = \"conda\"\n"),
        err(
            3,
            1,
            "sources.torch_source = \"conda\": use auto, pytorch or pypi"
        )
    );
}

#[test]
fn bad_lang() {
    assert_eq!(
        fails("version = 1\nlang = \"fr\"\n"),
        err(2, 1, "lang = \"fr\": use en or zh")
    );
}

#[test]
fn bad_versions_in_pins() {
    assert_eq!(
        fails("version = 1\n[pins]\n  cuda   =  \"12.x\"\n"),
        err(
            3,
            3,
            "pins.cuda = \"12.x\": not a version: use numbers like 12.8"
        )
    );
    assert_eq!(
        fails("version = 1\n[pins]\ntorch = \"latest\"\n"),
        err(
            3,
            1,
            "pins.torch = \"latest\": not a version: use numbers like 12.8"
        )
    );
    assert_eq!(
        fails("version = 1\npins = { cudnn = \"9\", python = \"3.12+\" }\n"),
        err(
            2,
            23,
            "pins.python = \"3.12+\": not a version: use numbers like 12.8"
        )
    );
    assert_eq!(
        fails("version = 1\npins.tensorflow = \"2..20\"\n"),
        err(
            2,
            1,
            "pins.tensorflow = \"2..20\": not a version: use numbers like 12.8"
        )
    );
}

#[test]
fn bad_driver_policy() {
    let expected = |v: &str| {
        format!(
            "driver.policy = \"{v}\": use auto, keep, latest, install, upgrade, skip, or a driver \
             version such as 580.95.05"
        )
    };
    assert_eq!(
        fails("version = 1\n[driver]\npolicy = \"newest\"\n"),
        err(3, 1, &expected("newest"))
    );
    assert_eq!(
        fails("version = 1\n[driver]\npolicy = \"580\"\n"),
        err(3, 1, &expected("580"))
    );
    assert_eq!(
        fails("version = 1\n[driver]\npolicy = \"580.95.05-open\"\n"),
        err(3, 1, &expected("580.95.05-open"))
    );
}

#[test]
fn empty_strings() {
    assert_eq!(
        fails("version = 1\n[pins]\ncuda = \"\"\n"),
        err(
            3,
            1,
            "pins.cuda is empty: give it a value, or leave the key out for the default"
        )
    );
    assert_eq!(
        fails("version = 1\n[sources]\nnvidia_mirror = \" \"\n"),
        err(
            3,
            1,
            "sources.nvidia_mirror is empty: give it a value, or leave the key out for the default"
        )
    );
    assert_eq!(
        fails("version = 1\n[shell]\nshells = [\"bash\", \"\"]\n"),
        err(
            3,
            19,
            "shell.shells: an empty name: use sh, bash, zsh, fish or powershell"
        )
    );
}

#[test]
fn relative_paths() {
    assert_eq!(
        fails("version = 1\n[install]\nprefix = \"opt/cuda\"\n"),
        err(
            3,
            1,
            "install.prefix = \"opt/cuda\": a relative path: use an absolute path (a config is \
             copied between machines and run from any directory)"
        )
    );
    assert_eq!(
        fails("version = 1\n[install]\nvenv = \"~/venvs/torch\"\n"),
        err(
            3,
            1,
            "install.venv = \"~/venvs/torch\": a relative path: use an absolute path (a config \
             is copied between machines and run from any directory)"
        )
    );
}

#[test]
fn bad_locations() {
    assert_eq!(
        fails("version = 1\n[sources]\nnvidia_mirror = \"ftp://mirror.example/nvidia\"\n"),
        err(
            3,
            1,
            "sources.nvidia_mirror = \"ftp://mirror.example/nvidia\": only https://, http://, \
             file:// and plain directories are supported"
        )
    );
    assert_eq!(
        fails("version = 1\n[sources]\npypi_index = \"mirrors.example/pypi/simple\"\n"),
        err(
            3,
            1,
            "sources.pypi_index = \"mirrors.example/pypi/simple\": neither a URL nor an absolute \
             directory: use https://, http://, file://, or an absolute path"
        )
    );
}

#[test]
fn http_without_allow_http() {
    let message = |key: &str| {
        format!(
            "sources.{key}: a plain http:// location: set allow_http = true in [sources] to \
             accept it (bytes are still checked against the sha256s it serves, but nothing \
             proves those are genuine)"
        )
    };
    assert_eq!(
        fails("version = 1\n[sources]\ntorch_index = \"http://10.0.0.2/whl\"\n"),
        err(3, 1, &message("torch_index"))
    );
    assert_eq!(
        fails(
            "version = 1\n[sources]\nallow_http = false\nindex_url = \"http://10.0.0.2/simple\"\n"
        ),
        err(4, 1, &message("index_url"))
    );
}

#[test]
fn bad_shells() {
    assert_eq!(
        fails("version = 1\n[shell]\nshells = [\"bash\", \"tcsh\"]\n"),
        err(
            3,
            19,
            "shell.shells: \"tcsh\" is not a shell cudaup hooks: use sh, bash, zsh, fish or \
             powershell"
        )
    );
    assert_eq!(
        fails("version = 1\n[shell]\nshells = [\"zsh\", \"zsh\"]\n"),
        err(3, 18, "shell.shells: \"zsh\" is listed twice")
    );
    assert_eq!(
        fails("version = 1\n[shell]\nshells = []\n"),
        err(
            3,
            1,
            "shell.shells = []: names no shell: leave the key out for the shells present, or set \
             modify_path = false"
        )
    );
    assert_eq!(
        fails("version = 1\n[shell]\nmodify_path = false\nshells = [\"bash\"]\n"),
        err(
            4,
            1,
            "shell.shells: modify_path = false hooks no shell: remove one of the two"
        )
    );
}

// --- impossible combinations -------------------------------------------------------------------

fn with_profile(profile: &str, rest: &str) -> String {
    format!("version = 1\nprofile = \"{profile}\"\n{rest}")
}

#[test]
fn cpu_profile_with_cuda_cudnn_or_driver() {
    assert_eq!(
        fails(&with_profile("cpu", "[pins]\ncuda = \"12.8\"\n")),
        err(
            4,
            1,
            "pins.cuda: the cpu profile installs no CUDA: remove it or choose another profile"
        )
    );
    assert_eq!(
        fails(&with_profile(
            "cpu",
            "[pins]\ntorch = \"2.8\"\ncudnn = \"9.10\"\n"
        )),
        err(
            5,
            1,
            "pins.cudnn: the cpu profile installs no cuDNN: remove it or choose another profile"
        )
    );
    assert_eq!(
        fails(&with_profile("cpu", "[driver]\npolicy = \"580.95.05\"\n")),
        err(
            4,
            1,
            "driver.policy: the cpu profile installs no driver: remove it or choose another \
             profile"
        )
    );
    assert_eq!(
        fails(&with_profile("cpu", "[install]\nprefix = \"/opt/cuda\"\n")),
        err(
            4,
            1,
            "install.prefix: the cpu profile installs no CUDA toolkit: remove it or choose \
             another profile"
        )
    );
}

#[test]
fn tensorflow_profile_with_torch_pin() {
    assert_eq!(
        fails(&with_profile("tensorflow", "[pins]\ntorch = \"2.8\"\n")),
        err(
            4,
            1,
            "pins.torch: the tensorflow profile installs no PyTorch: remove it or choose another \
             profile"
        )
    );
}

#[test]
fn framework_profiles_with_toolkit_keys() {
    assert_eq!(
        fails(&with_profile(
            "pytorch",
            "[install]\nprefix = \"/opt/cuda\"\n"
        )),
        err(
            4,
            1,
            "install.prefix: the pytorch profile installs no CUDA toolkit: remove it or choose \
             another profile"
        )
    );
    assert_eq!(
        fails(&with_profile("tensorflow", "[install]\nno_cudnn = true\n")),
        err(
            4,
            1,
            "install.no_cudnn: the tensorflow profile installs no toolkit cuDNN to leave out: \
             remove it or choose another profile"
        )
    );
    // The default value says nothing, so it is no contradiction.
    assert!(parse(&with_profile("pytorch", "[install]\nno_cudnn = false\n")).is_ok());
}

#[test]
fn other_profile_contradictions() {
    assert_eq!(
        fails(&with_profile("full", "[pins]\ntensorflow = \"2.20\"\n")),
        err(
            4,
            1,
            "pins.tensorflow: the full profile installs no TensorFlow: remove it or choose \
             another profile"
        )
    );
    assert_eq!(
        fails(&with_profile(
            "cuda-dev",
            "[install]\nvenv = \"/opt/venv\"\n"
        )),
        err(
            4,
            1,
            "install.venv: the cuda-dev profile installs no framework into a venv: remove it or \
             choose another profile"
        )
    );
}

#[test]
fn wheels_with_cuda_12() {
    assert_eq!(
        fails("version = 1\n[pins]\ncuda = \"12.8\"\n[sources]\nsource = \"wheels\"\n"),
        err(
            5,
            1,
            "source = \"wheels\" with pins.cuda = \"12.8\": NVIDIA's CUDA wheels start at CUDA \
             13: use source = \"redist\", or pin CUDA 13 or newer"
        )
    );
}

#[test]
fn no_cudnn_with_a_cudnn_pin() {
    assert_eq!(
        fails("version = 1\n[pins]\ncudnn = \"9.10\"\n[install]\nno_cudnn = true\n"),
        err(
            5,
            1,
            "install.no_cudnn = true leaves out the cuDNN that pins.cudnn pins: remove one of \
             the two"
        )
    );
}

#[test]
fn the_first_problem_in_the_file_is_reported() {
    let text = "version = 1\nlang = \"fr\"\n[install]\nprefix = \"cuda\"\n[pins]\ncuda = \"x\"\n";
    assert_eq!(fails(text), err(2, 1, "lang = \"fr\": use en or zh"));
}

#[test]
fn a_profile_from_the_command_line_is_checked_too() {
    let c = parse("version = 1\n\n[pins]\ncuda = \"12.8\"\n").unwrap();
    assert!(c.check_profile(Profile::Full).is_ok());
    let e = c.check_profile(Profile::Cpu).unwrap_err();
    assert_eq!(
        e.to_string(),
        "/etc/cudaup.toml:4:1: pins.cuda: the cpu profile installs no CUDA: remove it or choose \
         another profile"
    );
    assert!(c.check_source(SourceKind::Redist).is_ok());
    assert_eq!(c.check_source(SourceKind::Wheels).unwrap_err().line, 4);
}

#[test]
fn load_names_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cudaup.toml");
    let e = Config::load(&path).unwrap_err();
    assert_eq!((e.line, e.column), (0, 0));
    assert_eq!(
        e.to_string(),
        format!(
            "{}: cannot read the config file: entity not found",
            path.display()
        )
    );
    fs_err::write(&path, "version = 1\nprofile = \"pytorch\"\n").unwrap();
    let c = Config::load(&path).unwrap();
    assert_eq!(c.path, path);
    assert_eq!(c.profile, Some(Profile::Pytorch));
}

#[test]
fn errors_display_file_line_column() {
    let e = parse("version = 1\nlang = \"fr\"\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "/etc/cudaup.toml:2:1: lang = \"fr\": use en or zh"
    );
}

#[test]
fn key_positions_skip_back_over_dotted_and_quoted_keys() {
    let text = "a = 1\n  \"pins\" . cuda = \"x\"\n";
    let value = text.find("\"x\"").unwrap();
    assert_eq!(line_col(text, key_start(text, value)), (2, 3));
    let text = "shells = [\"a\"]";
    let element = text.find("\"a\"").unwrap();
    assert_eq!(key_start(text, element), element);
}
