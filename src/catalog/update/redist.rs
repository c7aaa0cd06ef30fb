//! NVIDIA's redistributable listings (`<base>/compute/cuda/redist/`, `…/cudnn/redist/`) and the
//! `redistrib_<version>.json` documents they list: release dates, platforms, the driver a CUDA
//! release bundles (none from 13.4 on Linux), and the CUDA variants of each cuDNN release.

use serde_json::Value;

use super::{Net, UpdateError};
use crate::catalog::{Catalog, Date};
use crate::fetch::Location;
use crate::model::version::Version;

/// A CUDA release as its redistrib JSON describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaObs {
    /// `13.4.1`.
    pub version: Version,
    /// `release_date`.
    pub date: Option<Date>,
    /// Platforms with a `cuda_nvcc` archive.
    pub platforms: Vec<String>,
    /// The `nvidia_driver` component's version, when the release bundles one.
    pub driver: Option<Version>,
    /// The document's URL.
    pub url: String,
}

/// A cuDNN release as its redistrib JSON describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudnnObs {
    /// `9.27.0` (the release label).
    pub version: Version,
    /// `9.27.0.42`.
    pub build: Option<Version>,
    /// `release_date`.
    pub date: Option<Date>,
    /// CUDA major → the platforms with an archive of that variant.
    pub variants: Vec<(String, Vec<String>)>,
    /// The document's URL.
    pub url: String,
}

/// The versions a listing page links to as `redistrib_<version>.json` (only plain numeric ones:
/// release candidates and oddly named files are not releases).
pub fn listed_versions(page: &str) -> Vec<Version> {
    let mut out: Vec<Version> = Vec::new();
    let mut rest = page;
    while let Some(i) = rest.find("redistrib_") {
        rest = &rest[i + "redistrib_".len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (v, after) = rest.split_at(end);
        // `13.4.1.` then `json`: a release; `13.4.0` then `rc1.json`: not one.
        if let (Some(v), true) = (v.strip_suffix('.'), after.starts_with("json")) {
            if let Some(ver) = Version::parse(v).filter(|x| x.parts().len() >= 3) {
                if !out.contains(&ver) {
                    out.push(ver);
                }
            }
        }
    }
    out.sort();
    out
}

fn str_at<'a>(doc: &'a Value, key: &str) -> Option<&'a str> {
    doc.get(key).and_then(Value::as_str)
}

fn is_platform(key: &str) -> bool {
    key.starts_with("linux-") || key.starts_with("windows-")
}

/// A redistrib document of `product` that is the release its file name says.
fn document(
    url: &Location,
    product: &str,
    expected: &Version,
    bytes: &[u8],
) -> Result<Value, UpdateError> {
    let bad = |m: String| UpdateError::BadData {
        url: url.to_string(),
        message: m,
    };
    let doc: Value = serde_json::from_slice(bytes)
        .map_err(|e| bad(format!("not a redistrib JSON document: {e}")))?;
    let label = str_at(&doc, "release_label").ok_or_else(|| bad("no release_label".into()))?;
    if Version::parse(label).as_ref() != Some(expected)
        || str_at(&doc, "release_product") != Some(product)
    {
        return Err(bad(format!(
            "release_label `{label}` / release_product {:?} do not match the file name ({product} {expected})",
            str_at(&doc, "release_product")
        )));
    }
    Ok(doc)
}

fn bad(url: &Location, m: &str) -> UpdateError {
    UpdateError::BadData {
        url: url.to_string(),
        message: m.to_owned(),
    }
}

/// Parses a CUDA `redistrib_<version>.json`.
pub fn parse_cuda(
    url: &Location,
    expected: &Version,
    bytes: &[u8],
) -> Result<CudaObs, UpdateError> {
    let doc = document(url, "cuda", expected, bytes)?;
    let nvcc = doc
        .get("cuda_nvcc")
        .and_then(Value::as_object)
        .ok_or_else(|| bad(url, "no cuda_nvcc component"))?;
    let mut platforms: Vec<String> = nvcc
        .iter()
        .filter(|(k, v)| is_platform(k) && v.get("relative_path").is_some())
        .map(|(k, _)| k.clone())
        .collect();
    platforms.sort();
    let driver = doc
        .get("nvidia_driver")
        .and_then(|d| str_at(d, "version"))
        .and_then(Version::parse);
    Ok(CudaObs {
        version: expected.clone(),
        date: str_at(&doc, "release_date").and_then(Date::parse),
        platforms,
        driver,
        url: url.to_string(),
    })
}

/// Parses a cuDNN `redistrib_<version>.json`.
pub fn parse_cudnn(
    url: &Location,
    expected: &Version,
    bytes: &[u8],
) -> Result<CudnnObs, UpdateError> {
    let doc = document(url, "cudnn", expected, bytes)?;
    let cudnn = doc
        .get("cudnn")
        .and_then(Value::as_object)
        .ok_or_else(|| bad(url, "no cudnn component"))?;
    let mut variants: Vec<(String, Vec<String>)> = cudnn
        .get("cuda_variant")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(|m| (m.to_owned(), Vec::new()))
                .collect()
        })
        .unwrap_or_default();
    for (platform, v) in cudnn.iter().filter(|(k, _)| is_platform(k)) {
        let Some(obj) = v.as_object() else { continue };
        // Each platform holds one archive per `cudaNN` key (some windows-arm64 entries also
        // carry a stray archive of their own: ignored).
        for key in obj.keys().filter_map(|k| k.strip_prefix("cuda")) {
            if !key.chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            match variants.iter_mut().find(|(m, _)| m == key) {
                Some((_, p)) => p.push(platform.clone()),
                None => variants.push((key.to_owned(), vec![platform.clone()])),
            }
        }
    }
    for (_, p) in &mut variants {
        p.sort();
    }
    variants.retain(|(_, p)| !p.is_empty());
    variants.sort();
    Ok(CudnnObs {
        version: expected.clone(),
        build: str_at(cudnn_value(&doc), "version").and_then(Version::parse),
        date: str_at(&doc, "release_date").and_then(Date::parse),
        variants,
        url: url.to_string(),
    })
}

fn cudnn_value(doc: &Value) -> &Value {
    doc.get("cudnn").unwrap_or(&Value::Null)
}

/// Reads the listings and the documents the catalog lacks (new releases, and rows without the
/// derived facts).
pub fn read(
    net: &mut Net<'_>,
    base: &Location,
    catalog: &Catalog,
) -> Result<(Vec<CudaObs>, Vec<CudnnObs>), UpdateError> {
    let cuda_dir = base.join("compute/cuda/redist/");
    let page = net.get(&listing(&cuda_dir), None)?;
    let mut cuda = Vec::new();
    for v in listed_versions(&String::from_utf8_lossy(&page)) {
        let known = catalog.cuda.release.iter().find(|r| r.version == v);
        if v.major() < 12 || known.is_some_and(|r| r.date.is_some()) {
            continue;
        }
        let url = crate::sources::redist::cuda_manifest(base, &v.to_string());
        let bytes = net.get(&url, None)?;
        cuda.push(parse_cuda(&url, &v, &bytes)?);
    }
    let cudnn_dir = base.join("compute/cudnn/redist/");
    let page = net.get(&listing(&cudnn_dir), None)?;
    let mut cudnn = Vec::new();
    for v in listed_versions(&String::from_utf8_lossy(&page)) {
        let known = catalog
            .cudnn
            .release
            .iter()
            .any(|r| r.version == v && r.date.is_some());
        if v.major() < 9 || known {
            continue;
        }
        let url = crate::sources::redist::cudnn_manifest(base, &v.to_string());
        let bytes = net.get(&url, None)?;
        cudnn.push(parse_cudnn(&url, &v, &bytes)?);
    }
    Ok((cuda, cudnn))
}

/// A listing's location: the directory itself over HTTP (the server renders its index), its
/// `index.html` in a local mirror.
fn listing(dir: &Location) -> Location {
    match dir {
        Location::Http(_) => dir.clone(),
        Location::File(p) => Location::File(p.join("index.html")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(p: &str) -> Vec<u8> {
        fs_err::read(format!(
            "{}/tests/fixtures/sources/nvidia/{p}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn the_real_13_4_1_document_has_no_bundled_driver() {
        let url = Location::parse(
            "https://developer.download.nvidia.com/compute/cuda/redist/redistrib_13.4.1.json",
        )
        .unwrap();
        let v = Version::parse("13.4.1").unwrap();
        let o = parse_cuda(&url, &v, &fixture("cuda/redistrib_13.4.1.json")).unwrap();
        assert_eq!(o.date.unwrap().to_string(), "2026-09-09");
        assert_eq!(
            o.platforms,
            [
                "linux-sbsa",
                "linux-x86_64",
                "windows-arm64",
                "windows-x86_64"
            ]
        );
        assert_eq!(o.driver, None);
        // The file name and the document must agree.
        assert!(matches!(
            parse_cuda(
                &url,
                &Version::parse("13.4.2").unwrap(),
                &fixture("cuda/redistrib_13.4.1.json")
            ),
            Err(UpdateError::BadData { .. })
        ));
        assert!(parse_cuda(&url, &v, b"<html>Access Denied</html>").is_err());
    }

    #[test]
    fn the_real_9_27_0_document_lists_both_variants_per_platform() {
        let url = Location::parse(
            "https://developer.download.nvidia.com/compute/cudnn/redist/redistrib_9.27.0.json",
        )
        .unwrap();
        let o = parse_cudnn(
            &url,
            &Version::parse("9.27.0").unwrap(),
            &fixture("cudnn/redistrib_9.27.0.json"),
        )
        .unwrap();
        assert_eq!(o.build.unwrap().to_string(), "9.27.0.42");
        assert_eq!(o.date.unwrap().to_string(), "2026-09-29");
        assert_eq!(
            o.variants,
            [
                (
                    "12".to_owned(),
                    vec![
                        "linux-sbsa".into(),
                        "linux-x86_64".into(),
                        "windows-x86_64".into()
                    ]
                ),
                (
                    "13".to_owned(),
                    vec![
                        "linux-sbsa".into(),
                        "linux-x86_64".into(),
                        "windows-arm64".into(),
                        "windows-x86_64".into()
                    ]
                ),
            ]
        );
    }

    #[test]
    fn listings_yield_plain_versions_only() {
        let page = "<li><a href='redistrib_13.4.1.json'>redistrib_13.4.1.json</a> <span class='date'>2026-09-09</span></li>\n<a href=\"redistrib_12.9.2.json\">x</a> <a href='redistrib_13.4.0rc1.json'>rc</a> redistrib_13.4.1.json";
        let v: Vec<String> = listed_versions(page)
            .iter()
            .map(|v| v.to_string())
            .collect();
        assert_eq!(v, ["12.9.2", "13.4.1"]);
    }
}
