//! Layering the unattended config file under the command line: CLI flags > `CUDAUP_*`
//! environment variables (clap reads both into the same fields) > the config file > built-in
//! defaults.

use std::path::Path;

use crate::error::{Error, Result};
use crate::settings::file::{self as config, Config};

use super::install::{InstallArgs, SourceKind};
use super::plan::StackArgs;

/// Loads and validates a config file; its errors name FILE:LINE:COLUMN (exit code 2).
pub fn load(path: &Path) -> Result<Config> {
    Config::load(path).map_err(|e| Error::Usage(e.to_string()))
}

fn check(r: std::result::Result<(), config::ConfigError>) -> Result<()> {
    r.map_err(|e| Error::Usage(e.to_string()))
}

/// Profile, pins and driver policy: what the flags and variables left open, from the file.
pub fn merge_stack(stack: &StackArgs, c: &Config) -> Result<StackArgs> {
    let mut s = stack.clone();
    if let Some(p) = stack.profile {
        // A flag may change the profile; the file's other answers must still fit it.
        check(c.check_profile(p))?;
    }
    s.profile = s.profile.or(c.profile);
    s.cuda = s.cuda.or_else(|| c.pins.cuda.clone());
    s.cudnn = s.cudnn.or_else(|| c.pins.cudnn.clone());
    s.torch = s.torch.or_else(|| c.pins.torch.clone());
    s.tensorflow = s.tensorflow.or_else(|| c.pins.tensorflow.clone());
    s.python = s.python.or_else(|| c.pins.python.clone());
    s.components = s.components.or_else(|| c.install.components.clone());
    if s.driver.is_none() {
        s.driver = c.driver.as_ref().map(|d| match d.policy() {
            crate::model::request::DriverPolicy::Auto => "auto".to_owned(),
            crate::model::request::DriverPolicy::Keep => "keep".to_owned(),
            crate::model::request::DriverPolicy::Latest => "latest".to_owned(),
            crate::model::request::DriverPolicy::Version(v) => v.to_string(),
        });
    }
    Ok(s)
}

/// Every install answer the flags and variables left open, from the file.
pub fn merge_install(args: &InstallArgs, c: &Config) -> Result<InstallArgs> {
    let mut a = args.clone();
    a.stack = merge_stack(&args.stack, c)?;
    let source = args.source.source.or(c.sources.source.map(|k| match k {
        config::SourceKind::Redist => SourceKind::Redist,
        config::SourceKind::Wheels => SourceKind::Wheels,
    }));
    if let Some(k) = args.source.source {
        check(c.check_source(match k {
            SourceKind::Redist => config::SourceKind::Redist,
            SourceKind::Wheels => config::SourceKind::Wheels,
        }))?;
    }
    a.source.source = source;
    a.source.mirror = a.source.mirror.or_else(|| c.sources.nvidia_mirror.clone());
    a.source.index_url = a.source.index_url.or_else(|| c.sources.index_url.clone());
    a.source.allow_http |= c.sources.allow_http.unwrap_or(false);
    a.pypi_index = a.pypi_index.or_else(|| c.sources.pypi_index.clone());
    a.torch_index = a.torch_index.or_else(|| c.sources.torch_index.clone());
    a.torch_source = a.torch_source.or(c.sources.torch_source);
    a.prefix = a.prefix.or_else(|| c.install.prefix.clone());
    a.venv = a.venv.or_else(|| c.install.venv.clone());
    a.no_cudnn |= c.install.no_cudnn.unwrap_or(false);
    a.verify |= c.install.verify.unwrap_or(false);
    a.no_modify_path |= c.shell.modify_path == Some(false);
    if a.shells.is_empty() {
        a.shells = c
            .shell
            .shells
            .iter()
            .flatten()
            .map(|s| s.name().to_owned())
            .collect();
    }
    Ok(a)
}
