"""ACP v2 (feature `v2`), for scripts/gen_acp_types.py: the declarations
derived from the v2 schema itself (tests/fixtures/acp/schema-v2-*.json,
the TypeScript SDK 2.4.0's `schema/v2`), written by the generator's own
emitters into src/acp/v2/{types,methods}.rs, and their proptest strategies
into tests/acp_support/arb_v2.rs.

From each `$defs` entry: an object is a struct (its `properties`,
`required`, descriptions); `anyOf` string `const`s an enum; `anyOf`
objects told apart by a `const` member a tagged union; `anyOf` of
references a union tried by shape; an object with `properties` and a
union by a `const` member beside them (`mode`, `action`, `operation`, ...)
one struct, the tag an enum and the branches' members optional, as v1's
`CreateElicitationRequest`; string and integer defs are their type,
`{}` raw JSON. What only the unstable v2 schema has is behind feature
`unstable`. A def identical to the v1 type of its name (same members,
wire names and member types, transitively) is that type, re-exported; an
object with `_meta` only is `MetaOnly`. The methods come from each def's
`x-method` and `x-side` (not `proxy/*`, as in v1).
"""
import json
import os
import re

V2_SCHEMA = 'schema-v2-npm-sdk-2.4.0%s.json'
# What the schema cannot say: the names of the tag enums of flattened
# unions, member types where the branches disagree.
TAG_ENUMS = {('CreateElicitationRequest', 'mode'): 'ElicitationMode',
             ('CreateElicitationResponse', 'action'): 'ElicitationAction',
             ('IdleStateUpdate', 'stopReason'): 'IdleStopReason',
             ('DiffChange', 'operation'): 'DiffOperation', ('StateUpdate', 'state'): 'SessionState',
             ('SessionConfigOption', 'type'): 'SessionConfigKind',
             ('SetSessionConfigOptionRequest', 'type'): 'SessionConfigValueKind'}
MEMBER_TYPES = {('SetSessionConfigOptionRequest', 'value'): 'ConfigValue',
                ('SessionConfigOption', 'currentValue'): 'ConfigValue'}
# Flattened unions: their strategies are hand-written (the branches'
# members go together), in tests/acp_support/arb_v2_base.rs.
HAND_WRITTEN_STRATEGIES = {'CreateElicitationRequest', 'CreateElicitationResponse', 'DiffChange', 'StateUpdate',
                           'SessionConfigOption', 'SetSessionConfigOptionRequest', 'MessageMcpResponse'}
RAW_NAMES = {'ExtRequest', 'ExtResponse', 'ExtNotification', 'ErrorData', 'ElicitationContentValue'}
MODULE_DOC = ('The ACP v2 types (feature `v2`): the v2 schema of the TypeScript SDK 2.4.0, with\n'
              '//! feature `unstable` its unstable additions. What v2 keeps as v1 had it is\n'
              '//! v1\'s type, re-exported.')


def proxy(d):
    """Whether a def is a JSON-RPC envelope or of `proxy/*` (not typed)."""
    return 'x-docs-ignore' in d or d.get('x-side') == 'proxy'


def camel(s):
    return ''.join(p[:1].upper() + p[1:] for p in re.split(r'[_\-/ ]', s) if p)


def enum_value(name, v):
    """An enum value as (wire, Variant): `unknown` is `Unknown` and the last
    word of the enum's name (`Unknown` is the catch-all)."""
    return v, camel(v) if v != 'unknown' else 'Unknown' + re.findall('[A-Z][a-z]*', name)[-1]


def non_null(opts):
    return [o for o in opts if o.get('type') != 'null' and o.get('title') != 'none']


def tagged_by(o):
    """The member of branch `o` that tells it (a `const`), or None."""
    return next((w for w, p in o.get('properties', {}).items() if 'const' in p), None)


def kind(d):
    """What a def is: struct, enum, tagged, tried, raw or a leaf type."""
    opts = non_null(d.get('anyOf') or d.get('oneOf') or [])
    if 'properties' in d or opts and all('properties' in o and not tagged_by(o) for o in opts):
        return 'struct'
    if opts and all(o.get('type') == 'string' for o in opts):
        return 'enum'
    if opts and all(o.get('type') == 'integer' for o in opts):
        return 'i64'
    if any(tagged_by(o) for o in opts):
        return 'tagged'
    if opts and all(o.get('type') in ('integer', 'string') for o in opts):
        return 'id'
    if not opts or any(not (set(o) - {'title', 'description'}) for o in opts) or 'type' in d:
        return 'leaf'
    return 'tried'


class Derive:
    """The v2 declarations of one schema, in the spec's format (see
    acp_spec.py)."""

    def __init__(self, path):
        with open(path) as f:
            self.defs = json.load(f)['$defs']
        self.structs, self.enums, self.tagged, self.tried, self.order = {}, {}, {}, {}, []
        self.branches = set()  # defs only read as a flattened union's branch
        self.limits = {}  # (def, member): the member's schema, when it bounds its values
        # A tagged union that is the body of another's variant (`state_update`:
        # both tags in one object) is flattened too.
        self.flat = {a['$ref'].split('/')[-1] for d in self.defs.values() if kind(d) == 'tagged'
                     for o in d['anyOf'] for a in o.get('allOf', [])
                     if kind(self.defs[a['$ref'].split('/')[-1]]) == 'tagged'}
        for name, d in self.defs.items():
            k = 'struct' if name in self.flat else kind(d)
            if name in RAW_NAMES or k not in ('struct', 'enum', 'tagged', 'tried') or proxy(d):
                continue
            getattr(self, 'of_' + k)(name, d)
        self.order = [(k, n) for k, n in self.order if n not in self.branches]

    def ty(self, p):
        if '$ref' in p:
            r = p['$ref'].split('/')[-1]
            k = kind(self.defs[r])
            if r in RAW_NAMES:
                return 'raw'
            return {'leaf': None, 'i64': 'i64', 'id': 'id'}.get(k, r) or self.ty(self.defs[r])
        opts = non_null(p.get('allOf') or p.get('anyOf') or [])
        if len(opts) == 1 and 'type' not in p:
            return self.ty(opts[0])
        t = p.get('type')
        t = [x for x in t if x != 'null'][0] if isinstance(t, list) else t
        if t == 'array':
            return '[%s]' % self.ty(p['items'])
        return {'string': 'str', 'boolean': 'bool', 'number': 'f64',
                'integer': {'uint16': 'u16', 'uint32': 'u32', 'uint64': 'u64'}.get(p.get('format'), 'i64')}.get(t, 'raw')

    def add(self, table, kind_, name, item):
        item.update(module='v2', name=name, doc=None, docdef=name)
        table[name] = item
        self.order.append((kind_, name))

    def of_enum(self, name, d):
        values = [o['const'] for o in non_null(d.get('anyOf') or d.get('oneOf')) if 'const' in o]
        self.add(self.enums, 'enum', name, dict(values=[enum_value(name, v) for v in values]))

    def of_tagged(self, name, d):
        variants, tag = [], None
        for o in non_null(d['anyOf']):
            for t, p in o.get('properties', {}).items():
                if 'const' in p:
                    tag = t
                    ref = o['allOf'][0]['$ref'].split('/')[-1] if o.get('allOf') else 'MetaOnly'
                    v = camel(p['const'])
                    variants.append((p['const'], v + camel(t) if v == 'Unknown' else v, ref))
        self.add(self.tagged, 'tagged', name, dict(tag=tag, variants=variants, absent=None))

    def of_tried(self, name, d):
        variants = []
        for o in non_null(d['anyOf']):
            ty = self.ty(o)
            variants.append((o.get('title') or camel(ty.strip('[]')), ty))
            if 'minItems' in o:
                self.limits[(name, variants[-1][0])] = o
        self.add(self.tried, 'tried', name, dict(variants=variants))

    def members(self, name, d):
        """{wire: type}, the required ones and the tag of a flattened union
        (its enum declared here)."""
        props = {w: self.ty(p) for w, p in d.get('properties', {}).items()}
        self.limits.update(((name, w), p) for w, p in d.get('properties', {}).items()
                           if w != '_meta' and ({'minItems', 'minLength', 'maximum', 'additionalProperties'} & set(p)
                                                or p.get('minimum', 0) > 0))
        req = set(d.get('required', []))
        branches = non_null(d.get('anyOf') or d.get('oneOf') or [])
        if not branches:
            return props, req
        seen, reqs, consts, tag = {}, [], [], None
        for b in branches:
            if 'not' in b:  # the fallback branch: an unknown tag
                continue
            refs = [a['$ref'].split('/')[-1] for a in b.get('allOf', [])]
            self.branches |= set(refs)
            ref = [self.defs[r] for r in refs]
            bprops, breq = self.members(name, dict(b, anyOf=None, oneOf=b.get('oneOf')))
            for rn, r in zip(refs, ref):
                p2, r2 = self.members(rn, r)
                bprops.update(p2)
                breq |= r2
            for w, p in b.get('properties', {}).items():
                if 'const' in p:
                    tag = w
                    consts.append(p['const'])
                    bprops.pop(w)
            for w, t in bprops.items():
                seen.setdefault(w, set()).add(t)
            reqs.append(breq)
        for w, ts in seen.items():
            props.setdefault(w, ts.pop() if len(ts) == 1 else MEMBER_TYPES.get((name, w), 'raw'))
        req |= set.intersection(*reqs) if reqs else set()
        if len(branches) < len(d.get('anyOf') or d.get('oneOf')):
            req.discard(tag)  # a `null` tag is a branch of its own
        if tag:
            enum = TAG_ENUMS[(name, tag)]
            props[tag] = enum
            if enum not in self.enums:
                self.add(self.enums, 'enum', enum, dict(values=[enum_value(enum, v) for v in consts]))
                self.enums[enum]['doc'] = 'The `%s` of a `%s`.' % (tag, name)
        return props, req

    def of_struct(self, name, d):
        props, req = self.members(name, d)
        fields = ['%s%s:%s' % (w, '' if w in req else '?', t) for w, t in props.items()]
        self.add(self.structs, 'struct', name, dict(fields=fields))

    def methods(self):
        """The method rows: (wire, side, kind, type) of every def naming one."""
        rows = []
        for name, d in self.defs.items():
            if 'x-method' in d and not proxy(d):
                k = 'result' if name.endswith('Response') else 'notification' if name.endswith('Notification') else 'request'
                rows.append((d['x-method'], d['x-side'], k, name))
        return rows


def merge(stable, unstable):
    """The stable derivation, with what only the unstable schema has marked
    (`!u` members and values, `u` variants, `unstable` types)."""
    for kind_, name in unstable.order:
        table = getattr(stable, {'struct': 'structs', 'enum': 'enums', 'tagged': 'tagged', 'tried': 'tried'}[kind_])
        item = getattr(unstable, {'struct': 'structs', 'enum': 'enums', 'tagged': 'tagged', 'tried': 'tried'}[kind_])[name]
        if name not in table:
            item['unstable'] = True
            table[name] = item
            stable.order.append((kind_, name))
            continue
        old = table[name]
        if kind_ == 'struct':
            have = {f.split(':')[0].rstrip('?') for f in old['fields']}
            old['fields'] += [f + '!u' for f in item['fields'] if f.split(':')[0].rstrip('?') not in have]
        elif kind_ == 'enum':
            old['values'] += [(w + '!u', v) for w, v in item['values'] if (w, v) not in old['values']]
        elif kind_ == 'tagged':
            have = {v[0] for v in old['variants']}
            old['variants'] += [v + ('u',) for v in item['variants'] if v[0] not in have]
    return stable


class Same:
    """Whether a v2 type is the v1 type of its name: same members, wire
    names, member types, transitively (a cycle is assumed the same)."""

    def __init__(self, g, v2):
        self.g, self.v2, self.memo = g, v2, {}

    def ty(self, a, b):
        if a.startswith('[') or b.startswith('['):
            return a[:1] == b[:1] == '[' and self.ty(a[1:-1], b[1:-1])
        if a == b and (a in self.g.PRIM or a in ('str', 'raw', 'id', 'ConfigValue', 'MetaOnly')):
            return True
        return bool(self.g.item_of(self.g.alias_target(b))) and self.named(a, b)

    def named(self, a, b):
        b = self.g.alias_target(b)
        if (a, b) not in self.memo:
            self.memo[(a, b)] = True
            self.memo[(a, b)] = self.compare(a, b)
        return self.memo[(a, b)]

    def compare(self, a, b):
        g, v2 = self.g, self.v2
        if bool(v2.item(a).get('unstable')) != (b in g.UNSTABLE_ITEMS):
            return False
        if a in v2.structs and b in g.STRUCTS:
            fa = {g.parse_field(f)[0]: (f, g.parse_field(f)) for f in v2.structs[a]['fields']}
            fb = {g.parse_field(f)[0]: (f, g.parse_field(f)) for f in g.STRUCTS[b]['fields']}
            return fa.keys() == fb.keys() and all(
                g.is_unstable(fa[w][0]) == g.is_unstable(fb[w][0]) and fa[w][1][2] == fb[w][1][2]
                and self.ty(fa[w][1][1], fb[w][1][1]) for w in fa)
        if a in v2.enums and b in g.ENUMS:
            return sorted((w, u) for w, _, u in g.enum_values(v2.enums[a])) == sorted(
                (w, u) for w, _, u in g.enum_values(g.ENUMS[b]))
        if a in v2.tagged and b in g.TAGGED:
            va, vb = g.variants(v2.tagged[a]), g.variants(g.TAGGED[b])
            return (v2.tagged[a]['tag'] == g.TAGGED[b]['tag'] and not g.TAGGED[b]['absent']
                    and sorted((w, u) for w, _, _, u in va) == sorted((w, u) for w, _, _, u in vb)
                    and all(self.ty(x[2], y[2]) for x, y in zip(sorted(va), sorted(vb))))
        if a in v2.tried and b in g.TRIED:
            ta, tb = [t for _, t in v2.tried[a]['variants']], [t for _, t in g.TRIED[b]['variants']]
            return len(ta) == len(tb) and all(self.ty(x, y) for x, y in zip(ta, tb))
        return False


class V2:
    """The v2 layer: its declared items, re-exports and `MetaOnly` aliases."""

    def __init__(self, g, schema_dir):
        stable, unstable = (Derive(os.path.join(schema_dir, V2_SCHEMA % s)) for s in ('', '.unstable'))
        self.rows = unstable.methods()
        self.unstable_methods = {(w, k) for w, _, k, _ in self.rows} - {(w, k) for w, _, k, _ in stable.methods()}
        d = merge(stable, unstable)
        self.derived, self.g = d, g
        self.structs, self.enums, self.tagged, self.tried = d.structs, d.enums, d.tagged, d.tried
        same = Same(g, self)
        self.reexports, self.aliases, self.declared = [], [], []
        for kind_, name in d.order:
            item = self.item(name)
            if g.item_of(g.alias_target(name)) and same.named(name, name):
                self.reexports.append((name, bool(item.get('unstable'))))
            elif kind_ == 'struct' and item['fields'] == ['_meta?:raw']:
                self.aliases.append((name, bool(item.get('unstable'))))
            else:
                self.declared.append((kind_, name))
        # A re-exported type is v1's declaration (and so are the v1 types it
        # names); a member or variant of a `MetaOnly` alias is `MetaOnly`.
        todo, done, self.hidden = [n for n, _ in self.reexports] + ['MetaOnly'], set(), []
        while todo:
            n = g.alias_target(todo.pop())
            for k, t, v1 in (('struct', self.structs, g.STRUCTS), ('enum', self.enums, g.ENUMS),
                             ('tagged', self.tagged, g.TAGGED), ('tried', self.tried, g.TRIED)):
                if n in v1 and n not in done:
                    done.add(n)
                    if n not in t and n != 'MetaOnly':
                        self.hidden.append((k, n))
                    t[n] = dict(v1[n], unstable=t[n].get('unstable') if n in t else n in g.UNSTABLE_ITEMS)
                    todo += g.names_in(n)
        meta = {a for a, _ in self.aliases}
        for kind_, n in self.declared:
            item = self.item(n)
            if kind_ == 'struct':  # `_meta` last (`+ meta`)
                item['fields'].sort(key=lambda f: f == '_meta?:raw')
                item['fields'] = [re.sub(r'(:\[?)(\w+)', lambda m: m.group(1) + ('MetaOnly' if m.group(2) in meta else m.group(2)), f)
                                  for f in item['fields']]
            if kind_ == 'tagged':
                item['variants'] = [v[:2] + ('MetaOnly' if v[2] in meta else v[2],) + v[3:] for v in item['variants']]

    def item(self, name):
        for t in (self.structs, self.enums, self.tagged, self.tried):
            if name in t:
                return t[name]
        return {}

    def is_unstable(self, name):
        return bool(self.item(name).get('unstable'))


class Tables:
    """The generator's tables (and the spec's per-type ones) set to the v2
    items while its emitters run, then restored."""

    def __init__(self, g, v2):
        import acp_spec as spec
        self.saved = []
        unstable = {n for t in (v2.structs, v2.enums, v2.tagged, v2.tried) for n, i in t.items() if i.get('unstable')}
        self.swap(g, STRUCTS=v2.structs, ENUMS=v2.enums, TAGGED=v2.tagged, TRIED=v2.tried, UNSTABLE_ITEMS=unstable,
                  ALIASES={'aliases': [(a, 'MetaOnly', '') for a, _ in v2.aliases]})
        v1 = {n for n, _ in v2.reexports} | {n for _, n in v2.hidden}  # declared by v1
        lists = {k: 'vec(%s, 1..3)' % g.strat(t[1:-1], True) for k, (v, t) in
                 ((k, next(x for x in v2.tried[k[0]]['variants'] if x[0] == k[1])) for k in v2.derived.limits if k[0] in v2.tried)}
        self.swap(spec, HAND_WRITTEN_ARBITRARY=set(), MEMBER_ARBITRARY={}, VARIANT_STRATEGIES=lists,
                  VARIANT_ARBITRARY={('SessionConfigSelectOptions', 'Grouped'): 'nonempty'},
                  MEMBER_STRATEGIES=dict([(k, v) for k, v in spec.MEMBER_STRATEGIES.items() if k[0] in v1] + [
                      (k, strategy(g, v2.structs, k, p)) for k, p in v2.derived.limits.items() if k[0] in v2.structs]),
                  HAND_WRITTEN_STRATEGIES=HAND_WRITTEN_STRATEGIES, METHODS=v2.methods(),
                  NAMES_DOC='The method names of ACP v2.', METHODS_DOC=METHODS_DOC,
                  REQUEST_PARAMS_DOC='The typed params of a request, by method: every request of ACP v2.',
                  NOTIFICATION_PARAMS_DOC='The typed params of a notification, by method.',
                  RESPONSE_RESULT_DOC='The typed result of a response, by the method of the request it answers.')

    def swap(self, module, **values):
        for k, v in values.items():
            self.saved.append((module, k, getattr(module, k)))
            setattr(module, k, v)

    def __enter__(self):
        return self

    def __exit__(self, *_):
        for module, k, v in reversed(self.saved):
            setattr(module, k, v)


def strategy(g, structs, key, p):
    """The strategy of a member whose schema bounds its values."""
    ty = next(g.parse_field(f)[1] for f in structs[key[0]]['fields'] if g.parse_field(f)[0] == key[1])
    if 'additionalProperties' in p:
        return 'property_schemas()' if key[0] == 'ElicitationSchema' else 'env_map()'
    if 'minItems' in p:
        return 'vec(%s, 1..3)' % g.strat(ty[1:-1], True)
    if 'minLength' in p:
        return 'text1()'
    return 'unit()' if ty == 'f64' else '%d%s..' % (p['minimum'], ty)


METHODS_DOC = '''Every method of ACP v2, in the order of [`names`]: its name, request or
notification, who sends it, and whether it belongs to the unstable v2
schema (listed only with feature `unstable`).'''


def methods(self):
    """The method table, as acp_spec.py's `METHODS` rows."""
    import acp_spec as spec
    sides = {'agent': spec.CLIENT_TO_AGENT, 'client': spec.AGENT_TO_CLIENT, 'protocol': spec.EITHER}
    results = {w: t for w, _, k, t in self.rows if k == 'result'}
    out = []
    for w, side, k, t in self.rows:
        if k == 'result':
            continue
        out.append(dict(wire=w, const=re.sub('[^A-Z0-9]+', '_', w.lstrip('$/').upper()),
                        variant=re.sub('(Request|Notification)$', '', t), params=t, result=results.get(w) if k == 'request' else None,
                        direction=sides[side], kind=k, unstable=(w, k) in self.unstable_methods, note=None))
    kinds = {'request': 0, 'notification': 1}
    return sorted(out, key=lambda m: (kinds[m['kind']], m['direction'] != spec.CLIENT_TO_AGENT))


V2.methods = methods


def uses(names, gated):
    out = ''
    for gate in (False, True):
        ns = sorted(n for n in names if gated(n) == gate)
        if ns:
            out += '%spub use crate::acp::{%s};\n' % ('#[cfg(feature = "unstable")]\n' if gate else '', ', '.join(ns))
    return out


def types_module(g, v2, docs):
    """src/acp/v2/types.rs: the re-exports, the `MetaOnly` aliases and the
    declarations."""
    out = ('//! %s\n//!\n//! Generated by `scripts/gen_acp_types.py` (`scripts/gen_acp_v2.py`) from the v2\n'
           '//! schema under `tests/fixtures/acp/`, types, members and docs alike;\n'
           '//! edit the generator, not this file.\n#![allow(clippy::doc_markdown)]\n\n') % MODULE_DOC
    hidden = {n: n in g.UNSTABLE_ITEMS for _, n in v2.hidden}  # v1 types they name
    out += uses([n for n, _ in v2.reexports] + list(hidden) + ['ConfigValue', 'MetaOnly'],
                lambda n: dict(v2.reexports).get(n, hidden.get(n, False)))
    for a, u in v2.aliases:
        doc = g.first_par(docs.defs[0].get(a, docs.defs[1].get(a, {})).get('description')) or '`%s`.' % a
        out += '\n%s%spub type %s<\'a> = MetaOnly<\'a>;\n' % (g.doc_comment(doc), g.cfg_u(u, ''), a)
    emit = {'struct': (g.gen_struct, g.STRUCTS), 'enum': (g.gen_enum, g.ENUMS), 'tagged': (g.gen_tagged, g.TAGGED),
            'tried': (g.gen_tried, g.TRIED)}
    items = [g.cfg_u(v2.is_unstable(n), '    ') + emit[k][0](docs, emit[k][1][n]) for k, n in v2.declared]
    # Blocks of 40 items: `acp_types!` recurses once an item.
    return out + ''.join('\nacp_types! {\n%s}\n' % '\n'.join(items[i:i + 40]) for i in range(0, len(items), 40))


def methods_module(g, v2):
    """src/acp/v2/methods.rs: the generator's method module, for v2."""
    text = g.methods_module().replace('The methods of ACP v1', 'The methods of ACP v2')
    text = text.replace('scripts/gen_acp_types.py` from the method table of its\n//! spec (`scripts/acp_spec.py`)',
                        'scripts/gen_acp_types.py` from the `x-method` and\n//! `x-side` of the v2 schema\'s defs')
    text = text.replace('edit the spec there', 'edit the generator')
    return text.replace('use super::method::', 'use crate::acp::method::')


def strategies_module(g):
    """tests/acp_support/arb_v2.rs: the v2 types' proptest strategies."""
    text = g.strategies_module().replace('use acp_codec::acp::*;', 'use acp_codec::acp::v2::*;')
    return text.replace('pub use super::arb_base::*;', 'pub use super::arb_v2_base::*;')


def generate(g, docs_dir):
    """The v2 files, {path: text}, unformatted."""
    v2 = V2(g, docs_dir)
    docs = g.Schemas.__new__(g.Schemas)
    docs.defs = []
    for suffix in ('', '.unstable'):
        with open(os.path.join(docs_dir, V2_SCHEMA % suffix)) as f:
            docs.defs.append(json.load(f)['$defs'])
    for item in (v2.item(n) for t in (v2.structs, v2.enums, v2.tagged, v2.tried) for n in t):
        item['module'] = 'types'
    with Tables(g, v2):
        aliases = dict(v2.aliases)
        every = [(k, n) for k, n in v2.derived.order if n not in aliases] + v2.hidden + [('struct', 'MetaOnly')]
        saved = g.ORDER, g.MODULES
        g.MODULES = ['types']
        try:
            g.ORDER = {'types': v2.declared}
            files = {'src/acp/v2/types.rs': types_module(g, v2, docs), 'src/acp/v2/methods.rs': methods_module(g, v2)}
            g.ORDER = {'types': every}
            files['tests/acp_support/arb_v2.rs'] = strategies_module(g)
            return files
        finally:
            g.ORDER, g.MODULES = saved
