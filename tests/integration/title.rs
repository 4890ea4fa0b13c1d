//! Tool-call titles through the public API: a table of real titles for each
//! Gemini era and each tool, then adversarial ones. Runs without `alloc`.

use acp_codec::title::{tool_name_from_id, Explanation, Title, WorkingDir};
use WorkingDir::{Current, In};

/// (title, command, working dir, description, background).
type Row = (
    &'static str,
    &'static str,
    Option<WorkingDir<'static>>,
    &'static str,
    bool,
);

fn check(rows: &[Row], parse: impl Fn(&'static str) -> Title<'static>) {
    for &(title, command, dir, description, background) in rows {
        let t = parse(title);
        assert_eq!(
            (
                t.command(),
                t.working_dir(),
                t.description(),
                t.is_background()
            ),
            (command, dir, description, background),
            "title {title:?}"
        );
        assert_eq!(t.as_str(), title);
        assert_within(title, t.command());
        assert_within(title, t.description());
        if let Some(d) = t.working_dir() {
            assert_within(title, d.path());
        }
    }
}

fn assert_within(outer: &str, inner: &str) {
    let (o, i) = (outer.as_ptr() as usize, inner.as_ptr() as usize);
    assert!(
        i >= o && i + inner.len() <= o + outer.len(),
        "{inner:?} is not a slice of {outer:?}"
    );
}

#[test]
fn shell_titles_up_to_0_13() {
    check(
        &[
            ("ls -la", "ls -la", None, "", false),
            (
                "ls -la (List all files)",
                "ls -la",
                None,
                "List all files",
                false,
            ),
            (
                "npm run build [in packages/web]",
                "npm run build",
                Some(In("packages/web")),
                "",
                false,
            ),
            (
                "npm run build [in packages/web] (Build the web package)",
                "npm run build",
                Some(In("packages/web")),
                "Build the web package",
                false,
            ),
            // The seed's example.
            (
                "ls -F (List files (detailed))",
                "ls -F",
                None,
                "List files (detailed)",
                false,
            ),
        ],
        Title::parse,
    );
}

#[test]
fn shell_titles_0_14_to_0_27() {
    check(
        &[
            (
                "git status [current working directory /home/ana/proj]",
                "git status",
                Some(Current("/home/ana/proj")),
                "",
                false,
            ),
            (
                "git status [current working directory /home/ana/proj] (Show the working tree status)",
                "git status",
                Some(Current("/home/ana/proj")),
                "Show the working tree status",
                false,
            ),
            (
                "cargo test --all [in crates/core] (Run the core tests (all features))",
                "cargo test --all",
                Some(In("crates/core")),
                "Run the core tests (all features)",
                false,
            ),
        ],
        Title::parse,
    );
}

#[test]
fn shell_titles_0_28_to_0_35() {
    check(
        &[
            (
                "npm run dev [current working directory /srv/app] (Start the dev server) [background]",
                "npm run dev",
                Some(Current("/srv/app")),
                "Start the dev server",
                true,
            ),
            (
                "python -m http.server [in site] [background]",
                "python -m http.server",
                Some(In("site")),
                "",
                true,
            ),
            (
                "sleep 5 [current working directory /tmp] (Wait)",
                "sleep 5",
                Some(Current("/tmp")),
                "Wait",
                false,
            ),
        ],
        Title::parse,
    );
}

#[test]
fn shell_explanations_from_0_36() {
    let rows: &[(&str, &str, Row)] = &[
        (
            "npm test",
            "[current working directory /home/ana/proj] (Run the unit tests)",
            (
                "",
                "npm test",
                Some(Current("/home/ana/proj")),
                "Run the unit tests",
                false,
            ),
        ),
        (
            "npm run dev",
            "[in web] (Start the dev server) [background]",
            (
                "",
                "npm run dev",
                Some(In("web")),
                "Start the dev server",
                true,
            ),
        ),
        (
            "ls (x) [in y]",
            "[current working directory /w]",
            ("", "ls (x) [in y]", Some(Current("/w")), "", false),
        ),
        (
            "make",
            "[in a] [background]\n",
            ("", "make", Some(In("a")), "", true),
        ),
    ];
    for &(title, text, (_, command, dir, description, background)) in rows {
        for kind in [None, Some("execute")] {
            let t = Title::parse_for_kind(title, kind).with_explanation(text);
            assert_eq!(
                (
                    t.command(),
                    t.working_dir(),
                    t.description(),
                    t.is_background(),
                    t.inputs()
                ),
                (command, dir, description, background, None),
                "{title:?} + {text:?}"
            );
        }
    }
}

#[test]
fn mcp_explanations_give_inputs() {
    let t = Title::parse_for_kind("list_issues", Some("other"))
        .with_explanation("{\"repo\":\"a/b\",\"state\":\"open\"}");
    assert_eq!(t.command(), "list_issues");
    assert_eq!(t.inputs(), Some("{\"repo\":\"a/b\",\"state\":\"open\"}"));
    assert_eq!(t.description(), "");
    // Gemini's placeholder for long arguments is not recognized.
    let text = "[Payload omitted due to length with parameters: a, b]";
    assert_eq!(Explanation::parse(text), None);
    let t = Title::parse("list_issues").with_explanation(text);
    assert_eq!((t.command(), t.inputs()), ("list_issues", None));
}

#[test]
fn other_tools_come_back_whole() {
    let titles = [
        "src/main.rs",
        "Create src/new (copy).rs",
        "No file changes to README.md",
        "src/lib.rs: fn main() {... => fn main() -> Result<()> {...",
        "src/a.rs: f(x) => g(y)",
        "Writing to docs/guide (draft).md",
        "'TODO\\(' in *.rs within src",
        "'fn main' within ./",
        "Fetching content from: https://en.wikipedia.org/wiki/Rust_(programming_language)",
        "Will attempt to read and concatenate files using patterns: `a/**`\n (within target directory: /w ) . Excluding: none.",
        "Set 3 todo(s)",
        "\"deploy\" (?) unknown skill",
        "Searching the web for: \"rust [in] (2024)\"",
    ];
    for title in titles {
        for kind in [
            Some("read"),
            Some("edit"),
            Some("search"),
            Some("fetch"),
            Some("other"),
            Some("think"),
        ] {
            let t = Title::parse_for_kind(title, kind);
            assert_eq!(
                (
                    t.command(),
                    t.working_dir(),
                    t.description(),
                    t.is_background()
                ),
                (title, None, "", false),
                "{title:?} as {kind:?}"
            );
        }
    }
    // Without the kind the shell grammar applies, and these still match nothing.
    for title in &titles[..titles.len() - 2] {
        let t = Title::parse(title);
        assert_eq!(
            (t.command(), t.description(), t.working_dir()),
            (*title, "", None)
        );
    }
    // Grammar lookalikes from other tools genuinely match: that is why the kind matters.
    assert_eq!(
        Title::parse("\"deploy\" (?) unknown skill").description(),
        ""
    );
    assert_eq!(Title::parse("a.rs: x => f (y)").description(), "y");
    assert_eq!(
        Title::parse_for_kind("a.rs: x => f (y)", Some("edit")).description(),
        ""
    );
}

#[test]
fn inputs_in_titles() {
    let title = "Running subagent 'codebase_investigator' with inputs: { objective: find (x) }";
    let t = Title::parse(title);
    assert_eq!(t.command(), title);
    assert_eq!(t.inputs(), Some("{ objective: find (x) }"));
    let t = Title::parse_for_kind(
        "search inputs: {\"q\":\"a}b\",\"n\":{\"m\":1}}",
        Some("other"),
    );
    assert_eq!(t.inputs(), Some("{\"q\":\"a}b\",\"n\":{\"m\":1}}"));
    // A shell title ending in a description carries no inputs.
    assert_eq!(Title::parse("echo inputs: {x} (Say it)").inputs(), None);
    assert_eq!(
        Title::parse("echo inputs: {x} (Say it)").description(),
        "Say it"
    );
    assert_eq!(Title::parse("inputs: {").inputs(), None);
}

#[test]
fn adversarial_titles() {
    check(
        &[
            ("", "", None, "", false),
            ("(x)", "(x)", None, "", false),
            (" (x)", "", None, "x", false),
            ("ls ()", "ls ()", None, "", false),
            ("echo $(date)", "echo $(date)", None, "", false),
            (
                "diff <(ls a) <(ls b)",
                "diff <(ls a) <(ls b)",
                None,
                "",
                false,
            ),
            ("f(x)", "f(x)", None, "", false),
            (
                "echo $(date) (Print the date)",
                "echo $(date)",
                None,
                "Print the date",
                false,
            ),
            (
                "echo $(date) [in /tmp]",
                "echo $(date)",
                Some(In("/tmp")),
                "",
                false,
            ),
            // Unbalanced: more `)` than `(`, or more `(`.
            ("ls (a))", "ls (a))", None, "", false),
            (
                "ls [in d] (smile :))",
                "ls [in d] (smile :))",
                None,
                "",
                false,
            ),
            ("ls ((a)", "ls ((a)", None, "", false),
            ("ls ( (a)", "ls (", None, "a", false),
            ("ls (((((", "ls (((((", None, "", false),
            ("ls )", "ls )", None, "", false),
            // Commands with brackets and parentheses.
            (
                "echo \"(a)\" [x] [in d] (Say (a))",
                "echo \"(a)\" [x]",
                Some(In("d")),
                "Say (a)",
                false,
            ),
            (
                "grep ' [in ' log [in d]",
                "grep ' [in ' log",
                Some(In("d")),
                "",
                false,
            ),
            // Directories with `]`, `(`, `[` and spaces.
            ("ls [in a]b] (x)", "ls", Some(In("a]b")), "x", false),
            (
                "ls [in my dir (old)] (List)",
                "ls",
                Some(In("my dir (old)")),
                "List",
                false,
            ),
            (
                "ls [in a] (b] (List)",
                "ls",
                Some(In("a] (b")),
                "List",
                false,
            ),
            ("ls [in [x]]", "ls", Some(In("[x]")), "", false),
            (
                "ls [current working directory /a]/b (c] (d)",
                "ls",
                Some(Current("/a]/b (c")),
                "d",
                false,
            ),
            (
                "ls [in x [background]",
                "ls",
                Some(In("x [background")),
                "",
                false,
            ),
            // A description containing `[in x]` or ` [background]`.
            (
                "ls [in d] (see [in x])",
                "ls",
                Some(In("d")),
                "see [in x]",
                false,
            ),
            ("ls (see [in x])", "ls", None, "see [in x]", false),
            ("ls (go [background])", "ls", None, "go [background]", false),
            // Background needs the grammar before it.
            ("echo [background]", "echo [background]", None, "", false),
            ("(x) [background]", "(x) [background]", None, "", false),
            // Multi-line titles and non-ASCII.
            (
                "cat <<EOF\n(a)\nEOF [in d] (Write (a))",
                "cat <<EOF\n(a)\nEOF",
                Some(In("d")),
                "Write (a)",
                false,
            ),
            ("make\n(cd x)", "make\n(cd x)", None, "", false),
            ("ls\n(x)\n", "ls\n(x)\n", None, "", false),
            (
                "ls [in données] (Lister les fichiers é)",
                "ls",
                Some(In("données")),
                "Lister les fichiers é",
                false,
            ),
            ("echo 🦀 (🦀 (🦀))", "echo 🦀", None, "🦀 (🦀)", false),
            // Markers without their space or outside the end.
            ("ls[in d]", "ls[in d]", None, "", false),
            ("[in d]", "[in d]", None, "", false),
            ("ls [in d] x", "ls [in d] x", None, "", false),
            ("ls [ind]", "ls [ind]", None, "", false),
            ("ls [in ]", "ls", Some(In("")), "", false),
        ],
        Title::parse,
    );
}

#[test]
fn explanations() {
    let shell = |dir, description, background| Explanation::Shell {
        working_dir: dir,
        description,
        background,
    };
    let rows: &[(&str, Option<Explanation<'static>>)] = &[
        ("[in a]", Some(shell(In("a"), "", false))),
        ("[in a (b)]", Some(shell(In("a (b)"), "", false))),
        ("[in a] (b] (c)", Some(shell(In("a] (b"), "c", false))),
        (
            "[in a [in b]] (c [in d])",
            Some(shell(In("a [in b]"), "c [in d]", false)),
        ),
        (
            "[in x [background]",
            Some(shell(In("x [background"), "", false)),
        ),
        ("[in x] [background]", Some(shell(In("x"), "", true))),
        (
            "  [current working directory /w] (Run (it)) [background]\n",
            Some(shell(Current("/w"), "Run (it)", true)),
        ),
        ("[in a] (b))", None),
        ("[in a] ()", None),
        ("[in a] x", None),
        ("x [in a]", None),
        ("", None),
        ("[background]", None),
        ("{}", Some(Explanation::Arguments("{}"))),
        ("{", None),
    ];
    for (text, want) in rows {
        let got = Explanation::parse(text);
        assert_eq!(&got, want, "{text:?}");
    }
}

#[test]
fn tool_names_from_ids() {
    for (id, name) in [
        (
            "run_shell_command-1761234567890-1",
            Some("run_shell_command"),
        ),
        ("read_file-1761234567890-42", Some("read_file")),
        (
            "mcp_github_list-issues-1761234567890-7",
            Some("mcp_github_list-issues"),
        ),
        ("read_many_files-1700000000000-0", Some("read_many_files")),
        ("toolu_01ABC", None),
        ("call-abc-1", None),
        ("run_shell_command-1761234567890", None),
        ("", None),
    ] {
        assert_eq!(tool_name_from_id(id), name, "{id:?}");
    }
}

#[test]
fn one_mib_of_parentheses() {
    // Correctness on huge adversarial input; its time is measured by the
    // `title` bench (groups at 256 KiB / 512 KiB / 1 MiB), not by a timer.
    let mut buf = vec![0u8; 1 << 20];
    for (fill, tail) in [
        (b'(', None),
        (b')', None),
        (b'(', Some(b')')),
        (b'[', Some(b']')),
    ] {
        buf.fill(fill);
        if let Some(t) = tail {
            let last = buf.len() - 1;
            buf[last] = t;
        }
        let s = core::str::from_utf8(&buf).unwrap();
        let t = Title::parse(s);
        assert_eq!(
            (t.command().len(), t.description(), t.working_dir()),
            (s.len(), "", None)
        );
    }
    // A balanced 1 MiB description: `x ((((…))))`.
    let half = (buf.len() - 2) / 2;
    buf[..2].copy_from_slice(b"x ");
    buf[2..2 + half].fill(b'(');
    buf[2 + half..].fill(b')');
    let s = core::str::from_utf8(&buf).unwrap();
    let t = Title::parse(s);
    assert_eq!(t.command(), "x");
    assert_eq!(t.description().len(), s.len() - 4);
}
