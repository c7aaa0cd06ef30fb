//! `repair --fix`'s vocabulary: a repair's own id, or a doctor finding's, and nothing else.

use super::*;

#[test]
fn fix_takes_a_repair_or_the_finding_it_repairs() {
    assert_eq!(repair_id("litter"), Ok("litter"));
    assert_eq!(repair_id("toolkit-files-changed"), Ok("toolkit-files"));
    assert_eq!(repair_id("self-copy-missing"), Ok("self-copy"));
    assert_eq!(repair_id("shell-hook-missing"), Ok("rc-hook"));
    let e = repair_id("everything").unwrap_err();
    assert!(e.contains("toolkit-files, venv-packages"), "{e}");
}
