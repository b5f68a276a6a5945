//! Support code for the fuzz targets: a structure-aware generator of valid
//! tile-IR modules (`generate`) and the list of compiler stages the `pipeline`
//! target runs them through (`stages`), and edits that make a valid module
//! invalid (`mutate`) for the verifier's robustness.
pub mod generate;
pub mod mutate;
pub mod stages;
