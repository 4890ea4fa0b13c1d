//! Title parsing against its anchor, the seed's method: a `regex` for the
//! working-directory bracket plus a backward scan for the last balanced
//! parenthetical group. Both run in the same groups, `Throughput::Bytes`:
//!
//! - `title/typical`: real titles of every Gemini era and a few other tools;
//! - `title/<pattern>` at 256 KiB, 512 KiB and 1 MiB of adversarial input,
//!   so linear time shows as constant throughput across the three sizes.

use std::hint::black_box;

use acp_codec::title::{Title, WorkingDir};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use regex::Regex;

const TYPICAL: &[&str] = &[
    "ls -F (List files (detailed))",
    "npm run build [in packages/web] (Build the web package)",
    "git status [current working directory /home/ana/projects/acp-codec] (Show the working tree status)",
    "cargo test --all-features [current working directory /home/ana/projects/acp-codec] (Run the whole test suite)",
    "npm run dev [current working directory /srv/app] (Start the dev server) [background]",
    "python -m http.server 8080 [in site] [background]",
    "grep -rn \"TODO\" src [current working directory /home/ana/projects/acp-codec]",
    "Writing to src/title/mod.rs",
    "src/lib.rs: pub mod limits; => pub mod limits;\\npub mod title;",
    "Fetching content from: https://agentclientprotocol.com/protocol/tool-calls",
];

/// The seed's method, ported: strip ` [background]`, scan back from the end
/// for the last balanced group, then a regex finds the directory bracket.
struct Anchor {
    dir: Regex,
}

type Parts<'a> = (&'a str, Option<WorkingDir<'a>>, &'a str, bool);

impl Anchor {
    fn new() -> Self {
        Self {
            dir: Regex::new(r" \[(in|current working directory) ([^\]]*)\]$").unwrap(),
        }
    }

    fn parse<'a>(&self, title: &'a str) -> Parts<'a> {
        let (head, background) = match title.strip_suffix(" [background]") {
            Some(head) => (head, true),
            None => (title, false),
        };
        let (rest, description) = last_balanced_group(head);
        let (command, dir) = match self.dir.captures(rest) {
            Some(c) => {
                let whole = c.get(0).unwrap();
                let dir = c.get(2).unwrap().as_str();
                let dir = if &c[1] == "in" {
                    WorkingDir::In(dir)
                } else {
                    WorkingDir::Current(dir)
                };
                (&rest[..whole.start()], Some(dir))
            }
            None => (rest, None),
        };
        let background = background && (dir.is_some() || !description.is_empty());
        (command, dir, description, background)
    }
}

/// The seed's backward scan: the last balanced `(…)` at the end of `s`.
fn last_balanced_group(s: &str) -> (&str, &str) {
    if !s.ends_with(')') {
        return (s, "");
    }
    let mut depth = 0usize;
    for (i, c) in s.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    return (s[..i].trim_end(), &s[i + 1..s.len() - 1]);
                }
            }
            _ => {}
        }
    }
    (s, "")
}

fn parts<'a>(t: &Title<'a>) -> Parts<'a> {
    (
        t.command(),
        t.working_dir(),
        t.description(),
        t.is_background(),
    )
}

fn typical(c: &mut Criterion) {
    let anchor = Anchor::new();
    // The anchor is a fair one: on typical titles it gives the same parts.
    for t in TYPICAL {
        assert_eq!(anchor.parse(t), parts(&Title::parse(t)), "{t}");
    }
    let bytes: usize = TYPICAL.iter().map(|t| t.len()).sum();
    let mut g = c.benchmark_group("title/typical");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("anchor_regex_backward_scan", |b| {
        b.iter(|| {
            for t in TYPICAL {
                black_box(anchor.parse(black_box(t)));
            }
        })
    });
    g.bench_function("title_parse", |b| {
        b.iter(|| {
            for t in TYPICAL {
                black_box(Title::parse(black_box(t)));
            }
        })
    });
    g.finish();
}

/// A named generator of adversarial titles of a given size.
type Pattern = (&'static str, fn(usize) -> String);

fn adversarial(c: &mut Criterion) {
    let anchor = Anchor::new();
    let patterns: [Pattern; 4] = [
        // 1 MiB of `(`: the issue's case.
        ("open_parens", |n| "(".repeat(n)),
        // `)` only: the backward scan runs to the start, unbalanced.
        ("close_parens", |n| ")".repeat(n)),
        // ` [` repeated, then `]`: every `[` is a bracket candidate.
        ("open_brackets", |n| {
            let mut s = " [".repeat(n / 2 - 1);
            s.push_str("x]");
            s
        }),
        // `x ((((…))))`: one balanced group as long as the title.
        ("nested_group", |n| {
            let half = (n - 2) / 2;
            format!("x {}{}", "(".repeat(half), ")".repeat(half))
        }),
    ];
    for (name, make) in patterns {
        let mut g = c.benchmark_group(format!("title/{name}"));
        g.sample_size(10);
        for kib in [256usize, 512, 1024] {
            let input = make(kib << 10);
            g.throughput(Throughput::Bytes(input.len() as u64));
            g.bench_with_input(
                BenchmarkId::new("anchor_regex_backward_scan", format!("{kib}KiB")),
                &input,
                |b, s| b.iter(|| black_box(anchor.parse(black_box(s)))),
            );
            g.bench_with_input(
                BenchmarkId::new("title_parse", format!("{kib}KiB")),
                &input,
                |b, s| b.iter(|| black_box(Title::parse(black_box(s)))),
            );
        }
        g.finish();
    }
}

criterion_group!(benches, typical, adversarial);
criterion_main!(benches);
