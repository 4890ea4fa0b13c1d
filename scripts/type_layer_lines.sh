#!/usr/bin/env bash
# The type layer's size in lines (`wc -l`), as issue-style budgets count it:
# everything under src/acp (v1, v1 unstable, v2), the generators and their
# spec. Prints a Markdown table; scripts/bench_result.sh type-layer keeps it.
set -euo pipefail
cd "$(dirname "$0")/.."
lines() { cat "$@" | wc -l | tr -d ' '; }
v1_generated="src/acp/content.rs src/acp/update.rs src/acp/init.rs src/acp/session.rs src/acp/client.rs src/acp/unstable.rs src/acp/methods.rs"
all=$(find src/acp -name '*.rs' | sort)
v2=$(find src/acp/v2 -name '*.rs' | sort)
gen="scripts/gen_acp_types.py scripts/gen_acp_v2.py scripts/acp_spec.py"
total=$(( $(lines $all) + $(lines $gen) ))
echo "| part | lines |"
echo "|---|---:|"
echo "| \`src/acp\`, all files | $(lines $all) |"
echo "| of which v1 declarations (generated: the type modules, \`methods.rs\`) | $(lines $v1_generated) |"
echo "| of which \`src/acp/v2\` (generated \`types.rs\`, \`methods.rs\`; \`mod.rs\`) | $(lines $v2) |"
echo "| of which the macros (\`decl.rs\`) | $(lines src/acp/decl.rs) |"
echo "| the generators and their spec (\`gen_acp_types.py\`, \`gen_acp_v2.py\`, \`acp_spec.py\`) | $(lines $gen) |"
echo "| **the type layer** (\`src/acp\` + generators + spec) | **$total** |"
# What sits beside the type layer, built on it (not counted above): the
# client's helpers, version negotiation, v1↔v2 translation.
beside=$( (find src/client src/version.rs src/translate.rs src/translate -name '*.rs' 2>/dev/null || true) | sort)
echo "| beside it, not counted: \`src/client\` (quirks, terminal output), \`src/version.rs\` (negotiation), \`src/translate\` (v1↔v2) | $(lines $beside) |"
