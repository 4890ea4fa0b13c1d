#!/usr/bin/env python3
"""Generates the crate's ACP code from one spec, scripts/acp_spec.py (the
types and the method table, as data), with docs taken from the official
schemas (copies in the repo):

- the types' declarations, src/acp/{content,update,init,session,client,unstable}.rs
  (and their explicit re-exports in src/acp/mod.rs, between the
  `generated exports` markers): one block a type, `acp_struct!`,
  `acp_enum!`, `acp_tagged!` or `acp_tried!`, naming its members, their
  wire names, types and docs (and, for a tagged union, the tables its
  decoder reads when the tag is not first). The macros, hand-written in
  src/acp/decl.rs, derive the type and its code from the declaration: its
  fields, its one decoder (`Decode`; a struct's members read by key in
  `Object::members`, a union's variant by its tag), `Serialize`,
  `Deserialize`, `into_owned`, constructors. What they call is
  hand-written too: the reader (src/acp/read.rs), a member's value into
  its field (src/acp/wire.rs), a union's tag search (src/acp/tagged.rs);
- the methods, src/acp/methods.rs: `names`, the declarations of the typed
  params of requests and notifications and of the typed results, by
  method (`acp_params!`, `acp_results!`: decoding by method's name,
  `Serialize`, `Arbitrary`), and `METHODS`, one row a method;
- their proptest strategies, tests/acp_support/arb.rs;
- the tests' independent oracle, tests/oracle/mod.rs: the same types as
  plain serde derives over owned data, sharing no code with the crate;
- ACP v2 (feature `v2`), derived from the v2 schema by scripts/gen_acp_v2.py
  through the emitters here: src/acp/v2/{types,methods}.rs, its strategies
  and oracle (tests/acp_support/arb_v2.rs, tests/oracle_v2/mod.rs).

Run from the crate root: python3 scripts/gen_acp_types.py [--check] [SCHEMA_DIR]
(default: tests/fixtures/acp, the schema copies committed with the crate).
The files are written formatted with rustfmt, as `cargo fmt` formats them.

With --check nothing is written: every file is generated, formatted and
compared with the committed one; the exit status is 1 (and the differences
are printed) when any differs. CI runs it.

The schemas: `schema-crate-1.20.0.json` and `schema-crate-1.20.0.unstable.json`
are what `agent-client-protocol-schema` 1.20.0 derives (stable, and with its
`unstable` feature; emitted by scripts/schema_export). The older copies
(`schema.json`, the npm SDK 2.4.0 ones) only supply docs for what the newer
ones no longer describe.
"""
import difflib
import json
import os
import re
import subprocess
import sys

import acp_spec as spec
from acp_spec import ALIASES, ENUMS, ORDER, STRUCTS, TAGGED, TRIED

UNSTABLE_CFG = '#[cfg(feature = "unstable")]'
# The generated type modules, in the order they import each other.
MODULES = ['content', 'update', 'init', 'session', 'client', 'unstable']
PRIM = {'bool', 'u16', 'u32', 'u64', 'i64', 'f64'}
# What the spec declares for feature `unstable` (before placement moves
# some of it into lower modules).
UNSTABLE_ITEMS = {n for table in (STRUCTS, ENUMS, TAGGED, TRIED) for n, item in table.items()
                  if item['module'] == 'unstable'}


# ---------------------------------------------------------------- schema docs
class Schemas:
    """The `$defs` of the official schemas, newest first: where the docs of
    types and members come from."""

    def __init__(self, schema_dir):
        def load(name):
            with open(os.path.join(schema_dir, name)) as f:
                return json.load(f)['$defs']
        self.dir = schema_dir
        # The stable schema, then the unstable one of the same version: what
        # feature `unstable` adds; then the older copies.
        self.defs = [load('schema-crate-%s.json' % spec.SCHEMA_VERSION),
                     load('schema-crate-%s.unstable.json' % spec.SCHEMA_VERSION),
                     load('schema-npm-sdk-2.4.0.json'),
                     load('schema.json')]

    def def_doc(self, name):
        """The first paragraph of the doc of def `name`."""
        d = next((src[name] for src in self.defs if src.get(name)), {})
        return first_par(d.get('description'))

    def prop_doc(self, name, prop):
        """The first paragraph of the doc of member `prop` of def `name`, or
        of a def it is made of."""
        for src in self.defs:
            d = src.get(name) or {}
            p = (d.get('properties') or {}).get(prop)
            if p and p.get('description'):
                return first_par(p['description'])
            for sub in d.get('allOf', []) + d.get('anyOf', []) + d.get('oneOf', []):
                ref = sub.get('$ref') or (sub.get('allOf') or [{}])[0].get('$ref')
                if ref:
                    r = ref.split('/')[-1]
                    dd = self.prop_doc(r, prop) if r != name else None
                    if dd:
                        return dd
        return None


def first_par(text):
    """The first paragraph of a schema description, as one line of rustdoc."""
    if not text:
        return None
    pars = [p for p in text.strip().split('\n\n')
            if p.strip() != '**UNSTABLE**' and not p.startswith('This capability is not part of the spec yet')]
    if not pars:
        return None
    par = pars[0].replace('\n', ' ').strip()
    if par.startswith('**UNSTABLE** '):
        par = par[len('**UNSTABLE** '):]
    par = re.sub(r'\[([^\]]+)\]\([^)]+\)', r'\1', par)
    par = par.replace('[', '\\[').replace(']', '\\]')
    if not par.endswith('.'):
        par += '.'
    return par


# ---------------------------------------------------------------- reading the spec
def snake(n):
    if n == '_meta':
        return 'meta'
    if n == 'type':
        return 'kind'
    if n in ('override', 'const', 'enum'):
        return {'override': 'override_mode', 'const': 'value', 'enum': 'values'}[n]  # reserved words
    return re.sub(r'([A-Z])', lambda m: '_' + m.group(1).lower(), n)


def rust_field(rname):
    return 'r#type' if rname == 'type' else rname


def is_unstable(f):
    return f.endswith('!u')


def cfg_u(unstable, indent):
    return '%s%s\n' % (indent, UNSTABLE_CFG) if unstable else ''


def cfg_inline(unstable):
    """The feature gate of a member or variant, on its own line's start."""
    return UNSTABLE_CFG + ' ' if unstable else ''


def lit(text):
    """`text` as a Rust string literal."""
    return '"%s"' % text.replace('\\', '\\\\').replace('"', '\\"')


def variants(t):
    """The variants of a tagged union as (wire, Variant, Type, unstable)."""
    return [(v[0], v[1], v[2], len(v) > 3 and v[3] == 'u') for v in t['variants']]


def enum_values(e):
    """The values of a string enum as (wire, Variant, unstable): the variant
    is the value in CamelCase, or given (`('unknown', 'UnknownState')`:
    `Unknown` is the catch-all variant); a value ending in "!u" exists only
    with feature `unstable` (without it, it decodes as `Unknown`)."""
    out = []
    for v in e['values']:
        wire, var = v if isinstance(v, tuple) else (v, None)
        unstable = is_unstable(wire)
        wire = wire[:-2] if unstable else wire
        out.append((wire, var or ''.join(p.capitalize() for p in wire.split('_')), unstable))
    return out


def parse_field(f):
    """A member as (wireName, type, optional)."""
    if f.endswith('!u'):
        f = f[:-2]
    name, ty = f.split(':', 1)
    opt = name.endswith('?')
    name = name.rstrip('?')
    return name, ty, opt


def item_of(name):
    for table in (STRUCTS, ENUMS, TAGGED, TRIED):
        if name in table:
            return table[name]
    return None


def module_of(ty):
    """The module a generated type (or alias) is in."""
    item = item_of(ty)
    if item:
        return item['module']
    for mod, aliases in ALIASES.items():
        if any(a == ty for a, _, _ in aliases):
            return mod
    return None


def alias_target(ty):
    for aliases in ALIASES.values():
        for a, target, _ in aliases:
            if a == ty:
                return target
    return ty


# ---------------------------------------------------------------- placement
# A type of module 'unstable' that a type of another module names (through a
# member or variant that exists only with feature `unstable`) moves down
# into the lowest module that names it, gated there by the feature, so the
# modules import each other one way only (content < init < session <
# update < client < unstable); what only the new methods use stays in
# src/acp/unstable.rs.
RANK = {'content': 0, 'init': 1, 'session': 2, 'update': 3, 'client': 4, 'unstable': 5}


def names_in(name):
    """The generated types `name` refers to."""
    refs = []
    if name in STRUCTS:
        for f in STRUCTS[name]['fields']:
            refs.append(f.split(':', 1)[1].split('!')[0].strip('[]'))
    elif name in TAGGED:
        refs += [v[2] for v in TAGGED[name]['variants']]
        if TAGGED[name]['absent']:
            refs.append(TAGGED[name]['absent'][1])
    elif name in TRIED:
        refs += [v[1].strip('[]') for v in TRIED[name]['variants']]
    return [r for r in refs if item_of(r)]


def place():
    """Moves the unstable types that stable ones name down (see above), in
    the spec's items and ORDER."""
    changed = True
    while changed:
        changed = False
        for table in (STRUCTS, ENUMS, TAGGED, TRIED):
            for n, item in table.items():
                for r in names_in(n):
                    target = item_of(r)
                    if r in UNSTABLE_ITEMS and RANK[item['module']] < RANK[target['module']]:
                        target['module'] = item['module']
                        changed = True
    for mod in list(ORDER):
        for entry in list(ORDER[mod]):
            m = item_of(entry[1])['module']
            if m != mod:
                ORDER[mod].remove(entry)
                ORDER.setdefault(m, []).append(entry)


# What starts a top-level item of the generated code (after its docs); the
# macros are the oracle's (tests/oracle/leaf.rs).
KEYWORDS = ('impl', 'pub fn ', '#[derive(', 'pub type ', 'string_enum! {', 'tagged_enum! {',
            'acp_struct! {', 'acp_enum! {', 'acp_tried! {', 'acp_tagged! {')


def gate(unstable, code):
    """Top-level items of `code`, behind feature `unstable` if `unstable`."""
    if not unstable or not code:
        return code
    for kw in KEYWORDS:
        code = code.replace('\n' + kw, '\n' + UNSTABLE_CFG + '\n' + kw)
    return code


def doc_comment(text, indent=''):
    """`text` as `///` lines."""
    return ''.join('%s///%s\n' % (indent, ' ' + line if line else '') for line in text.split('\n'))


# ---------------------------------------------------------------- types (src/acp/<module>.rs)
def rust_ty(ty):
    if ty.startswith('['):
        return 'Vec<%s>' % rust_ty(ty[1:-1])
    if ty == 'str':
        return "Cow<'a, str>"
    if ty == 'raw':
        return "RawJson<'a>"
    if ty == 'id':
        return "RequestId<'a>"
    if ty == 'f64':
        return 'Number'
    if ty in PRIM:
        return ty
    return "%s<'a>" % ty


def shapes(ty):
    """The shapes (see `shape` in src/acp/tagged.rs) a member of type `ty`
    decodes from, `null` aside: all of them when it is not known."""
    ty = alias_target(ty)
    if ty.startswith('['):
        return ["b'['"]
    if ty == 'str' or ty in ENUMS:
        return ["b'\"'"]
    if ty == 'id':
        return ["b'\"'", "b'0'"]
    if ty == 'bool':
        return ["b't'"]
    if ty in PRIM:
        return ["b'0'"]
    if ty in STRUCTS or ty in TAGGED:
        return ["b'{'"]
    return ["b'{'", "b'['", "b'\"'", "b'0'", "b't'"]


def union_hints(t):
    """What tells a union's variant when its tag is not the first member:
    `guess`, (member, shape, variant) where of the variants (the tagless one
    too) whose types have a member of that name and shape, more than half
    are of the variant's type (and not all the types have it), the variant
    being the first of that type;
    `same`, (variant, other, tag) for each other variant of the same type
    as a first one."""
    firsts = {}
    same = []
    for w, v, ty, u in variants(t):
        if ty in firsts:
            same.append((firsts[ty], v, w, u or firsts[ty][1]))
        else:
            firsts[ty] = (v, u, w)
    types = [ty for _, _, ty, _ in variants(t)] + ([t['absent'][1]] if t['absent'] else [])
    has = {}
    for ty in types:
        for f in STRUCTS[ty]['fields']:
            name, fty, _ = parse_field(f)
            for sh in shapes(fty):
                has.setdefault((name, sh), []).append(ty)
    guess = []
    for (name, sh), tys in sorted(has.items()):
        ty = max(sorted(set(tys)), key=tys.count)
        # A member every type has (`_meta`) tells nothing.
        if 2 * tys.count(ty) > len(tys) and ty in firsts and set(tys) != set(types):
            v, u, w = firsts[ty]
            guess.append((name, sh, w, u))
    return guess, same


def struct_fields(docs, s):
    """The members of struct `s`: (wire, Rust field, spec type, optional,
    unstable, doc)."""
    out = []
    for f in s['fields']:
        name, ty, opt = parse_field(f)
        out.append((name, rust_field(snake(name)), ty, opt, is_unstable(f), field_doc(docs, s['name'], name, opt)))
    return out


def field_doc(docs, sname, name, opt):
    doc = docs.prop_doc(STRUCTS[sname]['docdef'], name) or docs.prop_doc(sname, name)
    if name == '_meta':
        doc = 'Extension metadata (`_meta`), kept raw.'
    if doc is None:
        doc = spec.FIELD_DOCS.get(name, 'The `%s` member.' % name)
    if opt and not doc.startswith('Extension'):
        doc = doc.rstrip('.') + ' (optional).'
    return doc


def into_owned_impl(name):
    """`IntoOwned` for a generated type, through its inherent `into_owned`."""
    return ("\nimpl IntoOwned for %s<'_> {\n    type Owned = %s<'static>;\n\n"
            "    fn into_owned(self) -> Self::Owned {\n        %s::into_owned(self)\n    }\n}\n") % (name, name, name)


def gen_struct(docs, s):
    """A struct's declaration: `acp_struct!` (src/acp/decl.rs) writes the
    struct and its code from it."""
    name = s['name']
    doc = s['doc'] or docs.def_doc(s['docdef']) or ('`%s`.' % name)
    fields = struct_fields(docs, s)
    by_hand = ': by_hand' if name in spec.HAND_WRITTEN_ARBITRARY else ''
    # `_meta`, last as in every ACP object that has it: `+ meta`.
    meta = bool(fields) and fields[-1][0] == '_meta'
    if meta:
        fields = fields[:-1]
    out = doc_comment(doc, '    ') + '    struct %s%s%s {\n' % (name, by_hand, ' + meta' if meta else '')
    for wire, rname, ty, opt, u, fdoc in fields:
        leaf = spec.MEMBER_ARBITRARY.get((name, wire))
        leaf = ' => %s' % leaf if leaf else ''
        setter = ', with_%s' % snake(wire) if opt else ''
        out += '        %s%s: %s %s = "%s"%s%s, %s;\n' % (cfg_inline(u), rname, 'opt' if opt else 'req', ty, wire,
                                                      setter, leaf, lit(fdoc))
    return out + '    }\n'


def gen_enum(docs, e):
    """A string enum's declaration: `acp_enum!` (src/acp/decl.rs)."""
    name = e['name']
    doc = e['doc'] or docs.def_doc(e['docdef']) or '`%s`.' % name
    out = doc_comment(doc, '    ') + '    enum %s {\n' % name
    for v, var, u in enum_values(e):
        out += '        %s%s = "%s",\n' % (cfg_inline(u), var, v)
    return out + '    }\n'


def gen_tagged(docs, t):
    """A tagged union's declaration: `acp_tagged!` (src/acp/decl.rs), with
    the two tables its decoder reads when the tag is not first."""
    name, tag = t['name'], t['tag']
    doc = t['doc'] or docs.def_doc(name) or '`%s`.' % name
    out = doc_comment(doc, '    ') + '    tagged %s by "%s" {\n' % (name, tag)
    for w, v, ty, u in variants(t):
        out += '        %s%s(%s) = "%s",\n' % (cfg_inline(u), v, ty, w)
    out += '    }\n'
    if t['absent']:
        out += '    absent %s(%s);\n' % t['absent']
    guess, same = union_hints(t)
    out += '    guess {\n'
    out += ''.join('        %s("%s", %s) => "%s",\n' % (cfg_inline(u), n, sh, w) for n, sh, w, u in guess)
    out += '    }\n    same {\n'
    out += ''.join('        %s%s -> %s = "%s",\n' % (cfg_inline(u), f[0], v, w) for f, v, w, u in same)
    return out + '    }\n'


def gen_tried(docs, u_):
    """A union told apart by shape: `acp_tried!` (src/acp/decl.rs)."""
    name = u_['name']
    doc = u_['doc'] or docs.def_doc(name) or '`%s`.' % name
    out = doc_comment(doc, '    ') + '    union %s {\n' % name
    for v, ty in u_['variants']:
        leaf = spec.VARIANT_ARBITRARY.get((name, v))
        out += '        %s(%s)%s,\n' % (v, ty, ' => %s' % leaf if leaf else '')
    return out + '    }\n'


# What a generated module may need, by the name its code uses: the `use`
# line of each.
TYPE_USES = [
    ('Serialize', 'serde'), ('Serializer', 'serde'), ('Deserialize', 'serde'), ('Deserializer', 'serde'),
    ('SerializeMap', 'serde::ser'),
    ('unquote', 'crate::json::unescape'),
    ('RequestId', 'super::id'),
    ('IntoOwned', 'super::raw'), ('RawJson', 'super::raw'),
    ('Fail', 'super::read'), ('Reader', 'super::read'),
    ('SalvageKind', 'super::salvage'),
    ('ConfigValue', 'super::tagged'), ('Guess', 'super::tagged'), ('read_tag', 'super::tagged'), ('Tag', 'super::tagged'),
    ('wire', 'super::wire'), ('Cx', 'super::wire'), ('Decode', 'super::wire'), ('Mode', 'super::wire'),
    ('Object', 'super::wire'), ('UnionTag', 'super::wire'),
    ('Extra', 'super'),
]


def code_only(code):
    """`code` without its comment lines and string literals (the members'
    docs and wire names), whose words name nothing."""
    code = '\n'.join(l for l in code.split('\n') if not l.strip().startswith('//'))
    return re.sub(r'"(?:[^"\\]|\\.)*"|b?\'(?:[^\'\\]|\\.)\'', '""', code)


def words_of(code):
    code = code_only(code)
    return set(re.findall(r'\b[A-Za-z_][A-Za-z0-9_]*\b', code))


def strip_declarations(code):
    """`code` without its declaration blocks (`acp_struct! { … }` and the
    like), whose words are members and values, not names to import."""
    return re.sub(r'^acp_types! \{\n.*?^\}\n', '', code, flags=re.M | re.S)


def type_imports(mod, body, ungated):
    """The `use` lines a generated module needs, from what its body names."""
    uses = []
    words = words_of(body)
    plain_words = words_of(ungated)
    code_words = words_of(strip_declarations(body))
    plain_code_words = words_of(strip_declarations(ungated))
    if 'Cow' in words:
        uses.append('use alloc::borrow::Cow;')
    if 'Vec' in words:
        uses.append('use alloc::vec::Vec;')
    uses.append('')
    if 'Number' in words:
        uses.append('use serde_json::Number;')
    find = lambda text: (set(re.findall(r"\b(\w+)<'a>", text)) | set(re.findall(r"\(\[?(\w+)\]?\)", text))
                         | set(re.findall(r"\b(?:req|opt) \[?(\w+)\]? =", text)))
    types = find(code_only(body))
    plain_types = find(code_only(ungated))
    by_path = {}
    for w, path in TYPE_USES:
        # `wire` is named as `wire::`, `SerializeMap` by its methods, the
        # others as words.
        if w == 'wire':
            used, plain = 'wire::' in body, 'wire::' in ungated
            w = 'self'
        elif w == 'SerializeMap':
            used, plain = 'serialize_map' in words, 'serialize_map' in plain_words
        elif w == 'Object':
            used, plain = '::members(' in body, '::members(' in ungated
        elif w in ('Mode', 'Cx', 'Decode', 'Reader', 'Fail', 'IntoOwned', 'RawJson', 'Serialize', 'Deserialize'):
            # Named by the code of the unions written out here, not by
            # the declarations (whose macros name their own paths).
            used, plain = w in code_words, w in plain_code_words
        else:
            used, plain = w in words, w in plain_words
        if used:
            gated = mod != 'unstable' and not plain
            by_path.setdefault((path, gated), []).append(w)
    serde = [(p, g) for p, g in sorted(by_path) if not p.startswith('super') and not p.startswith('crate')]
    for key in serde:
        uses += use_line(key[0], by_path[key], key[1])
    uses.append('')
    local = {}
    for w in sorted(types):
        m = item_of(w) and item_of(w)['module']
        if m and m != mod:
            # Gated: an unstable type, or one only gated items use.
            gated = mod == 'unstable' or w in UNSTABLE_ITEMS or w not in plain_types
            local.setdefault((m, gated), []).append(w)
    for (m, gated) in sorted(local):
        uses += use_line('super::%s' % m, local[(m, gated)], gated and mod != 'unstable')
    for key in sorted(k for k in by_path if k not in serde):
        uses += use_line(key[0], by_path[key], key[1])
    return '\n'.join(uses) + '\n'


def use_line(path, names, gated=False):
    """`use path::{names};`, behind feature `unstable` if `gated`."""
    return ([UNSTABLE_CFG] if gated else []) + ['use %s::%s;' % (path, names[0] if len(names) == 1 else '{%s}' % ', '.join(names))]


def types_module(docs, mod):
    """src/acp/<mod>.rs: the module's structs, enums, unions and aliases."""
    items = []
    ungated_items = []
    emit = {'struct': (gen_struct, STRUCTS), 'enum': (gen_enum, ENUMS), 'tagged': (gen_tagged, TAGGED), 'tried': (gen_tried, TRIED)}
    for kind, name in ORDER.get(mod, []):
        gen, table = emit[kind]
        code = gen(docs, table[name])
        gated = name in UNSTABLE_ITEMS and mod != 'unstable'
        items.append(cfg_u(gated, '    ') + code)
        if not gated:
            ungated_items.append(code)
    block = lambda items: '\nacp_types! {\n%s}\n' % ''.join(items) if items else ''
    body, ungated = block(items), block(ungated_items)
    for a, target, doc in ALIASES.get(mod, []):
        body += "\n/// %s\npub type %s<'a> = %s<'a>;\n" % (doc, a, target)
        ungated += "\n/// %s\npub type %s<'a> = %s<'a>;\n" % (doc, a, target)
    return ('//! %s\n//!\n//! Generated by `scripts/gen_acp_types.py` from its spec,\n'
            '//! `scripts/acp_spec.py`, with the docs of types and members taken from\n'
            '//! the protocol\'s schema export under `tests/fixtures/acp/`; edit the spec\n'
            '//! there, not this file.\n#![allow(clippy::doc_markdown)]\n\n%s%s') % (
                spec.MODULE_DOCS[mod], type_imports(mod, body, ungated), body)


def with_exports(mod_rs, files):
    """src/acp/mod.rs with the explicit re-exports of the generated types
    (no glob re-exports: a reader of src/acp/mod.rs sees every name and the
    file it comes from)."""
    exports = ''
    for mod in ['client', 'content', 'init', 'session', 'update', 'unstable']:
        text = files['src/acp/%s.rs' % mod]
        names = sorted(set(re.findall(r'^\s*pub (?:struct|enum|type) ([A-Za-z0-9_]+)', text, re.M))
                       | set(re.findall(r'^    (?:struct|enum|union|tagged) (\w+)', text, re.M)))
        plain = [n for n in names if n not in UNSTABLE_ITEMS]
        gated = [n for n in names if n in UNSTABLE_ITEMS]
        if plain:
            exports += 'pub use %s::{%s};\n' % (mod, ', '.join(plain))
        if gated:
            exports += '%spub use %s::{%s};\n' % (cfg_u(True, ''), mod, ', '.join(gated))
    begin, end = '// generated exports: begin\n', '// generated exports: end\n'
    a, b = mod_rs.index(begin) + len(begin), mod_rs.index(end)
    return mod_rs[:a] + exports + mod_rs[b:]


# ---------------------------------------------------------------- methods (src/acp/methods.rs)
DIRECTIONS = {spec.CLIENT_TO_AGENT: 'ClientToAgent', spec.AGENT_TO_CLIENT: 'AgentToClient', spec.EITHER: 'Both'}


def methods_of(kind):
    return [m for m in spec.METHODS if m['kind'] == kind]


def rows_named(wire):
    return [m for m in spec.METHODS if m['wire'] == wire]


def const_doc(wire):
    """The doc of a method's constant in `names`: who sends it, a
    notification, a note, unstable."""
    rows = rows_named(wire)
    if len(rows) > 1:
        what = ', '.join('a %s %s' % (m['kind'], m['direction']) for m in rows)
    else:
        m = rows[0]
        what = m['direction'] + (', notification' if m['kind'] == 'notification' else '')
        if m['note']:
            what += '; ' + m['note'][0]
    if rows[0]['unstable']:
        what += '; unstable'
    return '`%s` (%s).' % (wire, what)


def params_variant_doc(m):
    """The doc of a method's variant in `RequestParams` or
    `NotificationParams`: who sends it when that is not implied (a
    notification, a name both kinds use), a note, unstable."""
    parts = []
    if m['kind'] == 'notification' or len(rows_named(m['wire'])) > 1:
        parts.append(m['direction'])
    if m['note']:
        parts.append(m['note'][1])
    if m['unstable']:
        parts.append('unstable')
    return '`%s`%s.' % (m['wire'], ' (%s)' % '; '.join(parts) if parts else '')


def result_variant_doc(m):
    return '`%s`%s.' % (m['wire'], ' (unstable)' if m['unstable'] else '')


def cfg_m(m, indent):
    return cfg_u(m['unstable'], indent)


def gen_method_enum(name, rows, doc):
    """`RequestParams` or `NotificationParams`: its declaration,
    `acp_params!` (src/acp/decl.rs), one variant per method."""
    out = '\nacp_params! {\n' + doc_comment(doc, '    ') + '    %s {\n' % name
    for m in rows:
        out += '        %s%s(%s) = %s, %s;\n' % (cfg_inline(m['unstable']), m['variant'], m['params'], m['const'],
                                               lit(params_variant_doc(m)))
    out += '    }\n}\n'
    return out


def gen_results(rows, doc):
    """`ResponseResult`: its declaration, `acp_results!` (src/acp/decl.rs),
    one variant per request method."""
    out = '\nacp_results! {\n' + doc_comment(doc, '    ') + '    ResponseResult {\n'
    for m in rows:
        out += '        %s%s(%s) = %s, %s;\n' % (cfg_inline(m['unstable']), m['variant'], m['result'], m['const'],
                                               lit(result_variant_doc(m)))
    out += '    }\n}\n'
    return out


def methods_imports():
    """The `use` lines of src/acp/methods.rs: the params and result types,
    and what their decoding names."""
    types = {}
    for m in spec.METHODS:
        for ty in (m['params'], m['result']):
            if ty:
                types.setdefault((module_of(ty), m['unstable'] or alias_target(ty) in UNSTABLE_ITEMS), set()).add(ty)
    uses = []
    for (mod, gated) in sorted(types):
        uses += use_line('super::%s' % mod, sorted(types[(mod, gated)]), gated)
    uses += [
        'use super::method::Direction::{AgentToClient, Both, ClientToAgent};',
        'use super::method::MethodKind::{Notification, Request};',
        'use super::method::MethodInfo;',
    ]
    return '\n'.join(uses) + '\n'


def methods_module():
    """src/acp/methods.rs, from the method table."""
    out = ('//! The methods of ACP v1: their names ([`names`]), their typed params\n'
           '//! ([`RequestParams`], [`NotificationParams`]) and results\n'
           '//! ([`ResponseResult`]), and [`METHODS`], who sends what.\n//!\n'
           '//! Generated by `scripts/gen_acp_types.py` from the method table of its\n'
           '//! spec (`scripts/acp_spec.py`); edit the spec there, not this file.\n\n')
    out += methods_imports()
    out += '\n' + doc_comment(spec.NAMES_DOC) + 'pub mod names {\n    acp_names! {\n'
    seen = set()
    for m in spec.METHODS:
        if m['wire'] in seen:
            continue
        seen.add(m['wire'])
        out += '        %s%s = "%s", %s;\n' % (cfg_inline(m['unstable']), m['const'], m['wire'], lit(const_doc(m['wire'])))
    out += '    }\n}\n'
    for name, kind, doc in (('RequestParams', 'request', spec.REQUEST_PARAMS_DOC),
                            ('NotificationParams', 'notification', spec.NOTIFICATION_PARAMS_DOC)):
        out += gen_method_enum(name, methods_of(kind), doc)
    out += gen_results(methods_of('request'), spec.RESPONSE_RESULT_DOC)
    out += '\n' + doc_comment(spec.METHODS_DOC) + 'pub const METHODS: &[MethodInfo] = &[\n'
    for m in spec.METHODS:
        out += '%s    MethodInfo::row(names::%s, %s, %s, %s),\n' % (
            cfg_u(m['unstable'], '    '), m['const'], m['kind'].capitalize(), DIRECTIONS[m['direction']], 'true' if m['unstable'] else 'false')
    out += '];\n'
    return out


# ---------------------------------------------------------------- strategies (tests/acp_support/arb.rs)
def strat(ty, valid):
    if ty.startswith('['):
        return 'vec(%s, 0..3)' % strat(ty[1:-1], valid)
    if ty == 'str':
        return 'text()'
    if ty == 'raw':
        return 'raw()'
    if ty == 'id':
        return 'request_id()'
    if ty == 'bool':
        return 'any::<bool>()'
    if ty in ('u16', 'u32', 'u64'):
        return 'any::<%s>()' % ty
    if ty == 'i64':
        return 'any::<i64>()'
    if ty == 'f64':
        return 'number()'
    return 'arb_%s(valid)' % snake(ty).lstrip('_')


def arb_fn_name(ty):
    return 'arb_%s' % snake(alias_target(ty)).lstrip('_')


def dual(gen, item, has_unstable):
    """`gen(item, with_unstable)`, twice when the item has unstable parts:
    once for feature `unstable`, once without."""
    if not has_unstable:
        return gen(item, False)
    return ('\n' + UNSTABLE_CFG + gen(item, True)
            + '\n#[cfg(not(feature = "unstable"))]' + gen(item, False))


def arb_struct(s):
    return dual(arb_struct_with, s, any(is_unstable(f) for f in s['fields']))


def arb_struct_with(s, with_unstable):
    name = s['name']
    fields = [parse_field(f) for f in s['fields'] if with_unstable or not is_unstable(f)]
    fn = arb_fn_name(name)
    out = "\npub fn %s(valid: bool) -> BoxedStrategy<%s<'static>> {\n    let _ = valid;\n" % (fn, name)
    parts = []
    for fname, ty, opt in fields:
        st = spec.MEMBER_STRATEGIES.get((name, fname)) or ('meta()' if fname == '_meta' else strat(ty, True))
        if opt:
            st = 'option::of(%s)' % st
        parts.append((snake(fname), st))
    # proptest tuples go up to 12; nest in pairs of groups
    groups = [parts[i:i + 6] for i in range(0, len(parts), 6)]
    tup = '(' + ', '.join('(' + ', '.join(st for _, st in g) + ',)' for g in groups) + ',)'
    pat = '(' + ', '.join('(' + ', '.join(n if n != 'type' else 'kind' for n, _ in g) + ',)' for g in groups) + ',)'
    var = lambda n: 'kind' if n == 'type' else n
    req = [snake(f) for f, ty, opt in fields if not opt]
    sets = ''.join(' v.%s = %s;' % ('r#type' if snake(f) == 'type' else snake(f), var(snake(f))) for f, ty, opt in fields if opt)
    body = '{ let %sv = %s::new(%s);%s v }' % ('mut ' if sets else '', name, ', '.join(var(n) for n in req), sets)
    out += '    %s\n        .prop_map(|%s| %s)\n        .boxed()\n}\n' % (tup, pat, body)
    return out


def arb_enum(e):
    return dual(arb_enum_with, e, any(u for _, _, u in enum_values(e)))


def arb_enum_with(e, with_unstable):
    fn = arb_fn_name(e['name'])
    vals = ', '.join('%s::%s' % (e['name'], var) for v, var, u in enum_values(e) if with_unstable or not u)
    return ("\npub fn %s(valid: bool) -> BoxedStrategy<%s<'static>> {\n    let known = prop::sample::select(vec![%s]);\n"
            "    if valid {\n        known.boxed()\n    } else {\n        prop_oneof![4 => known, 1 => unknown_word().prop_map(|w| %s::Unknown(w.into()))].boxed()\n    }\n}\n") % (fn, e['name'], vals, e['name'])


def arb_tagged(t):
    return dual(arb_tagged_with, t, any(u for _, _, _, u in variants(t)))


def arb_tagged_with(t, with_unstable):
    fn = arb_fn_name(t['name'])
    arms = ['%s.prop_map(%s::%s)' % ('%s(valid)' % arb_fn_name(ty), t['name'], v) for w, v, ty, u in variants(t) if with_unstable or not u]
    if t['absent']:
        arms.append('%s(valid).prop_map(%s::%s)' % (arb_fn_name(t['absent'][1]), t['name'], t['absent'][0]))
    known = 'prop_oneof![%s]' % ', '.join(arms)
    return ("\npub fn %s(valid: bool) -> BoxedStrategy<%s<'static>> {\n    let known = %s;\n"
            "    if valid {\n        known.boxed()\n    } else {\n        prop_oneof![6 => known, 1 => unknown_object(\"%s\").prop_map(%s::Unknown)].boxed()\n    }\n}\n") % (fn, t['name'], known, t['tag'], t['name'])


def arb_tried(u):
    fn = arb_fn_name(u['name'])
    arms = ['%s.prop_map(%s::%s)' % (spec.VARIANT_STRATEGIES.get((u['name'], v)) or strat(ty, True), u['name'], v) for v, ty in u['variants']]
    return "\npub fn %s(valid: bool) -> BoxedStrategy<%s<'static>> {\n    prop_oneof![%s].boxed()\n}\n" % (fn, u['name'], ', '.join(arms))


def arb_methods(enum, rows, ty, doc):
    """A strategy for `enum`: the typed params (or result) of every method
    of `rows`, any one of them."""
    fn = 'arb_%s' % snake(enum).lstrip('_')
    arm = lambda m: '        %s(valid).prop_map(%s::%s).boxed(),\n' % (arb_fn_name(m[ty]), enum, m['variant'])
    stable = ''.join(arm(m) for m in rows if not m['unstable'])
    unstable = ''.join(arm(m) for m in rows if m['unstable'])
    out = ("\n/// %s\npub fn %s(valid: bool) -> BoxedStrategy<%s<'static>> {\n"
           "    #[allow(unused_mut)]\n    let mut arms: Vec<BoxedStrategy<%s<'static>>> = vec![\n%s    ];\n") % (doc, fn, enum, enum, stable)
    if unstable:
        out += '    %s\n    arms.extend([\n%s    ]);\n' % (UNSTABLE_CFG, unstable)
    out += '    proptest::strategy::Union::new(arms).boxed()\n}\n'
    return out


def strategies_module():
    """tests/acp_support/arb.rs: a strategy per generated type, and per
    method enum."""
    out = ('//! proptest strategies for every typed ACP message, generated by\n'
           '//! `scripts/gen_acp_types.py`. `valid` = only values the official schema\n'
           '//! accepts (no unknown variants or enum values).\n#![allow(dead_code, clippy::all)]\n\n'
           'use acp_codec::acp::*;\nuse proptest::collection::vec;\nuse proptest::option;\nuse proptest::prelude::*;\n\n'
           'pub use super::arb_base::*;\n')
    emit = {'struct': (arb_struct, STRUCTS), 'enum': (arb_enum, ENUMS), 'tagged': (arb_tagged, TAGGED), 'tried': (arb_tried, TRIED)}
    for mod in MODULES:
        for kind, name in ORDER.get(mod, []):
            if name in spec.HAND_WRITTEN_STRATEGIES:
                continue
            gen, table = emit[kind]
            out += gate(name in UNSTABLE_ITEMS, gen(table[name]))
    out += arb_methods('RequestParams', methods_of('request'), 'params', 'The params of any request method.')
    out += arb_methods('NotificationParams', methods_of('notification'), 'params', 'The params of any notification method.')
    out += arb_methods('ResponseResult', methods_of('request'), 'result', 'The result of any request method (`ResponseResult::method` says which).')
    return out


# ---------------------------------------------------------------- oracle (tests/oracle/mod.rs)
# The same types as plain serde derives over owned data, for the tests to
# hold the crate's decoding against: nothing here calls the crate. Members
# the struct does not hold go to a flattened map; the string enums, tagged
# and tried unions are the macros of tests/oracle/leaf.rs (hand-written,
# also independent of the crate).
def oracle_ty(ty):
    if ty.startswith('['):
        return 'Vec<%s>' % oracle_ty(ty[1:-1])
    return {'str': 'String', 'raw': 'Value', 'id': 'RequestId', 'f64': 'Number'}.get(ty, ty)


def oracle_struct(s):
    out = '\n#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]\npub struct %s {\n' % s['name']
    for f in s['fields']:
        name, ty, opt = parse_field(f)
        attrs = [] if snake(name) == name else ['rename = "%s"' % name]
        if opt:
            attrs += ['default', 'skip_serializing_if = "Option::is_none"']
        out += cfg_u(is_unstable(f), '    ')
        if attrs:
            out += '    #[serde(%s)]\n' % ', '.join(attrs)
        out += '    pub %s: %s,\n' % (rust_field(snake(name)), 'Option<%s>' % oracle_ty(ty) if opt else oracle_ty(ty))
    out += '    #[serde(flatten)]\n    pub extra: Map<String, Value>,\n}\n'
    return out


def oracle_enum(e):
    vs = ''.join('%s        %s = "%s",\n' % (cfg_u(u, '        '), var, v) for v, var, u in enum_values(e))
    return '\nstring_enum! {\n    pub enum %s {\n%s    }\n}\n' % (e['name'], vs)


def oracle_tagged(t):
    vs = ''.join('%s        %s(%s) = "%s",\n' % (cfg_u(u, '        '), v, ty, w) for w, v, ty, u in variants(t))
    absent = ' absent %s(%s)' % t['absent'] if t['absent'] else ''
    return '\ntagged_enum! {\n    pub enum %s tag "%s" {\n%s    }%s\n}\n' % (t['name'], t['tag'], vs, absent)


def oracle_tried(u):
    vs = ''.join('    %s(%s),\n' % (v, oracle_ty(ty)) for v, ty in u['variants'])
    return ('\n/// Tried in order; what fits no variant is `Unknown`.\n#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]\n'
            '#[serde(untagged)]\npub enum %s {\n%s    Unknown(Value),\n}\n') % (u['name'], vs)


def oracle_dispatch(fn, rows, ty, doc):
    """`fn(method, text)`: `text` decoded as the `ty` of `method`, encoded
    again and its `Debug` text; `None` for a method not in `rows`."""
    arms = ''.join('%s        "%s" => recode::<%s>(text),\n' % (cfg_u(m['unstable'], '        '), m['wire'], m[ty]) for m in rows)
    return ('\n/// %s\npub fn %s(method: &str, text: &str) -> Option<Result<(Value, String), serde_json::Error>> {\n'
            '    Some(match method {\n%s        _ => return None,\n    })\n}\n') % (doc, fn, arms)


def oracle_module():
    """tests/oracle/mod.rs: the oracle types, the aliases, decoding by
    method, and every member name of the spec."""
    out = ('//! The independent oracle of the ACP tests: every type of the spec as a\n'
           '//! plain `serde` derive over owned data (`String`, `serde_json::Value` for raw\n'
           '//! JSON, `serde_json::Number` for numbers kept as sent), members it does not\n'
           '//! hold in a flattened map, sharing no code with the crate\'s decoding.\n//!\n'
           '//! Generated by `scripts/gen_acp_types.py` from the same spec as the crate\'s\n'
           '//! types (`scripts/acp_spec.py`); edit the spec there, not this file. The\n'
           '//! unions\' and enums\' macros and the leaf types are in `leaf.rs`.\n'
           '#![allow(dead_code, clippy::all)]\n\n'
           'use serde::{Deserialize, Serialize};\nuse serde_json::{Map, Number, Value};\n\n'
           'mod leaf;\n\npub use leaf::{names_a_member_twice, recode, ConfigValue, RequestId};\nuse leaf::{string_enum, tagged_enum};\n')
    emit = {'struct': (oracle_struct, STRUCTS), 'enum': (oracle_enum, ENUMS), 'tagged': (oracle_tagged, TAGGED), 'tried': (oracle_tried, TRIED)}
    for mod in MODULES:
        for kind, name in ORDER.get(mod, []):
            gen, table = emit[kind]
            out += gate(name in UNSTABLE_ITEMS, gen(table[name]))
        for a, target, doc in ALIASES.get(mod, []):
            out += '\n/// %s\npub type %s = %s;\n' % (doc, a, target)
    out += oracle_dispatch('request', methods_of('request'), 'params', 'The params of request `method`, decoded: encoded again, and their `Debug` text.')
    out += oracle_dispatch('notification', methods_of('notification'), 'params', 'The params of notification `method`, decoded: encoded again, and their `Debug` text.')
    out += oracle_dispatch('result', methods_of('request'), 'result', 'The result of request `method`, decoded: encoded again, and its `Debug` text.')
    members = sorted({parse_field(f)[0] for s in STRUCTS.values() for f in s['fields']}
                     | {t['tag'] for t in TAGGED.values()})
    out += '\n/// Every member name of the spec, and every tag.\npub const MEMBERS: &[&str] = &[%s];\n' % ', '.join('"%s"' % n for n in members)
    return out


# ---------------------------------------------------------------- routing
ROUTING_COLUMNS = (
    ('session_scoped', 'session', 'is_session_scoped',
     'Whether a client-to-agent method acts on one session named by its\n`params.sessionId` (a Streamable HTTP `POST` of it carries\n`Acp-Session-Id`).'),
    ('opens', 'opens', 'opens_session', 'Whether a method\'s answer names a new session (`result.sessionId`).'),
    ('reattach', 'reattach', 'is_reattach', 'Whether a method binds an existing session to the sender\'s connection.'),
    ('read_only', 'read_only', 'read_only_allows', 'Whether a user with the `read` permission alone may send the request.'),
)


def routing_module(v2_methods):
    """`src/remote/routing.rs`: the routing columns of the method tables
    of v1 (`acp_spec.py`'s) and v2 (`v2_methods`, gen_acp_v2.py's rows),
    one `Table` each, as the predicates the remote transport and the
    router call. Wire names, not `names` constants: the unstable methods,
    and v2's, route the same with or without their types."""
    def table(name, doc, methods):
        c2a = [m for m in methods if m['direction'] in (spec.CLIENT_TO_AGENT, spec.EITHER)]
        cols = ''.join('    %s: &[%s],\n' % (field, ', '.join('"%s"' % w for w in dict.fromkeys(m['wire'] for m in c2a if m.get(key))))
                       for field, key, _, _ in ROUTING_COLUMNS)
        return '\n%spub(crate) const %s: Table = Table {\n%s};\n' % (doc_comment(doc), name, cols)
    out = ('//! Who may do what, by method: the routing columns of the method tables\n//! of ACP v1 and v2.\n//!\n'
           '//! Generated by `scripts/gen_acp_types.py` from the method table of its\n'
           '//! spec (`scripts/acp_spec.py`) and the v2 schema\'s (`scripts/gen_acp_v2.py`);\n'
           '//! edit those, not this file.\n\n'
           'use crate::version::Dialect;\n\n'
           '/// The routing columns of one protocol version\'s method table: the\n'
           '/// client-to-agent methods of each.\n'
           '#[derive(Debug)]\npub(crate) struct Table {\n')
    out += ''.join('%s    %s: &\'static [&\'static str],\n' % (doc_comment(doc, '    '), field)
                   for field, _, _, doc in ROUTING_COLUMNS)
    out += '}\n\nimpl Table {\n'
    out += '\n'.join('%s    pub(crate) fn %s(&self, method: &str) -> bool {\n        self.%s.contains(&method)\n    }\n'
                      % (doc_comment(doc, '    '), fn, field) for field, _, fn, doc in ROUTING_COLUMNS)
    out += '}\n\n/// The table of `dialect`.\npub(crate) const fn table(dialect: Dialect) -> &\'static Table {\n    match dialect {\n        Dialect::V1 => &V1,\n        Dialect::V2 => &V2,\n    }\n}\n'
    out += table('V1', 'ACP v1: the columns of the spec\'s method table.', spec.METHODS)
    out += table('V2', 'ACP v2: `session_scoped` and `opens` from the v2 schema (params, or\nthe result, with a required `sessionId`), `reattach` and `read_only` from\nv1\'s row of the same method (none for a method v1 has not).', v2_methods)
    return out


# ---------------------------------------------------------------- output
def generate(docs):
    """Every generated file, {path: text}, unformatted."""
    files = {}
    for mod in MODULES:
        files['src/acp/%s.rs' % mod] = types_module(docs, mod)
    files['src/acp/methods.rs'] = methods_module()
    files['tests/acp_support/arb.rs'] = strategies_module()
    files['tests/oracle/mod.rs'] = oracle_module()
    import gen_acp_v2  # the v2 layer (feature `v2`), derived from the v2 schema
    files.update(gen_acp_v2.generate(sys.modules[__name__], docs.dir))
    with open('src/acp/mod.rs') as f:
        files['src/acp/mod.rs'] = with_exports(f.read(), files)
    return files


def rustfmt(text):
    """`text` formatted as `cargo fmt` formats the crate (its edition); read
    from stdin, so no module file is followed."""
    return subprocess.run(['rustfmt', '--edition', '2021'], input=text, capture_output=True, text=True, check=True).stdout


def main(argv):
    check = '--check' in argv
    args = [a for a in argv if a != '--check']
    docs = Schemas(args[0] if args else 'tests/fixtures/acp')
    place()
    files = {path: rustfmt(text) for path, text in generate(docs).items()}
    if not check:
        for path, text in files.items():
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'w') as f:
                f.write(text)
        print('ok: %d files written' % len(files))
        return 0
    stale = []
    for path, new in files.items():
        old = open(path).read() if os.path.exists(path) else ''
        if new != old:
            stale.append(path)
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), path, path + ' (generated)'))
    if stale:
        print('stale generated files (run python3 scripts/gen_acp_types.py): %s' % ', '.join(stale), file=sys.stderr)
        return 1
    print('ok: %d generated files up to date' % len(files))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
