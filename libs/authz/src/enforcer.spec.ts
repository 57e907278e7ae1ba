import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { BASE_RULES, DEFAULT_RULES, OPERATION_RULES } from './defaults';
import { PolicyConfigError, PolicyEnforcer, type Credentials, type RuleDefault } from './enforcer';
import { loadEnforcer, parsePolicyFile } from './policy-file';
import { parseRule, RuleSyntaxError } from './rule';
import { renderPolicyDefaults } from './sample';

const DEMO = 'demo-project-id';
const ADMIN = 'admin-project-id';
const creds = (roles: string[], over: Partial<Credentials> = {}): Credentials => ({
  roles,
  project_id: DEMO,
  user_id: 'u',
  domain_id: 'default',
  is_admin_project: false,
  system_scope: null,
  ...over,
});
const own = { project_id: DEMO };

describe('parseRule', () => {
  it.each([
    ['', { kind: 'always' }],
    ['@', { kind: 'always' }],
    ['!', { kind: 'never' }],
    ['role:Admin', { kind: 'role', role: 'admin' }],
    ['rule:cloud_admin', { kind: 'rule', name: 'cloud_admin' }],
    ['project_id:%(project_id)s', { kind: 'match', credential: 'project_id', value: { target: 'project_id' } }],
    ['is_admin_project:True', { kind: 'match', credential: 'is_admin_project', value: true }],
    ['system_scope:all', { kind: 'match', credential: 'system_scope', value: 'all' }],
    ["user_id:'u1'", { kind: 'match', credential: 'user_id', value: 'u1' }],
  ])('parses %p', (source, rule) => {
    expect(parseRule(source)).toEqual(rule);
  });

  it('gives not > and > or their oslo.policy precedence', () => {
    expect(parseRule('role:a or role:b and not role:c')).toEqual({
      kind: 'or',
      rules: [
        { kind: 'role', role: 'a' },
        { kind: 'and', rules: [{ kind: 'role', role: 'b' }, { kind: 'not', rule: { kind: 'role', role: 'c' } }] },
      ],
    });
    expect(parseRule('((role:a or role:b)) and (project_id:%(project_id)s)')).toEqual({
      kind: 'and',
      rules: [
        { kind: 'or', rules: [{ kind: 'role', role: 'a' }, { kind: 'role', role: 'b' }] },
        { kind: 'match', credential: 'project_id', value: { target: 'project_id' } },
      ],
    });
  });

  it.each([
    ['role:a or', /ends where a check was expected/],
    ['(role:a', /not closed/],
    ['role:a)', /without its/],
    ['role:a role:b', /unexpected 'role:b'/],
    ['admin', /not a check/],
    ['role:', /not a check/],
    ['tenant:x', /unknown check 'tenant'/],
    ['project_id:%(project_id)', /not a target reference/],
    ['and role:a', /'and' where a check was expected/],
  ])('refuses %p', (source, message) => {
    expect(() => parseRule(source)).toThrow(RuleSyntaxError);
    expect(() => parseRule(source)).toThrow(message);
  });
});

describe('PolicyEnforcer with the default rules', () => {
  const enforcer = PolicyEnforcer.create(DEFAULT_RULES);
  const allow = (rule: string, c: Credentials, target = own) => enforcer.enforce(rule, c, target);

  it('lets a reader read its project and nothing more', () => {
    const reader = creds(['reader']);
    expect(allow('clusters:index', reader)).toBe(true);
    expect(allow('clusters:get', reader)).toBe(true);
    expect(allow('clusters:create', reader)).toBe(false);
    expect(allow('clusters:action', reader)).toBe(false);
    expect(allow('clusters:get', reader, { project_id: 'other' })).toBe(false);
  });

  it('accepts the stronger roles without implied roles in the token', () => {
    for (const role of ['member', 'admin']) expect(allow('clusters:get', creds([role]))).toBe(true);
    expect(allow('clusters:create', creds(['admin']))).toBe(true);
    expect(allow('clusters:create', creds(['member']))).toBe(true);
  });

  it('keeps cross-project work for the cloud admin', () => {
    expect(allow('actions:replay', creds(['member']))).toBe(false);
    expect(allow('cloud_admin', creds(['admin']))).toBe(false);
    expect(allow('project_admin', creds(['admin']))).toBe(true);
    expect(allow('cloud_admin', creds(['admin'], { project_id: ADMIN, is_admin_project: true }))).toBe(true);
    expect(allow('cloud_admin', creds(['member'], { project_id: ADMIN, is_admin_project: true }))).toBe(false);
    expect(allow('cloud_admin', creds(['admin'], { project_id: null, system_scope: 'all' }))).toBe(true);
    expect(allow('cloud_admin', creds(['reader'], { project_id: null, system_scope: 'all' }))).toBe(false);
  });

  it('never matches a missing project: a system-scoped token owns no project', () => {
    const system = creds(['admin'], { project_id: null, system_scope: 'all' });
    expect(allow('clusters:create', system, { project_id: null } as never)).toBe(false);
    expect(allow('clusters:index', system, { project_id: null } as never)).toBe(true);
  });

  it('has a rule for every operation, each one a parseable check', () => {
    expect(OPERATION_RULES.length).toBeGreaterThan(50);
    for (const r of DEFAULT_RULES) expect(enforcer.has(r.name)).toBe(true);
  });

  it('throws for a rule name no default defines (a bug, not a refusal)', () => {
    expect(() => allow('clusters:frobnicate', creds(['admin']))).toThrow(/no policy rule 'clusters:frobnicate'/);
  });
});

describe('PolicyEnforcer.create', () => {
  const base: RuleDefault[] = [
    { name: 'a', check: 'role:x', description: 'a' },
    { name: 'b', check: 'rule:a', description: 'b' },
  ];

  it('lets an override replace a default, and rules that refer to it follow', () => {
    const e = PolicyEnforcer.create(base, { a: 'role:y' });
    expect(e.enforce('b', creds(['y']))).toBe(true);
    expect(e.enforce('b', creds(['x']))).toBe(false);
    expect(e.rules()).toEqual([
      { name: 'a', check: 'role:y', overridden: true },
      { name: 'b', check: 'rule:a', overridden: false },
    ]);
  });

  it.each([
    [{ nope: '@' }, 'nope', /unknown rule 'nope'/],
    [{ b: 'role:x or' }, 'b', /rule 'b' does not parse/],
    [{ b: 'rule:c' }, 'b', /rule 'b' refers to unknown rule 'c'/],
    [{ a: 'rule:b' }, 'a', /refers to itself: a -> b -> a/],
  ])('refuses %p naming the rule', (overrides, rule, message) => {
    let error: unknown;
    try {
      PolicyEnforcer.create(base, overrides);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PolicyConfigError);
    expect((error as PolicyConfigError).rule).toBe(rule);
    expect((error as Error).message).toMatch(message);
  });
});

describe('policy files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-authz-'));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('reads YAML and JSON maps of rule to check string', () => {
    expect(parsePolicyFile('"clusters:create": "role:admin"\n', 'f')).toEqual({ 'clusters:create': 'role:admin' });
    expect(parsePolicyFile('{"clusters:create": "role:admin"}', 'f')).toEqual({ 'clusters:create': 'role:admin' });
    expect(parsePolicyFile('# nothing\n', 'f')).toEqual({});
  });

  it('overrides the defaults from TRELLIS_POLICY_FILE', () => {
    const e = loadEnforcer(file('p.yaml', '"clusters:create": "role:admin"\n'));
    expect(e.enforce('clusters:create', creds(['member']), own)).toBe(false);
    expect(e.enforce('clusters:create', creds(['admin']), own)).toBe(true);
    expect(e.enforce('clusters:update', creds(['member']), own)).toBe(true);
  });

  it.each([
    ['unknown.yaml', '"clusters:frob": "@"\n', /policy file .*unknown\.yaml: unknown rule 'clusters:frob'/],
    ['broken.yaml', '"clusters:create": "role:admin or"\n', /rule 'clusters:create' does not parse/],
    ['list.yaml', '- a\n- b\n', /must be a map of rule name to rule/],
    ['number.yaml', '"clusters:create": 3\n', /rule 'clusters:create' must be a string/],
    ['bad.yaml', '"a": [\n', /not valid YAML/],
  ])('refuses %s', (name, text, message) => {
    expect(() => loadEnforcer(file(name, text))).toThrow(message);
  });

  it('refuses a file that cannot be read', () => {
    expect(() => loadEnforcer(join(dir, 'missing.yaml'))).toThrow(/missing\.yaml cannot be read/);
  });
});

describe('renderPolicyDefaults', () => {
  const text = renderPolicyDefaults();

  it('is a policy file of every default rule, each under a comment naming what it guards', () => {
    expect(parse(text)).toEqual(Object.fromEntries(DEFAULT_RULES.map((r) => [r.name, r.check])));
    expect(text).toContain('# Create a cluster.\n# POST   /v1/clusters\n"clusters:create": "rule:project_member"\n');
    expect(text).toContain(`# ${BASE_RULES[0].description}\n"cloud_admin": `);
  });

  it('loads back as a policy file unchanged', () => {
    const e = PolicyEnforcer.create(DEFAULT_RULES, parsePolicyFile(text, 'sample'));
    expect(e.rules().every((r) => r.overridden)).toBe(true);
  });
});
