//! The title parser allocates nothing: every entry point runs under a
//! counting global allocator (counted per thread) and must leave the count
//! at zero, on typical titles and on 1 MiB of adversarial input.
//!
//! The crate forbids `unsafe` in every target, so the counting allocator
//! comes from the `allocation-counter` dev-dependency (a `#[global_allocator]`
//! that counts per thread).

use acp_codec::title::{tool_name_from_id, Explanation, Title};

fn allocations_in(f: impl FnOnce()) -> u64 {
    allocation_counter::measure(f).count_total
}

const TITLES: &[&str] = &[
    "ls -F (List files (detailed))",
    "npm run build [in packages/web] (Build the web package)",
    "git status [current working directory /home/ana/proj] (Show the working tree status)",
    "npm run dev [current working directory /srv/app] (Start the dev server) [background]",
    "ls [in a]b] (see [in x])",
    "echo $(date)",
    "src/lib.rs: fn main() {... => fn main() -> Result<()> {...",
    "Writing to docs/guide.md",
    "Running subagent 'x' with inputs: { q: why (now) }",
    "(x)",
    "",
];

const EXPLANATIONS: &[&str] = &[
    "[current working directory /home/ana/proj] (Run the unit tests)",
    "[in web] (Start the dev server) [background]",
    "{\"repo\":\"a/b\"}",
    "[Payload omitted due to length with parameters: a, b]",
];

#[test]
fn parsing_allocates_nothing() {
    let big: Vec<String> = ["(", ")", "[", " [in ", "inputs: {"]
        .iter()
        .map(|p| {
            let mut s = p.repeat((1 << 20) / p.len());
            s.push_str(") [background]");
            s
        })
        .collect();
    let n = allocations_in(|| {
        let mut seen = 0usize;
        for title in TITLES.iter().copied().chain(big.iter().map(String::as_str)) {
            for kind in [None, Some("execute"), Some("edit")] {
                let t = Title::parse_for_kind(title, kind);
                seen += t.command().len() + t.description().len();
                for text in EXPLANATIONS {
                    let t = t.with_explanation(text);
                    seen += t.inputs().map_or(0, str::len);
                    seen += usize::from(Explanation::parse(text).is_some());
                }
            }
            seen += tool_name_from_id(title).map_or(0, str::len);
        }
        std::hint::black_box(seen);
    });
    assert_eq!(n, 0, "the title parser allocated {n} times");
}

#[test]
fn the_counter_counts() {
    let n = allocations_in(|| {
        std::hint::black_box(String::from("x").repeat(3));
    });
    assert!(n > 0);
}
