//! Writing a host's configuration file safely: the previous file is copied to `FILE.bak`, the
//! new text goes to a temporary file in the same folder, which is flushed to disk and renamed
//! over the file (a rename within one folder is atomic: a host reading the file at that moment
//! sees the old text or the new, never half of one). A symbolic link (a dotfiles manager's) is
//! followed, so the file it points to is replaced and the link stays.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

/// Read the file, or `None` when it does not exist.
pub fn read(path: &Path) -> io::Result<Option<String>> {
    match fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The backup of `path`: `FILE.bak` beside it.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".bak");
    path.with_file_name(name)
}

/// Replace the file at `path` with `text`. When a file was there, it is first copied to
/// `FILE.bak` (whose path is returned); a new file's folders are created. The new file keeps the
/// old one's permissions.
pub fn replace(path: &Path, text: &str) -> io::Result<Option<PathBuf>> {
    let target = match fs::canonicalize(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => path.to_path_buf(),
        Err(e) => return Err(e),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir)?;
    let existing = fs::metadata(&target).ok();
    let backup = match &existing {
        Some(_) => {
            let b = backup_path(&target);
            fs::copy(&target, &b)?;
            Some(b)
        }
        None => None,
    };
    let file_name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{file_name}.mcpkit-{}.tmp", std::process::id()));
    let written = write_new(&temp, text, existing.as_ref()).and_then(|()| fs::rename(&temp, &target));
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(e);
    }
    Ok(backup)
}

fn write_new(temp: &Path, text: &str, like: Option<&fs::Metadata>) -> io::Result<()> {
    let mut f = fs::OpenOptions::new().write(true).create_new(true).open(temp)?;
    if let Some(m) = like {
        f.set_permissions(m.permissions())?;
    }
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_keeps_a_backup_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("mcp.json");
        assert_eq!(replace(&path, "one").unwrap(), None);
        let backup = replace(&path, "two").unwrap().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        assert_eq!(fs::read_to_string(&backup).unwrap(), "one");
        assert_eq!(backup.file_name().unwrap(), "mcp.json.bak");
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[cfg(unix)]
    #[test]
    fn replace_follows_a_symlink_and_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        fs::write(&real, "old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        replace(&link, "new").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
