//! Path checks: archive member names, mapped paths and symlink targets.
//!
//! Every check works on text, never on the filesystem, and returns the reason a path is refused;
//! the caller wraps it into [`super::UnpackError::Unsafe`] with the entry's name.

use std::path::{Component, Path, PathBuf};

/// Turns a raw archive member name into a relative path of normal components.
///
/// `Ok(None)` means the name is made only of `.` and `/` separators after a first component
/// (for example `./`, which `tar -C dir .` writes for the top directory): it names the
/// destination itself. Refused: an empty name, a name that is not UTF-8, control characters
/// (NUL included), backslashes, absolute names, drive prefixes and `..` components.
pub(crate) fn sanitize(raw: &[u8]) -> Result<Option<PathBuf>, String> {
    if raw.is_empty() {
        return Err("empty path".into());
    }
    let text = std::str::from_utf8(raw).map_err(|_| "path is not valid UTF-8".to_string())?;
    check_chars(text)?;
    if text.starts_with('/') {
        return Err("absolute path".into());
    }
    let mut out = PathBuf::new();
    for (i, part) in text.split('/').enumerate() {
        match part {
            "" | "." => {}
            ".." => return Err("path contains a `..` component".into()),
            _ => {
                if i == 0 && is_drive_prefix(part) {
                    return Err("path starts with a drive prefix".into());
                }
                out.push(part);
            }
        }
    }
    Ok(if out.as_os_str().is_empty() {
        None
    } else {
        Some(out)
    })
}

/// What every name cudaup keeps for itself at the top of a destination starts with: the
/// receipt (`.cudaup-receipt.json`), the unpacked cache's entry list and stamps. An archive that
/// could plant one would forge what uninstall removes or what the cache vouches for.
pub const RESERVED_PREFIX: &str = ".cudaup";

/// Whether `path`'s first component is a name cudaup reserves ([`RESERVED_PREFIX`]).
pub fn is_reserved(path: &Path) -> bool {
    path.components().next().is_some_and(|c| {
        c.as_os_str()
            .to_str()
            .is_some_and(|s| s.to_ascii_lowercase().starts_with(RESERVED_PREFIX))
    })
}

/// Checks a path returned by the caller's path map; the same rules as [`sanitize`], and no
/// name cudaup reserves at the top ([`is_reserved`]).
pub(crate) fn check_mapped(path: &Path) -> Result<Option<PathBuf>, String> {
    for component in path.components() {
        match component {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => return Err("mapped path contains a `..` component".into()),
            Component::RootDir | Component::Prefix(_) => {
                return Err("mapped path is absolute".into())
            }
        }
    }
    // Checked as a member name, `/`-separated: a path the map built on Windows is spelled with
    // `\`, which a member name may not hold (a `\` inside a name on Unix still fails).
    let parts = path
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect::<Option<Vec<&str>>>()
        .ok_or_else(|| "mapped path is not valid UTF-8".to_string())?;
    let text = parts.join("/");
    let text = text.as_str();
    if text.is_empty() {
        return Ok(None);
    }
    let out = sanitize(text.as_bytes()).map_err(|reason| format!("mapped path: {reason}"))?;
    if out.as_deref().is_some_and(is_reserved) {
        return Err(format!(
            "it maps to `{text}`, a name cudaup reserves for its own files (`{RESERVED_PREFIX}*` at the top)"
        ));
    }
    Ok(out)
}

/// Checks the target of a symlink at `link` (a sanitized path relative to the destination) and
/// returns it normalized (no `.` or empty components).
///
/// The target must be relative, and its `..` components must all come first: `../../lib/x` is
/// fine, `lib/../x` is not. With that shape the target can be resolved exactly without touching
/// the disk: the link's own directory is a real directory (nothing is ever written through a
/// symlink), so the leading `..`s climb real directories, and the normal components that follow
/// only descend, into directories or into other links that were checked the same way. A lexical
/// check that allowed `..` after a normal component would be fooled by `d/y -> ../x/..` once
/// `x -> .` exists.
pub(crate) fn check_link_target(link: &Path, target: &[u8]) -> Result<PathBuf, String> {
    if target.is_empty() {
        return Err("symlink target is empty".into());
    }
    let text =
        std::str::from_utf8(target).map_err(|_| "symlink target is not valid UTF-8".to_string())?;
    check_chars(text).map_err(|reason| format!("symlink target: {reason}"))?;
    if text.starts_with('/') {
        return Err(format!("symlink target `{text}` is absolute"));
    }
    let mut ups = 0usize;
    let mut normals: Vec<&str> = Vec::new();
    for (i, part) in text.split('/').enumerate() {
        match part {
            "" | "." => {}
            ".." if normals.is_empty() => ups += 1,
            ".." => {
                return Err(format!(
                    "symlink target `{text}` has a `..` after a normal component"
                ))
            }
            _ => {
                if i == 0 && is_drive_prefix(part) {
                    return Err(format!(
                        "symlink target `{text}` starts with a drive prefix"
                    ));
                }
                normals.push(part);
            }
        }
    }
    let depth = link.parent().map_or(0, |p| p.components().count());
    if ups > depth {
        return Err(format!(
            "symlink target `{text}` points outside the destination"
        ));
    }
    let mut out = PathBuf::new();
    for _ in 0..ups {
        out.push("..");
    }
    for part in normals {
        out.push(part);
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    Ok(out)
}

fn check_chars(text: &str) -> Result<(), String> {
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        return Err(format!("path contains the control character {c:?}"));
    }
    if text.contains('\\') {
        return Err("path contains a backslash".into());
    }
    Ok(())
}

/// `C:` and `C:foo`: harmless on Unix, but a drive on Windows.
fn is_drive_prefix(part: &str) -> bool {
    let b = part.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_accepts_normal_and_dot_paths() {
        assert_eq!(sanitize(b"a/b/c").unwrap(), Some(PathBuf::from("a/b/c")));
        assert_eq!(sanitize(b"./a//b/").unwrap(), Some(PathBuf::from("a/b")));
        assert_eq!(sanitize(b"./").unwrap(), None);
        assert_eq!(sanitize(b".").unwrap(), None);
    }

    #[test]
    fn sanitize_refuses_hostile_names() {
        for bad in [
            &b""[..],
            b"../evil",
            b"a/../../evil",
            b"a/..",
            b"/abs",
            b"//abs",
            b"a\0b",
            b"a\nb",
            b"a\x7fb",
            b"C:/x",
            b"c:x",
            b"a\\..\\b",
            b"\xff\xfe",
        ] {
            assert!(
                sanitize(bad).is_err(),
                "{:?} accepted",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn mapped_paths_are_checked() {
        assert_eq!(
            check_mapped(Path::new("a/b")).unwrap(),
            Some(PathBuf::from("a/b"))
        );
        assert_eq!(check_mapped(Path::new("")).unwrap(), None);
        assert!(check_mapped(Path::new("/etc/passwd")).is_err());
        assert!(check_mapped(Path::new("a/../../b")).is_err());
        assert!(check_mapped(Path::new("a/\u{1}")).is_err());
        // cudaup's own names at the top are refused, deeper down they are just names.
        assert!(check_mapped(Path::new(".cudaup-receipt.json")).is_err());
        assert!(check_mapped(Path::new("./.CUDAUP-entries.json")).is_err());
        assert!(check_mapped(Path::new(".cudaup-x/y")).is_err());
        assert!(check_mapped(Path::new("share/.cudaup-receipt.json")).is_ok());
        // A path the map built with the platform's separator (`\` on Windows) is fine.
        let built: PathBuf = ["bin", "x64", "cudart64_13.dll"].iter().collect();
        assert_eq!(
            check_mapped(&built).unwrap(),
            Some(PathBuf::from("bin/x64/cudart64_13.dll"))
        );
    }

    #[test]
    fn link_targets() {
        let ok = |link: &str, t: &str| check_link_target(Path::new(link), t.as_bytes());
        assert_eq!(
            ok("lib/libcudart.so", "libcudart.so.13").unwrap(),
            PathBuf::from("libcudart.so.13")
        );
        assert_eq!(
            ok("a/b/c", "../../x/./y").unwrap(),
            PathBuf::from("../../x/y")
        );
        assert_eq!(ok("a/b", "..").unwrap(), PathBuf::from(".."));
        assert_eq!(ok("a", ".").unwrap(), PathBuf::from("."));
        assert!(ok("a", "..").is_err());
        assert!(ok("a/b", "../../x").is_err());
        assert!(ok("a/b", "/etc/passwd").is_err());
        assert!(ok("a/b", "x/../..").is_err());
        assert!(ok("a/b", "x/../y").is_err());
        assert!(ok("a/b", "").is_err());
        assert!(ok("a/b", "x\0y").is_err());
    }
}
