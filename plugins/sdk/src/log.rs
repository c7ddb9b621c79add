//! Diagnostics for the operator's log. Never log user content above debug.

use crate::bindings::quarry::connector::log::{Level, log};

pub fn debug(message: &str) {
    log(Level::Debug, message);
}

pub fn info(message: &str) {
    log(Level::Info, message);
}

pub fn warn(message: &str) {
    log(Level::Warn, message);
}
