//! Shell environment: env scripts for each shell, the rc-file hook, and the Windows user PATH.
//! Being written: see the module specification handed to its author.
