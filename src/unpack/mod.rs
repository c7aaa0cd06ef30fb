//! Archive extraction (`.tar.xz`, `.tar.gz`, `.zip`, wheels), hardened against hostile archives.
//! Being written: see the module specification handed to its author.
