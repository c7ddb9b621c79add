//! The data folder and its files are the operator's alone: the folder
//! 0700, the database file 0600 (the records are sealed, but their
//! counters, ids and sizes are not, and a copy could be worked on
//! offline). Applied at every start, so a folder made by an earlier
//! version, or by a umask that shares, is closed too.

use std::path::Path;

use anyhow::{Context, Result};

/// Creates `dir` if missing, and makes it the owner's only.
pub fn folder(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    restrict(dir, 0o700)
}

/// Creates the file at `path` if missing (mode 0600 from its first
/// byte), and makes it the owner's only.
pub fn file(path: &Path) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    restrict(path, 0o600)
}

#[cfg(unix)]
fn restrict(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("making {} private (mode {mode:o})", path.display()))
}

#[cfg(not(unix))]
fn restrict(_path: &Path, _mode: u32) -> Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn new_and_existing_ones_become_the_owners_only() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("data");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        folder(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        let new = dir.join("quarry.redb");
        file(&new).unwrap();
        assert_eq!(mode(&new), 0o600);
        let old = dir.join("old");
        std::fs::write(&old, b"kept").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
        file(&old).unwrap();
        assert_eq!(
            (mode(&old), std::fs::read(&old).unwrap()),
            (0o600, b"kept".to_vec())
        );
    }
}
