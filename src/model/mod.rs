//! The documents that flow through the pipeline (ARCHITECTURE.md): plain serde data, no I/O.
//!
//! detect → [`system::System`]; flags and the config file → [`request::Request`]; resolve →
//! [`plan::Plan`]; detect and doctor → [`finding::Finding`]; install → the receipts
//! ([`receipt`]); a prefix's layout ([`layout::Prefix`]). [`version::Version`] is the value type they all share.

pub mod finding;
pub mod layout;
pub mod plan;
pub mod receipt;
pub mod request;
pub mod safe;
pub mod system;
pub mod text;
pub mod version;
