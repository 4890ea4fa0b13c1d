//! Properties of the title parser: format-then-parse round trips for every
//! Gemini era (with the hard cases: brackets and parentheses in commands and
//! directories, `[in x]` in descriptions, substitutions, newlines,
//! non-ASCII), agreement with a naive oracle of the documented rule, and, on
//! arbitrary strings, no panic, slices of the input and exact re-display.

use acp_codec::title::{Explanation, Title, WorkingDir};
use proptest::prelude::*;
use proptest::sample::select;

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

fn within(outer: &str, inner: &str) -> bool {
    let (o, i) = (outer.as_ptr() as usize, inner.as_ptr() as usize);
    i >= o && i + inner.len() <= o + outer.len()
}

fn assert_slices(t: &Title<'_>, sources: &[&str]) {
    let mut parts = vec![t.as_str(), t.command(), t.description()];
    parts.extend(t.working_dir().map(WorkingDir::path));
    parts.extend(t.inputs());
    for p in parts {
        assert!(
            sources.iter().any(|s| within(s, p)),
            "{p:?} not within {sources:?}"
        );
    }
}

// ---- A naive oracle of the documented rule (quadratic, std string ops). ----

fn is_balanced(s: &str) -> bool {
    let mut depth = 0i64;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

fn oracle_description(s: &str) -> Option<(&str, &str)> {
    if !s.ends_with(')') {
        return None;
    }
    // The `(` balancing the final `)` is the rightmost one whose group is balanced.
    let open = s
        .char_indices()
        .filter(|&(i, c)| c == '(' && is_balanced(&s[i..]))
        .map(|(i, _)| i)
        .last()?;
    let desc = &s[open + 1..s.len() - 1];
    (s[..open].ends_with(' ') && !desc.is_empty()).then(|| (&s[..open - 1], desc))
}

fn oracle_dir(s: &str) -> Option<(&str, WorkingDir<'_>)> {
    if !s.ends_with(']') {
        return None;
    }
    let i = s.rfind(" [in ");
    let c = s.rfind(" [current working directory ");
    let body = &s[..s.len() - 1];
    match (i, c) {
        (Some(i), c) if c.is_none_or(|c| i > c) => Some((&s[..i], WorkingDir::In(&body[i + 5..]))),
        (_, Some(c)) => Some((&s[..c], WorkingDir::Current(&body[c + 28..]))),
        _ => None,
    }
}

type Parts<'a> = (&'a str, Option<WorkingDir<'a>>, &'a str, bool);

fn oracle_details(s: &str) -> Option<Parts<'_>> {
    let (rest, desc) = oracle_description(s).unwrap_or((s, ""));
    match oracle_dir(rest) {
        Some((cmd, dir)) => Some((cmd, Some(dir), desc, false)),
        None if !desc.is_empty() => Some((rest, None, desc, false)),
        None => None,
    }
}

fn oracle(t: &str) -> Parts<'_> {
    if let Some(head) = t.strip_suffix(" [background]") {
        if let Some((c, d, e, _)) = oracle_details(head) {
            return (c, d, e, true);
        }
    }
    oracle_details(t).unwrap_or((t, None, "", false))
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
    let t = Title::parse(s);
    assert_slices(&t, &[s]);
    prop_assert_eq!(parts(&t), oracle(s), "title {:?}", s);
    prop_assert_eq!(t.to_string(), s);
    let p = Title::plain(s);
    assert_slices(&p, &[s]);
    prop_assert_eq!(p.command(), s);
    let w = t.with_explanation(x);
    assert_slices(&w, &[s, x]);
    match Explanation::parse(x) {
        Some(e) => {
            prop_assert_eq!(e.to_string(), x.trim());
            prop_assert_eq!(w.command(), s);
        }
        None => prop_assert_eq!(w, t),
    }
    Ok(())
}
