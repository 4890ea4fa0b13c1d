"""ACP v2 (feature `v2`) for gen_acp_types.py: declarations derived from the
v2 schema (tests/fixtures/acp/schema-v2-*.json), written by the generator's
emitters. `properties` make a struct; string `const`s an enum; objects told
apart by a `const` member a tagged union; references a union tried by shape;
`properties` beside a union by a `const` member (or a tagged union that is
another's variant body) one struct, its tag an enum, the branches' members
optional. Unstable-only parts are gated. A def identical to v1's type of its
name (transitively) is re-exported; `_meta`-only objects are `MetaOnly`.
Methods come from `x-method` and `x-side` (not `proxy/*`).
"""
import contextlib
import json
import os
import re

import acp_spec as spec

V2_SCHEMA = 'schema-v2-npm-sdk-2.4.0%s.json'
KINDS = (('struct', 'structs'), ('enum', 'enums'), ('tagged', 'tagged'), ('tried', 'tried'))
# What the schema cannot say: the Rust names of the tag enums of flattened
# unions, member types where the branches disagree, defs kept raw.
TAG_ENUMS = {('CreateElicitationRequest', 'mode'): 'ElicitationMode', ('CreateElicitationResponse', 'action'): 'ElicitationAction',
             ('IdleStateUpdate', 'stopReason'): 'IdleStopReason', ('DiffChange', 'operation'): 'DiffOperation',
             ('StateUpdate', 'state'): 'SessionState', ('SessionConfigOption', 'type'): 'SessionConfigKind',
             ('SetSessionConfigOptionRequest', 'type'): 'SessionConfigValueKind'}
MEMBER_TYPES = {('SetSessionConfigOptionRequest', 'value'): 'ConfigValue', ('SessionConfigOption', 'currentValue'): 'ConfigValue'}
RAW_NAMES = {'ExtRequest', 'ExtResponse', 'ExtNotification', 'ErrorData', 'ElicitationContentValue'}
# Flattened unions, whose members go with their tag: hand-written
# strategies (tests/acp_support/arb_v2_base.rs).
HAND_WRITTEN_STRATEGIES = {'CreateElicitationRequest', 'CreateElicitationResponse', 'DiffChange', 'StateUpdate',
                           'SessionConfigOption', 'SetSessionConfigOptionRequest', 'MessageMcpResponse'}
DOCS = dict(NAMES_DOC='The method names of ACP v2.',
            REQUEST_PARAMS_DOC='The typed params of a request, by method: every request of ACP v2.',
            NOTIFICATION_PARAMS_DOC='The typed params of a notification, by method.',
            RESPONSE_RESULT_DOC='The typed result of a response, by the method of the request it answers.',
            METHODS_DOC='Every method of ACP v2, in the order of [`names`]: its name, request or\nnotification, who '
                        'sends it, and whether it belongs to the unstable v2\nschema (listed only with feature `unstable`).')


def ref(o):
    return o['$ref'].split('/')[-1]


def camel(s):
    return ''.join(p[:1].upper() + p[1:] for p in re.split(r'[_\-/ ]', s) if p)


def enum_value(name, v):
    """(wire, Variant); `unknown` is `Unknown` + the enum's last word."""
    return v, camel(v) if v != 'unknown' else 'Unknown' + re.findall('[A-Z][a-z]*', name)[-1]


def options(d):
    return [o for o in d.get('anyOf') or d.get('oneOf') or [] if o.get('type') != 'null' and o.get('title') != 'none']


def tag_of(o):
    return next((w for w, p in o.get('properties', {}).items() if 'const' in p), None)


def kind(d):
    """What a def is: struct, enum, tagged, tried, or a leaf (its type)."""
    opts = options(d)
    if 'properties' in d or opts and all('properties' in o and not tag_of(o) for o in opts):
        return 'struct'
    for k, t in (('enum', ('string',)), ('i64', ('integer',)), ('id', ('integer', 'string'))):
        if opts and all(o.get('type') in t for o in opts) and not (k == 'id' and any(map(tag_of, opts))):
            return k
    if any(map(tag_of, opts)):
        return 'tagged'
    return 'leaf' if not opts or any(not set(o) - {'title', 'description'} for o in opts) or 'type' in d else 'tried'


class Derive:
    """The declarations of one v2 schema, in acp_spec.py's format."""

    def __init__(self, path):
        with open(path) as f:
            self.defs = json.load(f)['$defs']
        self.structs, self.enums, self.tagged, self.tried, self.order = {}, {}, {}, {}, []
        self.branches, self.limits = set(), {}  # flattened branches; (def, member): its bounds
        # A tagged union that is another's variant body (both tags in one
        # object) is flattened.
        self.flat = {ref(a) for d in self.defs.values() if kind(d) == 'tagged' for o in d['anyOf']
                     for a in o.get('allOf', []) if kind(self.defs[ref(a)]) == 'tagged'}
        for name, d in self.defs.items():
            k = 'struct' if name in self.flat else kind(d)
            if name not in RAW_NAMES and k in ('struct', 'enum', 'tagged', 'tried') and not proxy(d):
                getattr(self, 'of_' + k)(name, d)
        self.order = [(k, n) for k, n in self.order if n not in self.branches]

    def ty(self, p):
        if '$ref' in p:
            k = kind(self.defs[ref(p)])
            return 'raw' if ref(p) in RAW_NAMES else {'i64': 'i64', 'id': 'id'}.get(k, ref(p)) if k != 'leaf' else self.ty(self.defs[ref(p)])
        opts = [o for o in p.get('allOf') or p.get('anyOf') or [] if o.get('type') != 'null']
        if len(opts) == 1 and 'type' not in p:
            return self.ty(opts[0])
        t = p.get('type')
        t = [x for x in t if x != 'null'][0] if isinstance(t, list) else t
        if t == 'array':
            return '[%s]' % self.ty(p['items'])
        ints = {'uint16': 'u16', 'uint32': 'u32', 'uint64': 'u64'}
        return {'string': 'str', 'boolean': 'bool', 'number': 'f64', 'integer': ints.get(p.get('format'), 'i64')}.get(t, 'raw')

    def add(self, kind_, name, **item):
        getattr(self, dict(KINDS)[kind_])[name] = dict(item, module='types', name=name, doc=item.get('doc'), docdef=name)
        self.order.append((kind_, name))

    def of_enum(self, name, d):
        self.add('enum', name, values=[enum_value(name, o['const']) for o in options(d) if 'const' in o])

    def of_tagged(self, name, d):
        variants = []
        for o in options(d):
            tag = tag_of(o) or tag
            if tag_of(o):
                v = camel(o['properties'][tag]['const'])
                v += camel(tag) if v == 'Unknown' else ''
                variants.append((o['properties'][tag]['const'], v, ref(o['allOf'][0]) if o.get('allOf') else 'MetaOnly'))
        self.add('tagged', name, tag=tag, variants=variants, absent=None)

    def of_tried(self, name, d):
        variants = [(o.get('title') or camel(self.ty(o).strip('[]')), self.ty(o)) for o in options(d)]
        self.limits.update(((name, v[0]), o) for v, o in zip(variants, options(d)) if 'minItems' in o)
        self.add('tried', name, variants=variants)

    def members(self, name, d):
        """{wire: type} and the required ones, a flattened union's branches
        merged (their tag's enum declared here)."""
        props = {w: self.ty(p) for w, p in d.get('properties', {}).items()}
        self.limits.update(((name, w), p) for w, p in d.get('properties', {}).items() if w != '_meta' and (
            {'minItems', 'minLength', 'maximum', 'additionalProperties'} & set(p) or p.get('minimum', 0) > 0))
        req, seen, reqs, consts, tag = set(d.get('required', [])), {}, [], [], None
        for b in options(d):
            if 'not' in b:  # the branch of unknown tags
                continue
            refs = [ref(a) for a in b.get('allOf', [])]
            self.branches |= set(refs)
            bprops, breq = self.members(name, dict(b, anyOf=None))
            for r in refs:
                p2, r2 = self.members(r, self.defs[r])
                bprops.update(p2)
                breq |= r2
            if tag_of(b):
                tag = tag_of(b)
                consts.append(b['properties'][tag]['const'])
                bprops.pop(tag)
            for w, t in bprops.items():
                seen.setdefault(w, set()).add(t)
            reqs.append(breq)
        for w, ts in seen.items():
            props.setdefault(w, ts.pop() if len(ts) == 1 else MEMBER_TYPES.get((name, w), 'raw'))
        req |= set.intersection(*reqs) if reqs else set()
        if tag:
            if len(options(d)) < len(d.get('anyOf') or d.get('oneOf')):
                req.discard(tag)  # a `null` tag is a branch of its own
            props[tag] = enum = TAG_ENUMS[(name, tag)]
            if enum not in self.enums:
                self.add('enum', enum, values=[enum_value(enum, v) for v in consts], doc='The `%s` of a `%s`.' % (tag, name))
        return props, req

    def of_struct(self, name, d):
        props, req = self.members(name, d)
        self.add('struct', name, fields=['%s%s:%s' % (w, '' if w in req else '?', t) for w, t in props.items()])

    def methods(self):
        """(wire, side, kind, type) of every def that names a method."""
        return [(d['x-method'], d['x-side'], 'result' if n.endswith('Response') else
                 'notification' if n.endswith('Notification') else 'request', n)
                for n, d in self.defs.items() if 'x-method' in d and not proxy(d)]


def proxy(d):
    """A JSON-RPC envelope or a def of `proxy/*`: not typed."""
    return 'x-docs-ignore' in d or d.get('x-side') == 'proxy'


def merge(stable, unstable):
    """`stable`, with what only `unstable` has marked `!u` (members,
    values), `u` (variants) or `unstable` (types)."""
    for kind_, name in unstable.order:
        table = getattr(stable, dict(KINDS)[kind_])
        item = getattr(unstable, dict(KINDS)[kind_])[name]
        old = table.setdefault(name, dict(item, unstable=True))
        if old['name'] is item['name'] and old.get('unstable'):
            stable.order.append((kind_, name))
        elif kind_ == 'struct':
            have = {f.split(':')[0].rstrip('?') for f in old['fields']}
            old['fields'] += [f + '!u' for f in item['fields'] if f.split(':')[0].rstrip('?') not in have]
        elif kind_ == 'enum':
            old['values'] += [(w + '!u', v) for w, v in item['values'] if (w, v) not in old['values']]
        elif kind_ == 'tagged':
            old['variants'] += [v + ('u',) for v in item['variants'] if v[0] not in {x[0] for x in old['variants']}]
    return stable


class V2:
    """The v2 layer: declared items, re-exports of v1, `MetaOnly` aliases."""

    def __init__(self, g, schema_dir):
        stable, unstable = (Derive(os.path.join(schema_dir, V2_SCHEMA % s)) for s in ('', '.unstable'))
        self.rows = unstable.methods()
        self.unstable_methods = {(w, k) for w, _, k, _ in self.rows} - {(w, k) for w, _, k, _ in stable.methods()}
        self.derived = merge(stable, unstable)
        self.tables = [getattr(self.derived, t) for _, t in KINDS]
        self.structs, self.enums, self.tagged, self.tried = self.tables
        self.memo, self.reexports, self.aliases, self.declared = {}, [], [], []
        for kind_, name in self.derived.order:
            u = self.is_unstable(name)
            if g.item_of(g.alias_target(name)) and self.same(g, name, name):
                self.reexports.append((name, u))
            elif kind_ == 'struct' and self.structs[name]['fields'] == ['_meta?:raw']:
                self.aliases.append((name, u))
            else:
                self.declared.append((kind_, name))
        # A re-exported type is v1's declaration, and so are the v1 types it
        # names (`hidden`, re-exported too).
        todo, done, self.hidden = [n for n, _ in self.reexports] + ['MetaOnly'], set(), []
        while todo:
            n = g.alias_target(todo.pop())
            for (k, _), t, v1 in zip(KINDS, self.tables, (g.STRUCTS, g.ENUMS, g.TAGGED, g.TRIED)):
                if n in v1 and n not in done:
                    done.add(n)
                    self.hidden += [(k, n)] if n not in t and n != 'MetaOnly' else []
                    t[n] = dict(v1[n], module='types', unstable=t[n].get('unstable') if n in t else n in g.UNSTABLE_ITEMS)
                    todo += g.names_in(n)
        # `_meta` last (`+ meta`); a member or variant of an alias is `MetaOnly`.
        meta = lambda m: 'MetaOnly' if m.group(2) in dict(self.aliases) else m.group(2)
        for kind_, n in self.declared:
            item = self.item(n)
            if kind_ == 'struct':
                item['fields'] = [re.sub(r'(:\[?)(\w+)', lambda m: m.group(1) + meta(m), f)
                                  for f in sorted(item['fields'], key=lambda f: f == '_meta?:raw')]
            if kind_ == 'tagged':
                item['variants'] = [v[:2] + (meta(re.match('()(.*)', v[2])),) + v[3:] for v in item['variants']]

    def item(self, name):
        return next((t[name] for t in self.tables if name in t), {})

    def is_unstable(self, name):
        return bool(self.item(name).get('unstable'))

    def same(self, g, a, b):
        """Whether v2's `a` is v1's `b` (a cycle assumed so)."""
        b = g.alias_target(b)
        if (a, b) not in self.memo:
            self.memo[(a, b)] = True
            self.memo[(a, b)] = self.compare(g, a, b)
        return self.memo[(a, b)]

    def same_ty(self, g, a, b):
        if a.startswith('[') or b.startswith('['):
            return a[:1] == b[:1] == '[' and self.same_ty(g, a[1:-1], b[1:-1])
        if a in g.PRIM | {'str', 'raw', 'id', 'ConfigValue', 'MetaOnly'}:
            return a == b
        return bool(g.item_of(g.alias_target(b))) and self.same(g, a, b)

    def compare(self, g, a, b):
        if self.is_unstable(a) != (b in g.UNSTABLE_ITEMS):
            return False
        if a in self.structs and b in g.STRUCTS:
            fa, fb = ({g.parse_field(f)[0]: (g.is_unstable(f),) + g.parse_field(f)[1:] for f in t[n]['fields']}
                      for t, n in ((self.structs, a), (g.STRUCTS, b)))
            return fa.keys() == fb.keys() and all(fa[w][0::2] == fb[w][0::2] and self.same_ty(g, fa[w][1], fb[w][1]) for w in fa)
        if a in self.enums and b in g.ENUMS:
            return sorted(v[0::2] for v in g.enum_values(self.enums[a])) == sorted(v[0::2] for v in g.enum_values(g.ENUMS[b]))
        if a in self.tagged and b in g.TAGGED:
            va, vb = sorted(g.variants(self.tagged[a])), sorted(g.variants(g.TAGGED[b]))
            return (self.tagged[a]['tag'] == g.TAGGED[b]['tag'] and not g.TAGGED[b]['absent']
                    and [v[0::3] for v in va] == [v[0::3] for v in vb] and all(self.same_ty(g, x[2], y[2]) for x, y in zip(va, vb)))
        if a in self.tried and b in g.TRIED:
            ta, tb = [t for _, t in self.tried[a]['variants']], [t for _, t in g.TRIED[b]['variants']]
            return len(ta) == len(tb) and all(self.same_ty(g, x, y) for x, y in zip(ta, tb))
        return False

    def methods(self):
        """The method table, as acp_spec.py's `METHODS` rows."""
        sides = {'agent': spec.CLIENT_TO_AGENT, 'client': spec.AGENT_TO_CLIENT, 'protocol': spec.EITHER}
        results = {w: t for w, _, k, t in self.rows if k == 'result'}
        out = [dict(wire=w, const=re.sub('[^A-Z0-9]+', '_', w.lstrip('$/').upper()), variant=re.sub('(Request|Notification)$', '', t),
                    params=t, result=results.get(w) if k == 'request' else None, direction=sides[side], kind=k,
                    unstable=(w, k) in self.unstable_methods, note=None) for w, side, k, t in self.rows if k != 'result']
        return sorted(out, key=lambda m: (m['kind'] != 'request', m['direction'] != spec.CLIENT_TO_AGENT))

    def routing(self):
        """The method table with acp_spec.py's routing columns: `session`
        when the params, `opens` when the result, has a required
        `sessionId`; `reattach` and `read_only` as v1's row of the same
        method and kind has them (none for a method v1 has not)."""
        def names_session(t):
            return any(f.split(':')[0] == 'sessionId' for f in self.structs.get(t or '', {}).get('fields', []))
        v1 = {(m['wire'], m['kind']): m for m in spec.METHODS}
        return [dict(m, session='sessionId' if names_session(m['params']) else None,
                     opens=m['kind'] == 'request' and names_session(m['result']),
                     reattach=v1.get((m['wire'], m['kind']), {}).get('reattach', False),
                     read_only=v1.get((m['wire'], m['kind']), {}).get('read_only', False))
                for m in self.methods()]


@contextlib.contextmanager
def swapped(*changes):
    """Each (module, {name: value}) set while the emitters run."""
    saved = [(m, k, getattr(m, k)) for m, values in changes for k in values]
    for m, values in changes:
        for k, v in values.items():
            setattr(m, k, v)
    try:
        yield
    finally:
        for m, k, v in saved:
            setattr(m, k, v)


def strategy(g, structs, key, p):
    """The strategy of a member whose schema bounds its values."""
    ty = next(g.parse_field(f)[1] for f in structs[key[0]]['fields'] if g.parse_field(f)[0] == key[1])
    if 'additionalProperties' in p:
        return 'property_schemas()' if key[0] == 'ElicitationSchema' else 'env_map()'
    if 'minItems' in p:
        return 'vec(%s, 1..3)' % g.strat(ty[1:-1], True)
    return 'text1()' if 'minLength' in p else 'unit()' if ty == 'f64' else '%d%s..' % (p['minimum'], ty)


def types_module(g, v2, docs):
    """src/acp/v2/types.rs: the re-exports, the aliases, the declarations."""
    out = ('//! The ACP v2 types (feature `v2`): the v2 schema of the TypeScript SDK 2.4.0, with\n//! feature `unstable` '
           'its unstable additions. What v2 keeps as v1 had it is\n//! v1\'s type, re-exported.\n//!\n'
           '//! Generated by `scripts/gen_acp_types.py` (`scripts/gen_acp_v2.py`) from the v2\n'
           '//! schema under `tests/fixtures/acp/`, types, members and docs alike;\n'
           '//! edit the generator, not this file.\n#![allow(clippy::doc_markdown)]\n\n')
    gated = dict(v2.reexports, **{n: n in g.UNSTABLE_ITEMS for _, n in v2.hidden})
    for gate in (False, True):
        names = sorted(n for n in list(gated) + ['ConfigValue', 'MetaOnly'] if gated.get(n, False) == gate)
        out += '%spub use crate::acp::{%s};\n' % (g.cfg_u(gate, ''), ', '.join(names))
    for a, u in v2.aliases:
        doc = g.first_par(docs.defs[0].get(a, docs.defs[1].get(a, {})).get('description'))
        out += '%s%s%spub type %s<\'a> = MetaOnly<\'a>;\n' % ('' if v2.aliases.index((a, u)) else '\n', g.doc_comment(doc), g.cfg_u(u, ''), a)
    emit = {'struct': (g.gen_struct, g.STRUCTS), 'enum': (g.gen_enum, g.ENUMS), 'tagged': (g.gen_tagged, g.TAGGED),
            'tried': (g.gen_tried, g.TRIED)}
    items = [g.cfg_u(v2.is_unstable(n), '    ') + emit[k][0](docs, emit[k][1][n]) for k, n in v2.declared]
    # Blocks of 40 items (`acp_types!` recurses once an item), packed.
    return out + ''.join('\nacp_types! {\n%s}\n' % ''.join(items[i:i + 40]) for i in range(0, len(items), 40))


def generate(g, docs_dir):
    """The v2 files, {path: text}, unformatted."""
    v2 = V2(g, docs_dir)
    docs = g.Schemas.__new__(g.Schemas)
    docs.defs = []
    for suffix in ('', '.unstable'):
        with open(os.path.join(docs_dir, V2_SCHEMA % suffix)) as f:
            docs.defs.append(json.load(f)['$defs'])
    v1 = {n for n, _ in v2.reexports} | {n for _, n in v2.hidden}
    lists = {k: 'vec(%s, 1..3)' % g.strat(next(t for v, t in v2.tried[k[0]]['variants'] if v == k[1])[1:-1], True)
             for k in v2.derived.limits if k[0] in v2.tried}
    # v1's strategy for a member v2 keeps (a v2 type of v1's name with
    # that member, of the same type: `MessageMcpRequest.params`, an object
    # or null).
    typed = lambda table, t, m: [g.parse_field(f)[1] for f in table.get(t, {}).get('fields', []) if g.parse_field(f)[0] == m]
    kept = lambda t, m: t in v1 or (typed(v2.structs, t, m) or 0) == typed(spec.STRUCTS, t, m)
    members = dict([(k, v) for k, v in spec.MEMBER_STRATEGIES.items() if kept(*k)] + [
        (k, strategy(g, v2.structs, k, p)) for k, p in v2.derived.limits.items() if k[0] in v2.structs])
    every = [(k, n) for k, n in v2.derived.order if n not in dict(v2.aliases)] + v2.hidden + [('struct', 'MetaOnly')]
    tables = dict(STRUCTS=v2.structs, ENUMS=v2.enums, TAGGED=v2.tagged, TRIED=v2.tried, MODULES=['types'],
                  UNSTABLE_ITEMS={n for t in v2.tables for n, i in t.items() if i.get('unstable')},
                  ALIASES={'aliases': [(a, 'MetaOnly', '') for a, _ in v2.aliases]})
    per_type = dict(DOCS, HAND_WRITTEN_ARBITRARY=set(), MEMBER_ARBITRARY={}, VARIANT_STRATEGIES=lists, MEMBER_STRATEGIES=members,
                    VARIANT_ARBITRARY={('SessionConfigSelectOptions', 'Grouped'): 'nonempty'},
                    HAND_WRITTEN_STRATEGIES=HAND_WRITTEN_STRATEGIES, METHODS=v2.methods())
    with swapped((g, dict(tables, ORDER={'types': v2.declared})), (spec, per_type)):
        methods = g.methods_module().replace('ACP v1', 'ACP v2').replace('use super::method::', 'use crate::acp::method::')
        methods = re.sub(r'(#\[cfg\(feature = "unstable"\)\]\n)?use super::types::\{[^}]*\};\n', '', methods, count=1)
        methods = re.sub(r'(#\[cfg\(feature = "unstable"\)\]\n)?use super::types::\{[^}]*\};', 'use super::types::*;', methods)
        methods = methods.replace('method table of its\n//! spec (`scripts/acp_spec.py`); edit the spec there',
                                  '`x-method` and\n//! `x-side` of the v2 schema\'s defs; edit the generator')
        files = {'src/acp/v2/types.rs': types_module(g, v2, docs), 'src/acp/v2/methods.rs': methods}
    files['src/remote/routing.rs'] = g.routing_module(v2.routing())
    with swapped((g, dict(tables, ORDER={'types': every})), (spec, per_type)):
        arb = g.strategies_module().replace('use acp_codec::acp::*;', 'use acp_codec::acp::v2::*;')
        files['tests/acp_support/arb_v2.rs'] = arb.replace('super::arb_base::*', 'super::arb_v2_base::*')
    aliases = {'types': [(a, 'MetaOnly', 'Params or result with `_meta` only.') for a, _ in v2.aliases]}
    with swapped((g, dict(tables, ORDER={'types': every}, ALIASES=aliases)), (spec, per_type)):
        oracle = g.oracle_module().replace('(`scripts/acp_spec.py`)', '(the v2 schema)').replace('ACP tests', 'ACP v2 tests').replace('edit the spec there', 'edit the generator')
        files['tests/oracle_v2/mod.rs'] = oracle.replace('mod leaf;', '#[path = "../oracle/leaf.rs"]\nmod leaf;')
    return files
