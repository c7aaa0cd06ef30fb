//! The toolkit a receipt records, read back as the step repair installs again.

use std::path::Path;

use super::{ReceiptError, ToolkitStep};
use crate::fetch::Location;
use crate::install::{Receipt, Source};
use crate::model::receipt::{ReceiptComponent, ReceiptSource};

const NVCC: &str = "https://developer.download.nvidia.com/compute/cuda/redist/cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz";

fn receipt(source: &str, cuda: &str, url: &str) -> Receipt {
    Receipt {
        schema_version: 1,
        prefix: "/opt/cuda-12.4".into(),
        cuda: cuda.into(),
        cudnn: Some("9.1.0".into()),
        source: source.into(),
        installed_at: 1,
        components: vec![ReceiptComponent {
            name: "cuda_nvcc".into(),
            version: "12.4.131".into(),
            url: url.into(),
            sha256: "ab".repeat(32),
            size: Some(42),
        }],
        files: Vec::new(),
    }
}

#[test]
fn a_receipt_gives_back_the_toolkit_it_records() {
    let home = Path::new("/home/u/.local/share/cudaup");
    let base = "https://developer.download.nvidia.com/compute/cuda/redist/";
    let r = receipt(&format!("redist {base}"), "12.4.1", NVCC);
    assert_eq!(r.source(), Some(ReceiptSource::Redist(base)));
    let step = ToolkitStep::from_receipt(&r, home).expect("a whole receipt");
    assert_eq!(
        step.spec.source,
        Source::Redist(Location::parse(base).expect("a URL"))
    );
    assert_eq!(step.spec.cuda.to_string(), "12.4.1");
    assert_eq!(
        step.spec.cudnn.as_ref().map(|v| v.to_string()).as_deref(),
        Some("9.1.0")
    );
    assert_eq!(step.spec.prefix, Path::new("/opt/cuda-12.4"));
    assert_eq!(step.spec.arch, std::env::consts::ARCH);
    assert_eq!(step.spec.register_in.as_deref(), Some(home));
    let items: Vec<_> = step
        .resolved
        .items
        .iter()
        .map(|i| {
            (
                i.component.as_str(),
                i.artifact.location.to_string(),
                i.artifact.size,
            )
        })
        .collect();
    assert_eq!(items, [("cuda_nvcc", NVCC.to_owned(), Some(42))]);
    assert!(step.resolved.notes.is_empty());
    assert!(!step.over_http());

    let index = "https://pypi.org/simple/";
    let wheel = "https://files.pythonhosted.org/packages/nvidia_cuda_nvcc-13.0.88-py3-none-manylinux_2_27_x86_64.whl";
    let r = receipt(&format!("wheels {index}"), "13.0.2", wheel);
    assert_eq!(r.source(), Some(ReceiptSource::Wheels(index)));
    let step = ToolkitStep::from_receipt(&r, home).expect("a whole receipt");
    assert_eq!(
        step.spec.source,
        Source::Wheels(Location::parse(index).expect("a URL"))
    );

    // A toolkit its install fetched over plain http (--allow-http then) is fetched so again.
    let r = receipt(
        &format!("redist {base}"),
        "12.4.1",
        "http://10.0.0.2/cuda_nvcc.tar.xz",
    );
    let step = ToolkitStep::from_receipt(&r, home).expect("a whole receipt");
    assert!(step.over_http());
}

#[test]
fn an_unreadable_receipt_is_refused_with_what_is_wrong() {
    let home = Path::new("/h");
    let r = receipt("nonsense", "12.4.1", NVCC);
    assert_eq!(r.source(), None);
    match ToolkitStep::from_receipt(&r, home) {
        Err(ReceiptError::Unreadable(why)) => {
            assert_eq!(why, "/opt/cuda-12.4: unreadable source in the receipt");
        }
        other => panic!("expected an unreadable source, got {other:?}"),
    }
    let r = receipt("redist https://mirror.example/", "twelve", NVCC);
    match ToolkitStep::from_receipt(&r, home) {
        Err(ReceiptError::Unreadable(why)) => assert_eq!(why, "bad CUDA version in the receipt"),
        other => panic!("expected a bad CUDA version, got {other:?}"),
    }
    let r = receipt("redist ftp://mirror.example/", "12.4.1", NVCC);
    assert!(
        matches!(
            ToolkitStep::from_receipt(&r, home),
            Err(ReceiptError::Location(_))
        ),
        "a source cudaup cannot fetch from"
    );
    let r = receipt(
        "redist https://mirror.example/",
        "12.4.1",
        "ftp://mirror.example/a.tar.xz",
    );
    assert!(
        matches!(
            ToolkitStep::from_receipt(&r, home),
            Err(ReceiptError::Items(_))
        ),
        "a component cudaup cannot fetch"
    );
}
