//! Where toolkit components come from: NVIDIA's redistributable archives, or NVIDIA's wheels
//! on a Python package index.

pub mod flat;
pub mod page;
pub mod pypi;
pub mod redist;
