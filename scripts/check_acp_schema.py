#!/usr/bin/env python3
"""Validates messages the encoder produced against the official ACP schemas.

Usage: check_acp_schema.py [--unstable | --v2] SAMPLES.ndjson [SCHEMA_DIR]

Each sample line is {"def": NAME or null, "part": "params"|"result"|null,
"message": {...}}. Every message must validate against the root schema and
its params/result against #/$defs/NAME, in the schema the crate's types are
generated from: what `agent-client-protocol-schema` 1.20.0 derives
(schema-crate-1.20.0.json). Needs `jsonschema` (pip install jsonschema).
Exits non-zero on the first failure.

With --v2 the samples are ACP v2 messages, checked against the v2 schema
(schema-v2-npm-sdk-2.4.0.json, with --unstable its unstable one); a sample
may name its `method` instead of its def: the def is then the one the
schema marks with that `x-method` (its params, or its result).

With --unstable (samples of a build with feature `unstable`, whose
strategies also generate the unstable additions anywhere) every message is
checked against the same version's unstable schema
(schema-crate-1.20.0.unstable.json).
"""
import json
import os
import sys

import jsonschema

SCHEMA_VERSION = '1.20.0'


def validators(path):
    schema = json.load(open(path))
    root = jsonschema.Draft202012Validator(schema)
    cache = {}

    def sub(name):
        if name not in cache:
            s = {k: v for k, v in schema.items() if k not in ('anyOf', 'title')}
            s['$ref'] = '#/$defs/' + name
            cache[name] = jsonschema.Draft202012Validator(s)
        return cache[name]
    return schema, root, sub


def by_method(schema, method, part, msg):
    """The def of the params or result of `method` (`x-method`), if any."""
    if not method:
        return None
    suffix = 'Response' if part == 'result' else 'Request' if 'id' in msg else 'Notification'
    return next((n for n, d in schema['$defs'].items() if d.get('x-method') == method and n.endswith(suffix)), None)


def main():
    args = sys.argv[1:]
    unstable = '--unstable' in args
    v2 = '--v2' in args
    args = [a for a in args if a not in ('--unstable', '--v2')]
    samples = args[0]
    here = os.path.dirname(os.path.abspath(__file__))
    schema_dir = args[1] if len(args) > 1 else os.path.join(here, '..', 'tests', 'fixtures', 'acp')
    name = ('schema-v2-npm-sdk-2.4.0%s.json' if v2 else 'schema-crate-' + SCHEMA_VERSION + '%s.json') % (
        '.unstable' if unstable else '')
    targets = [(name, validators(os.path.join(schema_dir, name)))]
    n = 0
    defs_seen = set()
    for line in open(samples):
        sample = json.loads(line)
        msg = sample['message']
        text = json.dumps(msg, separators=(',', ':'))
        for label, (schema, root, sub) in targets:
            errors = list(root.iter_errors(msg))
            if errors:
                sys.exit('%s: message does not validate: %s\n%s' % (label, errors[0].message[:300], text[:2000]))
            name = sample.get('def') or by_method(schema, sample.get('method'), sample.get('part'), msg)
            if name and name in schema['$defs']:
                part = msg[sample['part']]
                errors = sorted(sub(name).iter_errors(part), key=lambda e: e.path)
                if errors:
                    sys.exit('%s: %s does not validate: %s at %s\n%s' % (
                        label, name, errors[0].message[:300], list(errors[0].absolute_path), text[:2000]))
                defs_seen.add(name)
        n += 1
    print('%d messages valid against the ACP schemas (%d definitions checked)' % (n, len(defs_seen)))


main()
