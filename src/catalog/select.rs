//! Which catalog is in effect: `--manifests DIR` when given; else the one `manifests update`
//! wrote to `$CUDAUP_HOME/manifests` when it is at least as new as the embedded one and its files
//! are exactly the ones that passed `manifests check`; else the embedded one.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::CatalogError;
use super::{embedded_text, Catalog, CatalogMeta, Source, EMBEDDED};

/// The catalog chosen, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Where to read it.
    pub source: Source,
    /// Whether it is the refreshed catalog under the home.
    pub refreshed: bool,
    /// What the user should know about the choice (a refreshed catalog not used, and why).
    pub notes: Vec<String>,
}

impl Selection {
    /// Loads the chosen catalog, named for `plan` and `manifests status`.
    pub fn load(&self) -> Result<Catalog, CatalogError> {
        let mut c = Catalog::load(&self.source)?;
        if self.refreshed {
            c.origin = format!("refreshed ({})", c.origin);
        } else if let Source::Dir(_) = &self.source {
            c.origin = format!("--manifests {}", c.origin);
        }
        Ok(c)
    }
}

/// The embedded catalog's own facts.
pub fn embedded_meta() -> CatalogMeta {
    toml::from_str(embedded_text("catalog.toml").expect("catalog.toml is embedded"))
        .expect("the embedded catalog.toml is valid (tested)")
}

/// Chooses the catalog for a run: `--manifests DIR`, else the refreshed catalog at `refreshed`
/// (the home's `Home::manifests_link`, handed down as a path) when it is newer and intact, else
/// the embedded one.
pub fn select(manifests_flag: Option<&Path>, refreshed: Option<&Path>) -> Selection {
    if let Some(dir) = manifests_flag {
        return Selection {
            source: Source::Dir(dir.to_owned()),
            refreshed: false,
            notes: Vec::new(),
        };
    }
    let embedded = Selection {
        source: Source::Embedded,
        refreshed: false,
        notes: Vec::new(),
    };
    let Some(dir) = refreshed.map(Path::to_path_buf).filter(|d| d.exists()) else {
        return embedded;
    };
    match verify(&dir) {
        Ok(meta) if meta.date >= embedded_meta().date => Selection {
            source: Source::Dir(dir),
            refreshed: true,
            notes: Vec::new(),
        },
        Ok(meta) => Selection {
            notes: vec![format!(
                "the refreshed catalog in {} ({}) is older than the one built into this cudaup ({}): using the built-in one",
                dir.display(),
                meta.date,
                embedded_meta().date
            )],
            ..embedded
        },
        Err(why) => Selection {
            notes: vec![format!(
                "the refreshed catalog in {} is not used: {why}; `cudaup manifests update` writes a new one",
                dir.display()
            )],
            ..embedded
        },
    }
}

/// Checks that a refreshed catalog is whole and unchanged since it passed `manifests check`.
pub fn verify(dir: &Path) -> std::result::Result<CatalogMeta, String> {
    let text = fs_err::read_to_string(dir.join("catalog.toml"))
        .map_err(|e| format!("cannot read its catalog.toml ({})", e.kind()))?;
    let meta: CatalogMeta = toml::from_str(&text)
        .map_err(|e| format!("its catalog.toml is broken ({})", e.message()))?;
    for (name, _) in EMBEDDED.iter().filter(|(n, _)| *n != "catalog.toml") {
        let want = meta
            .files
            .get(*name)
            .ok_or_else(|| format!("{name} is not recorded in its catalog.toml"))?;
        let bytes = fs_err::read(dir.join(name))
            .map_err(|e| format!("cannot read {name} ({})", e.kind()))?;
        if &hex::encode(Sha256::digest(&bytes)) != want {
            return Err(format!("{name} changed after `manifests check` passed"));
        }
    }
    Ok(meta)
}

/// The sha256 of a manifest's text, as `files` records it.
pub fn digest(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_refreshed(home: &Path, date: &str) -> std::path::PathBuf {
        let dir = home.join("manifests");
        fs_err::create_dir_all(&dir).unwrap();
        let mut meta = embedded_meta();
        meta.date = super::super::Date::parse(date).unwrap();
        for (name, text) in EMBEDDED.iter().filter(|(n, _)| *n != "catalog.toml") {
            fs_err::write(dir.join(name), text).unwrap();
            meta.files.insert((*name).to_owned(), digest(text));
        }
        fs_err::write(dir.join("catalog.toml"), toml::to_string(&meta).unwrap()).unwrap();
        dir
    }

    #[test]
    fn a_newer_refreshed_catalog_wins_and_a_tampered_one_never_does() {
        let home = tempfile::tempdir().unwrap();
        assert_eq!(
            select(None, Some(&home.path().join("manifests"))).source,
            Source::Embedded
        );
        let dir = write_refreshed(home.path(), "2099-01-01");
        let s = select(None, Some(&home.path().join("manifests")));
        assert!(s.refreshed, "{s:?}");
        assert_eq!(s.load().unwrap().meta.date.to_string(), "2099-01-01");
        // --manifests still overrides.
        let other = tempfile::tempdir().unwrap();
        assert_eq!(
            select(Some(other.path()), Some(home.path())).source,
            Source::Dir(other.path().to_owned())
        );
        // A file edited after the check: not used, and the note says why.
        fs_err::write(dir.join("cudnn.toml"), "schema_version = 1\nrelease = []\n").unwrap();
        let s = select(None, Some(&home.path().join("manifests")));
        assert_eq!(s.source, Source::Embedded);
        assert!(s.notes[0].contains("cudnn.toml changed"), "{:?}", s.notes);
    }

    #[test]
    fn an_older_refreshed_catalog_yields_to_the_embedded_one() {
        let home = tempfile::tempdir().unwrap();
        write_refreshed(home.path(), "2001-01-01");
        let s = select(None, Some(&home.path().join("manifests")));
        assert_eq!(s.source, Source::Embedded);
        assert!(s.notes[0].contains("older"), "{:?}", s.notes);
    }
}
