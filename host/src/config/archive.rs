//! The archive that `/v1/deep_search` searches (`[archive]`).

use anyhow::{Result, ensure};
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ArchiveConfig {
    /// Memory the loaded deep-search indexes may use together, in MiB. A
    /// user's index grows with their archive (about 1 KiB per archived
    /// chunk); past this, the least recently used indexes no request is
    /// using are unloaded, and loaded again from the sealed copy when
    /// their user next searches. One index larger than the budget still
    /// loads, alone.
    pub index_memory_mib: usize,
}

impl Default for ArchiveConfig {
    fn default() -> Self {
        ArchiveConfig {
            index_memory_mib: 1024,
        }
    }
}

impl ArchiveConfig {
    pub fn index_memory_bytes(&self) -> usize {
        self.index_memory_mib << 20
    }

    pub(super) fn validate(&self) -> Result<()> {
        ensure!(
            self.index_memory_mib > 0,
            "[archive] index_memory_mib must be positive (the loaded indexes' memory, in MiB)"
        );
        Ok(())
    }
}
