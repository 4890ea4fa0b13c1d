//! Properties of the title parser: format-then-parse round trips for every
//! Gemini era (with the hard cases: brackets and parentheses in commands and
//! directories, `[in x]` in descriptions, substitutions, newlines,
//! non-ASCII), and, on arbitrary strings, the fuzz target's invariants (no
//! panic, slices of the input, exact re-display, agreement with a naive
//! oracle of the documented rule).

use acp_codec::title::{Explanation, Title, WorkingDir};
use proptest::prelude::*;
use proptest::sample::select;

use crate::checks::title as check;

use check::{assert_slices, Parts};

const CMD: &[&str] = &[
    "a",
    "ls",
    " ",
    "(",
    ")",
    "[",
    "]",
    "$(",
    "<(",
    "\n",
    "é",
    "🦀",
    " [in ",
    " [in x]",
    " [current working directory ",
    " [background]",
    "-",
    "\"",
    "x)",
    " (",
    " ()",
    "f(x)",
    "inputs: {",
    "}",
    "\r",
];
const DIR: &[&str] = &[
    "a",
    "/",
    " ",
    "(",
    ")",
    "[",
    "]",
    "] (",
    "é",
    "x y",
    ".",
    " [background",
    "[in",
    "in ",
    ")]",
    "\t",
    " [in ",
    "[current working directory ",
];
const DESC: &[&str] = &[
    "a",
    " ",
    "[in x]",
    "[",
    "]",
    " [background]",
    "$",
    "é",
    "🦀",
    "in ",
    ":",
    "[current working directory /]",
    "}",
];

fn concat(parts: Vec<&str>) -> String {
    parts.concat()
}

fn frags(alphabet: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(select(alphabet), 0..max).prop_map(concat)
}

/// Text whose parentheses are balanced, from `DESC` fragments and groups.
fn balanced() -> impl Strategy<Value = String> {
    frags(DESC, 4).prop_recursive(3, 24, 4, |inner| {
        prop::collection::vec(
            prop_oneof![inner.clone(), inner.prop_map(|s| format!("({s})"))],
            0..4,
        )
        .prop_map(|v| v.concat())
    })
}

/// A description Gemini could write: balanced, non-empty, newline-free (it
/// replaces newlines with spaces).
fn description() -> impl Strategy<Value = String> {
    balanced().prop_filter("non-empty", |s| !s.is_empty())
}

/// A directory not ending with ` [background` (the one ambiguity of
/// explanations; titles also need [`no_marker`]).
fn directory() -> impl Strategy<Value = String> {
    frags(DIR, 6).prop_filter("no [background end", |d| !d.ends_with(" [background"))
}

/// In a title, the bracket is the last marker: none may follow it.
fn no_marker(d: &str) -> bool {
    let spaced = format!(" {d}");
    !spaced.contains(" [in ") && !spaced.contains(" [current working directory ")
}

#[derive(Debug, Clone)]
struct Call {
    era: u8,
    command: String,
    dir: Option<(bool, String)>,
    description: Option<String>,
    background: bool,
}

fn call() -> impl Strategy<Value = Call> {
    (
        0u8..4,
        frags(CMD, 8),
        prop::option::of((any::<bool>(), directory())),
        prop::option::of(description()),
        any::<bool>(),
    )
        .prop_map(|(era, command, dir, description, background)| {
            let dir = match era {
                // Up to 0.13: `[in DIR]` only, and only when given.
                0 => dir.map(|(_, d)| (true, d)),
                // 0.14 on: a bracket always.
                _ => Some(dir.unwrap_or((false, "/home/u/p".into()))),
            };
            Call {
                era,
                command,
                dir,
                description,
                background: background && era >= 2,
            }
        })
        .prop_filter("directories of titles hold no marker", |c| {
            c.era == 3 || c.dir.as_ref().is_none_or(|(_, d)| no_marker(d))
        })
        .prop_filter("pre-0.14 titles without a bracket", |c| {
            // Without a bracket the command must not end like one (nor, with
            // no description either, like a description).
            c.dir.is_some()
                || !(c.command.ends_with(']')
                    || c.description.is_none() && c.command.ends_with(')'))
        })
}

/// What Gemini appends to the command: ` [in DIR] (DESC) [background]`.
fn suffix(c: &Call) -> String {
    let mut s = String::new();
    if let Some((is_in, d)) = &c.dir {
        let marker = if *is_in {
            "[in "
        } else {
            "[current working directory "
        };
        s.push_str(&format!(" {marker}{d}]"));
    }
    if let Some(e) = &c.description {
        s.push_str(&format!(" ({e})"));
    }
    if c.background {
        s.push_str(" [background]");
    }
    s
}

fn expected(c: &Call) -> (Option<WorkingDir<'_>>, &str, bool) {
    let dir = c.dir.as_ref().map(|(is_in, d)| {
        if *is_in {
            WorkingDir::In(d)
        } else {
            WorkingDir::Current(d)
        }
    });
    (dir, c.description.as_deref().unwrap_or(""), c.background)
}

fn parts<'a>(t: &Title<'a>) -> Parts<'a> {
    (
        t.command(),
        t.working_dir(),
        t.description(),
        t.is_background(),
    )
}

/// Strings rich in the grammar's tokens.
fn tricky() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![select(CMD), select(DIR), select(DESC), Just(")"), Just("(")],
        0..16,
    )
    .prop_map(concat)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn format_then_parse_gives_the_parts_back(c in call()) {
        let (dir, desc, bg) = expected(&c);
        let t = if c.era == 3 {
            // 0.36+: the title is the command, the rest is the explanation.
            let text = suffix(&c)[1..].to_string();
            let t = Title::parse(&c.command).with_explanation(&text);
            assert_slices(&t, &[&c.command, &text]);
            prop_assert_eq!(parts(&t), (c.command.as_str(), dir, desc, bg));
            prop_assert_eq!(Explanation::parse(&text).map(|e| e.to_string()), Some(text.clone()));
            return Ok(());
        } else {
            format!("{}{}", c.command, suffix(&c))
        };
        let parsed = Title::parse(&t);
        prop_assert_eq!(parts(&parsed), (c.command.as_str(), dir, desc, bg), "title {:?}", t);
        prop_assert_eq!(Title::parse_for_kind(&t, Some("execute")), parsed);
        prop_assert_eq!(parsed.to_string(), t);
    }

    #[test]
    fn arbitrary_strings(s in any::<String>(), x in any::<String>()) {
        check_any(&s, &x)?;
    }

    #[test]
    fn tricky_strings(s in tricky(), x in tricky()) {
        check_any(&s, &x)?;
        let x = format!("[in {x}");
        check_any(&s, &x)?;
    }
}

fn check_any(s: &str, x: &str) -> Result<(), TestCaseError> {
    // The fuzz target's invariants, with its naive oracle of the rule.
    for kind in [None, Some("execute"), Some("read")] {
        check::check_strs(s, kind, Some(x));
    }
    prop_assert_eq!(parts(&Title::parse(s)), check::oracle(s));
    Ok(())
}
