//! Tool-call titles: the command, working directory, description and
//! background flag that Gemini CLI folds into text, recovered as borrowed
//! slices with no allocation (works without `alloc`).
//!
//! Gemini CLI sends no `description` on its ACP `tool_call`s. For its shell
//! tool the context hides in the title, or, from release 0.36 on, in a text
//! content block on the tool call (its "explanation"):
//!
//! | releases | title | explanation block |
//! |---|---|---|
//! | up to 0.13 | `cmd [in DIR] (DESC)`, bracket only when a directory was given | — |
//! | 0.14 – 0.27 | `cmd [in DIR] (DESC)` or `cmd [current working directory /ABS] (DESC)` | — |
//! | 0.28 – 0.35 | the same, with ` [background]` appended when backgrounded | — |
//! | 0.36 on | `cmd` | `[in DIR] (DESC) [background]` or `[current working directory /ABS] (DESC)` |
//!
//! ` (DESC)` is present only for a non-empty description, whose newlines
//! Gemini replaces with spaces. MCP tools from 0.36 on put their JSON
//! arguments in the explanation block instead. Other tools' titles are
//! free text: `src/main.rs`, `Create PATH`, `PATH: OLD... => NEW...`,
//! `Writing to PATH`, `'PAT' in GLOB within DIR`, `Fetching content from:
//! URL`, multi-line texts, `Running subagent 'x' with inputs: { … }`.
//!
//! # The shell grammar
//!
//! [`Title::parse`] reads a title right to left in linear time, with no
//! backtracking and no allocation: the description scan and the bracket scan
//! cover disjoint spans, so one pass covers the title; only when a trailing
//! ` [background]` turns out not to belong to the grammar is the title
//! scanned a second time without it (each `[` met costs a comparison of at
//! most 27 bytes). A title that does not match is searched once more, forward,
//! for `inputs: {` when it ends with `}`.
//!
//! 1. **Background.** If the title ends with ` [background]` *and* steps 2–3
//!    find a description or a directory in what precedes it, the flag is set
//!    and the suffix removed. Otherwise the suffix is left in place (a
//!    directory may end with ` [background`).
//! 2. **Description.** If the text ends with `)`, scan left counting nested
//!    parentheses to the `(` that balances it. That group is the description
//!    when the `(` is preceded by a space (Gemini writes ` (DESC)`) and the
//!    group is not empty. So `echo $(date)`, `f(x)`, `a <(ls)`, a title that
//!    is only `(x)`, ` ()` and a group left unbalanced by extra `)` are not
//!    descriptions. Nested parentheses are kept: `ls -F (List files
//!    (detailed))` gives `List files (detailed)`. The group is found before
//!    the directory, so a description may contain `[in x]`.
//! 3. **Directory.** If what precedes the description (or the whole text)
//!    ends with `]`, the bracket starts at the *last* ` [in ` or
//!    ` [current working directory ` in it. The directory is everything
//!    between that marker and the final `]`, so it may contain `]`, `(`,
//!    `[` and spaces; the command may contain the markers too.
//!    [`WorkingDir`] tells the two brackets apart.
//! 4. **Command.** What precedes the bracket (or the description) is the
//!    command. When neither a description nor a bracket was found, the
//!    command is the whole title and nothing is invented.
//!
//! Ambiguities, resolved by the rule above (Gemini can produce either
//! reading, so no rule recovers both): a directory containing ` [in ` or
//! ` [current working directory ` (or starting with `[in ` or
//! `[current working directory `), or ending with `] [background`; a
//! description with unbalanced parentheses (left in the command); a
//! pre-0.14 command without directory that itself ends with ` (…)` or a
//! ` [in …]` (read as a description or directory). Gemini 0.36+ titles are
//! plain commands: read them with [`Title::with_explanation`], which uses the
//! explanation block and keeps the title whole.
//!
//! For every title `t`, `Title::parse(t).to_string() == t`: the parts are
//! exact slices and [`Display`](core::fmt::Display) writes them back in
//! Gemini's 0.28–0.35 format.
//!
//! # Other tools
//!
//! The shell grammar only applies to shell titles, so keying by the tool
//! call's ACP `kind` is the safe choice: [`Title::parse_for_kind`] applies it
//! for `execute` (Gemini's shell tool) and when the kind is unknown (`None`,
//! the seed's behavior), and reads every other kind with [`Title::plain`],
//! which keeps the whole title as the command. Without the kind, titles of
//! other tools still come back whole unless they happen to end the way the
//! grammar describes (an edit `a.rs: x => f (y)` would yield `y`).
//!
//! Some titles carry their tool's arguments as `inputs: {…}` (Gemini's
//! subagents, some clients): when the grammar does not match, the `{…}` from
//! the first `inputs: {` (at the start or after whitespace) through the
//! closing `}` that ends the title is returned by [`Title::inputs`], unchecked
//! (it may be JSON or Gemini's `{ key: value }` summary); the command stays
//! the whole title.
//!
//! Tool-call ids that Gemini generates (`NAME-<millis>-<counter>`) give
//! their tool's name back through [`tool_name_from_id`]; other ids are opaque.
//!
//! # Example
//!
//! ```
//! use acp_codec::title::{Title, WorkingDir};
//!
//! // Gemini 0.28–0.35: everything is in the title.
//! let t = Title::parse("ls -F [in src (old)] (List files (detailed)) [background]");
//! assert_eq!(t.command(), "ls -F");
//! assert_eq!(t.working_dir(), Some(WorkingDir::In("src (old)")));
//! assert_eq!(t.description(), "List files (detailed)");
//! assert!(t.is_background());
//!
//! // A shell substitution is not a description.
//! let t = Title::parse("echo $(date)");
//! assert_eq!((t.command(), t.description()), ("echo $(date)", ""));
//!
//! // Gemini 0.36+: the title is the command, the rest is in a text block.
//! let t = Title::parse_for_kind("npm test (ci)", Some("execute"))
//!     .with_explanation("[current working directory /home/me/app] (Run the tests)");
//! assert_eq!(t.command(), "npm test (ci)");
//! assert_eq!(t.working_dir(), Some(WorkingDir::Current("/home/me/app")));
//! assert_eq!(t.description(), "Run the tests");
//!
//! // Other tools' titles are kept whole.
//! let t = Title::parse_for_kind("src/a.rs: f(x) => g (y)", Some("edit"));
//! assert_eq!((t.command(), t.description()), ("src/a.rs: f(x) => g (y)", ""));
//! ```

use core::fmt;

mod explanation;
mod grammar;
mod id;

pub use explanation::Explanation;
pub use id::tool_name_from_id;

/// The working directory named in a shell title or explanation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WorkingDir<'a> {
    /// `[in DIR]`: the directory the model asked for, as it wrote it
    /// (often relative to the workspace).
    In(&'a str),
    /// `[current working directory DIR]`: no directory was asked for; Gemini
    /// reports its own process's working directory (absolute).
    Current(&'a str),
}

impl<'a> WorkingDir<'a> {
    /// The directory, whichever bracket named it.
    pub const fn path(self) -> &'a str {
        match self {
            Self::In(dir) | Self::Current(dir) => dir,
        }
    }

    /// Whether the model asked for this directory (`[in DIR]`).
    pub const fn is_requested(self) -> bool {
        matches!(self, Self::In(_))
    }
}

impl fmt::Display for WorkingDir<'_> {
    /// Writes the bracket as Gemini does: `[in DIR]` or
    /// `[current working directory DIR]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::In(dir) => write!(f, "{}{dir}]", grammar::IN),
            Self::Current(dir) => write!(f, "{}{dir}]", grammar::CURRENT),
        }
    }
}

/// A tool call's title, split into borrowed parts (see the
/// [module docs](self) for the grammar).
///
/// Every part is a slice of the title (or of the explanation text given to
/// [`Title::with_explanation`]), an absent description being the empty slice
/// at its end; parsing never allocates, never panics and
/// takes linear time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Title<'a> {
    raw: &'a str,
    command: &'a str,
    working_dir: Option<WorkingDir<'a>>,
    description: &'a str,
    background: bool,
    inputs: Option<&'a str>,
}

impl<'a> Title<'a> {
    /// Parses a title with the shell grammar (the seed's rule, extended to
    /// every Gemini release; see the [module docs](self)). A title that does
    /// not match comes back whole as the command.
    ///
    /// ```
    /// use acp_codec::title::{Title, WorkingDir};
    ///
    /// let t = Title::parse("cargo test [current working directory /w] (Run tests)");
    /// assert_eq!(t.command(), "cargo test");
    /// assert_eq!(t.working_dir(), Some(WorkingDir::Current("/w")));
    /// assert_eq!(t.description(), "Run tests");
    /// assert_eq!(Title::parse("Writing to src/lib.rs").command(), "Writing to src/lib.rs");
    /// ```
    pub fn parse(title: &'a str) -> Self {
        match grammar::shell(title) {
            Some(d) => Self {
                raw: title,
                command: d.command,
                working_dir: d.working_dir,
                description: d.description,
                background: d.background,
                inputs: None,
            },
            None => Self::plain(title),
        }
    }

    /// Reads a title without the shell grammar: the command is the whole
    /// title; only an `inputs: {…}` object is picked out.
    ///
    /// ```
    /// use acp_codec::title::Title;
    ///
    /// let t = Title::plain("Running subagent 'x' with inputs: { q: why }");
    /// assert_eq!(t.command(), "Running subagent 'x' with inputs: { q: why }");
    /// assert_eq!(t.inputs(), Some("{ q: why }"));
    /// assert_eq!(Title::plain("ls (a)").description(), "");
    /// ```
    pub fn plain(title: &'a str) -> Self {
        Self {
            raw: title,
            command: title,
            working_dir: None,
            description: grammar::end_of(title),
            background: false,
            inputs: grammar::inputs(title),
        }
    }

    /// Parses a title according to its tool call's ACP `kind`: the shell
    /// grammar ([`Title::parse`]) for `execute` and for an unknown kind
    /// (`None`), [`Title::plain`] for every other kind (`read`, `edit`,
    /// `search`, `fetch`, `other`, …).
    ///
    /// ```
    /// use acp_codec::title::Title;
    ///
    /// assert_eq!(Title::parse_for_kind("ls (List)", Some("execute")).description(), "List");
    /// assert_eq!(Title::parse_for_kind("ls (List)", None).description(), "List");
    /// assert_eq!(Title::parse_for_kind("notes (draft).md", Some("read")).description(), "");
    /// ```
    pub fn parse_for_kind(title: &'a str, kind: Option<&str>) -> Self {
        match kind {
            None | Some("execute") => Self::parse(title),
            Some(_) => Self::plain(title),
        }
    }

    /// Combines the title with the text of the explanation block Gemini
    /// 0.36+ puts in the tool call's content.
    ///
    /// A shell explanation ([`Explanation::Shell`]) means the title is the
    /// plain command: the command becomes the whole title and the directory,
    /// description and background flag come from the explanation. MCP
    /// arguments ([`Explanation::Arguments`]) make the title plain with those
    /// arguments as [`Title::inputs`]. Any other text leaves `self` as it is.
    ///
    /// ```
    /// use acp_codec::title::{Title, WorkingDir};
    ///
    /// let t = Title::parse("make (all)").with_explanation("[in build] (Build it) [background]");
    /// assert_eq!(t.command(), "make (all)");
    /// assert_eq!(t.working_dir(), Some(WorkingDir::In("build")));
    /// assert_eq!(t.description(), "Build it");
    /// assert!(t.is_background());
    ///
    /// let t = Title::parse("query").with_explanation("{\"sql\":\"select 1\"}");
    /// assert_eq!(t.inputs(), Some("{\"sql\":\"select 1\"}"));
    /// ```
    pub fn with_explanation(self, explanation: &'a str) -> Self {
        let raw = self.raw;
        match Explanation::parse(explanation) {
            Some(Explanation::Shell {
                working_dir,
                description,
                background,
            }) => Self {
                raw,
                command: raw,
                working_dir: Some(working_dir),
                description,
                background,
                inputs: None,
            },
            Some(Explanation::Arguments(args)) => Self {
                inputs: Some(args),
                ..Self::plain(raw)
            },
            None => self,
        }
    }

    /// The whole title as given.
    pub const fn as_str(&self) -> &'a str {
        self.raw
    }

    /// The command: the title before the directory bracket and description,
    /// or the whole title when the shell grammar did not match.
    pub const fn command(&self) -> &'a str {
        self.command
    }

    /// The working directory, when a bracket named one.
    pub const fn working_dir(&self) -> Option<WorkingDir<'a>> {
        self.working_dir
    }

    /// The description, empty when none was found.
    pub const fn description(&self) -> &'a str {
        self.description
    }

    /// Whether the command was started in the background (` [background]`).
    pub const fn is_background(&self) -> bool {
        self.background
    }

    /// The `{…}` arguments carried as `inputs: {…}` in the title, or as MCP
    /// arguments in the explanation; not validated as JSON.
    pub const fn inputs(&self) -> Option<&'a str> {
        self.inputs
    }
}

impl fmt::Display for Title<'_> {
    /// Writes the parts back in Gemini's 0.28–0.35 format:
    /// `command [in DIR] (DESC) [background]`, each part only when present.
    /// For any `t`, `Title::parse(t).to_string() == t`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.command)?;
        if let Some(dir) = self.working_dir {
            write!(f, " {dir}")?;
        }
        if !self.description.is_empty() {
            write!(f, " ({})", self.description)?;
        }
        if self.background {
            f.write_str(grammar::BACKGROUND)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts<'a>(t: &Title<'a>) -> (&'a str, Option<WorkingDir<'a>>, &'a str, bool) {
        (
            t.command(),
            t.working_dir(),
            t.description(),
            t.is_background(),
        )
    }

    #[test]
    fn background_only_with_the_grammar() {
        assert_eq!(
            parts(&Title::parse("echo [background]")),
            ("echo [background]", None, "", false)
        );
        assert_eq!(
            parts(&Title::parse("a [in x [background]")),
            ("a", Some(WorkingDir::In("x [background")), "", false)
        );
        assert_eq!(
            parts(&Title::parse("a [in x] [background]")),
            ("a", Some(WorkingDir::In("x")), "", true)
        );
    }

    #[test]
    fn explanation_keeps_the_title_whole() {
        let t = Title::parse("ls [in a] (b)").with_explanation("not an explanation");
        assert_eq!(parts(&t), ("ls", Some(WorkingDir::In("a")), "b", false));
        let t = Title::parse("ls [in a] (b)").with_explanation("[in c]");
        assert_eq!(
            parts(&t),
            ("ls [in a] (b)", Some(WorkingDir::In("c")), "", false)
        );
    }
}
