//! The explanation block Gemini 0.36+ puts in a tool call's content.

use core::fmt;

use super::{grammar, WorkingDir};

/// The text of the explanation block Gemini CLI 0.36+ attaches to a tool
/// call as its first text content: the shell tool's context, or an MCP
/// tool's arguments.
///
/// ```
/// use acp_codec::title::{Explanation, WorkingDir};
///
/// assert_eq!(
///     Explanation::parse("[in src] (Count lines [in x]) [background]"),
///     Some(Explanation::Shell {
///         working_dir: WorkingDir::In("src"),
///         description: "Count lines [in x]",
///         background: true,
///     })
/// );
/// assert_eq!(Explanation::parse("{\"q\":1}"), Some(Explanation::Arguments("{\"q\":1}")));
/// assert_eq!(Explanation::parse("I will list the files."), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Explanation<'a> {
    /// The shell tool's `[in DIR] (DESC) [background]` or
    /// `[current working directory DIR] (DESC)`.
    Shell {
        /// The directory bracket, always present.
        working_dir: WorkingDir<'a>,
        /// The description, empty when absent.
        description: &'a str,
        /// Whether ` [background]` ends the text.
        background: bool,
    },
    /// An MCP tool's arguments: a `{…}` object (Gemini's compact JSON; not
    /// validated here).
    Arguments(&'a str),
}

impl<'a> Explanation<'a> {
    /// Reads an explanation block (surrounding whitespace ignored).
    ///
    /// The shell form must be the whole text: a bracket at the start, then
    /// an optional ` (DESC)` (the same balanced-group rule as in titles),
    /// then an optional ` [background]`. Anchored at both ends, it is
    /// unambiguous for any directory not ending with `] [background` or
    /// `) [background`. Text that starts with `{` and ends with `}` is
    /// [`Explanation::Arguments`]. Anything else (such as Gemini's
    /// `[Payload omitted due to length …]`) is `None`.
    pub fn parse(text: &'a str) -> Option<Self> {
        let text = text.trim();
        if let Some(d) = grammar::explanation(text) {
            return Some(Self::Shell {
                working_dir: d.working_dir?,
                description: d.description,
                background: d.background,
            });
        }
        if text.starts_with('{') && text.ends_with('}') {
            return Some(Self::Arguments(text));
        }
        None
    }
}

impl fmt::Display for Explanation<'_> {
    /// Writes the text back as Gemini does; `parse(x)` then display gives
    /// `x.trim()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Shell {
                working_dir,
                description,
                background,
            } => {
                write!(f, "{working_dir}")?;
                if !description.is_empty() {
                    write!(f, " ({description})")?;
                }
                if *background {
                    f.write_str(grammar::BACKGROUND)?;
                }
                Ok(())
            }
            Self::Arguments(args) => f.write_str(args),
        }
    }
}
