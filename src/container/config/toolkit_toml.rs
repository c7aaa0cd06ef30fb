//! The toolkit's `config.toml` (`/etc/nvidia-container-runtime/config.toml`, or
//! `$XDG_CONFIG_HOME/nvidia-container-runtime/config.toml`, which replaces it for one user):
//! `no-cgroups` under `[nvidia-container-cli]`. Rootless engines need `true` ("unable to find
//! any existing device filters", toolkit #85); a rootful one needs `false`, so the rootless
//! value goes in the user's copy (libnvidia-container #207).
//!
//! The edit rewrites the one line (or uncomments the shipped `#no-cgroups = false`) and keeps
//! every other byte.

use super::ConfigError;

const TABLE: &str = "[nvidia-container-cli]";

/// The new text with `no-cgroups = value`, or `None` when it already says so.
pub fn set_no_cgroups(
    current: Option<&str>,
    value: bool,
    file: &str,
) -> Result<Option<String>, ConfigError> {
    let text = current.unwrap_or("");
    if !text.is_empty() {
        text.parse::<toml::Table>()
            .map_err(|e| ConfigError::Unparsable {
                file: file.to_owned(),
                message: e.message().to_owned(),
            })?;
    }
    if no_cgroups(text) == Some(value) {
        return Ok(None);
    }
    let line = format!("no-cgroups = {value}");
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut in_table = false;
    let mut header = None;
    let mut set = false;
    for (i, l) in lines.iter_mut().enumerate() {
        let t = l.trim();
        if t.starts_with('[') {
            in_table = t == TABLE;
            if in_table {
                header = Some(i);
            }
        } else if in_table && !set {
            let bare = t.trim_start_matches('#').trim_start();
            if bare.starts_with("no-cgroups") {
                *l = line.clone();
                set = true;
            }
        }
    }
    if !set {
        match header {
            Some(i) => lines.insert(i + 1, line),
            None => {
                if lines.last().is_some_and(|l| !l.trim().is_empty()) {
                    lines.push(String::new());
                }
                lines.push(TABLE.to_owned());
                lines.push(line);
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(Some(out))
}

/// `no-cgroups` as the file sets it (`None`: not set, the default `false`).
pub fn no_cgroups(text: &str) -> Option<bool> {
    let t: toml::Table = text.parse().ok()?;
    t.get("nvidia-container-cli")?.get("no-cgroups")?.as_bool()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of the file the toolkit package installs (trimmed).
    const SHIPPED: &str = "#accept-nvidia-visible-devices-as-volume-mounts = false\ndisable-require = false\n\n[nvidia-container-cli]\n#debug = \"/var/log/nvidia-container-toolkit.log\"\nenvironment = []\nldconfig = \"@/sbin/ldconfig.real\"\nload-kmods = true\n#no-cgroups = false\n#path = \"/usr/bin/nvidia-container-cli\"\n\n[nvidia-container-runtime]\nmode = \"auto\"\n";

    #[test]
    fn the_shipped_comment_becomes_the_setting() {
        let new = set_no_cgroups(Some(SHIPPED), true, "c").unwrap().unwrap();
        assert_eq!(
            new,
            SHIPPED.replace("#no-cgroups = false", "no-cgroups = true")
        );
        assert_eq!(no_cgroups(&new), Some(true));
        assert_eq!(set_no_cgroups(Some(&new), true, "c").unwrap(), None);
    }

    #[test]
    fn a_missing_file_gets_the_table() {
        let new = set_no_cgroups(None, true, "c").unwrap().unwrap();
        assert_eq!(new, "[nvidia-container-cli]\nno-cgroups = true\n");
    }
}
