//! `fs/*` for an ACP client, confined to the session directory: paths are
//! resolved with symlinks followed, and anything that lands outside the
//! root is refused.

use std::io;
use std::path::{Path, PathBuf};

use acp_codec::ErrorCode;

/// Why an `fs/*` request was refused or failed: the JSON-RPC error to answer.
#[derive(Debug)]
pub struct FsError {
    pub code: ErrorCode,
    pub message: String,
}

impl FsError {
    fn new(code: ErrorCode, message: String) -> Self {
        Self { code, message }
    }
}

/// A directory the agent may read and write under.
#[derive(Debug, Clone)]
pub struct Confined {
    root: PathBuf,
}

impl Confined {
    /// Confines to `dir` (resolved, symlinks followed).
    ///
    /// # Errors
    ///
    /// When `dir` does not exist.
    pub fn new(dir: &Path) -> io::Result<Self> {
        Ok(Self {
            root: std::fs::canonicalize(dir)?,
        })
    }

    /// The resolved root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves `path` (absolute, as ACP requires): the longest existing
    /// ancestor is canonicalized (symlinks followed), the rest must be plain
    /// names; the result must be the root or under it.
    ///
    /// # Errors
    ///
    /// `-32602` for a relative path, a `..` in the part that does not
    /// exist yet, or a path that resolves outside the root.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, FsError> {
        let refuse = |why: &str| {
            FsError::new(
                ErrorCode::INVALID_PARAMS,
                format!("{why}: {path} (session directory {})", self.root.display()),
            )
        };
        let p = Path::new(path);
        if !p.is_absolute() {
            return Err(refuse("path is not absolute"));
        }
        // Walk up to the longest prefix that exists.
        let mut existing = p;
        let mut rest = Vec::new();
        let real = loop {
            match std::fs::canonicalize(existing) {
                Ok(real) => break real,
                Err(_) => {
                    // `file_name` is `None` for a path ending in `..`: a
                    // `..` in the missing part is refused here.
                    let (Some(parent), Some(name)) = (existing.parent(), existing.file_name())
                    else {
                        return Err(refuse("path does not resolve"));
                    };
                    rest.push(name.to_owned());
                    existing = parent;
                }
            }
        };
        let mut full = real;
        for name in rest.iter().rev() {
            full.push(name);
        }
        if full.starts_with(&self.root) {
            Ok(full)
        } else {
            Err(refuse("path outside the session directory"))
        }
    }

    /// `fs/read_text_file`: the text, optionally from 1-based `line` for
    /// `limit` lines.
    ///
    /// # Errors
    ///
    /// As [`Confined::resolve`]; `-32002` when the file does not exist;
    /// `-32603` for other I/O errors.
    pub async fn read(
        &self,
        path: &str,
        line: Option<u32>,
        limit: Option<u32>,
    ) -> Result<String, FsError> {
        let file = self.resolve(path)?;
        let text = tokio::fs::read_to_string(&file).await.map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                FsError::new(
                    ErrorCode::RESOURCE_NOT_FOUND,
                    format!("Resource not found: {path}"),
                )
            } else {
                FsError::new(ErrorCode::INTERNAL_ERROR, format!("reading {path}: {e}"))
            }
        })?;
        if line.is_none() && limit.is_none() {
            return Ok(text);
        }
        let skip = line.unwrap_or(1).saturating_sub(1) as usize;
        let take = limit.map_or(usize::MAX, |l| l as usize);
        Ok(text.split_inclusive('\n').skip(skip).take(take).collect())
    }

    /// `fs/write_text_file`: writes `content`, creating parent directories
    /// inside the root.
    ///
    /// # Errors
    ///
    /// As [`Confined::resolve`]; `-32603` for I/O errors.
    pub async fn write(&self, path: &str, content: &str) -> Result<(), FsError> {
        let file = self.resolve(path)?;
        let io_err =
            |e: io::Error| FsError::new(ErrorCode::INTERNAL_ERROR, format!("writing {path}: {e}"));
        if let Some(parent) = file.parent() {
            tokio::fs::create_dir_all(parent).await.map_err(io_err)?;
        }
        tokio::fs::write(&file, content).await.map_err(io_err)
    }
}
