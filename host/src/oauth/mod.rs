//! The host's OAuth work with the vendors, on the users' behalf: keeping
//! connector tokens fresh ([`refresh`]).

pub mod refresh;

pub use refresh::Refresher;
