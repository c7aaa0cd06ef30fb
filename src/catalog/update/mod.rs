//! `cudaup manifests update`: read the publishers' own data and write a refreshed catalog.
