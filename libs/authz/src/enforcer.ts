import { parseRule, referencedRules, RuleSyntaxError, type Literal, type Rule } from './rule';

/** What a rule knows about the caller (oslo.policy's credentials). */
export interface Credentials {
  roles: readonly string[];
  /** null for a token without a project (system scope) */
  project_id: string | null;
  user_id: string | null;
  domain_id: string | null;
  /** the token's project is the cloud's admin project (TRELLIS_ADMIN_PROJECT) */
  is_admin_project: boolean;
  /** `all` for a system-scoped token, else null */
  system_scope: string | null;
}

/** What a rule's `%(name)s` refers to: the object acted on (its project). */
export type Target = Readonly<Record<string, string | null | undefined>>;

/** A rule in code: its name, its default check string, what it guards (for the sample file and docs). */
export interface RuleDefault {
  name: string;
  check: string;
  description: string;
  /** the API calls it guards; none for a base rule other rules refer to */
  operations?: readonly { method: string; path: string }[];
}

/** A policy that cannot be used: the process must not start with it. Names the rule. */
export class PolicyConfigError extends Error {
  constructor(
    readonly rule: string | null,
    message: string,
  ) {
    super(message);
    this.name = 'PolicyConfigError';
  }
}

export interface EffectiveRule {
  name: string;
  check: string;
  /** the check string came from the policy file */
  overridden: boolean;
}

/**
 * oslo.policy's Enforcer, reduced to what Trellis needs: the defaults in code, each replaceable by
 * the operator's policy file. Everything is parsed and cross-checked when it is built (every rule
 * parses, every `rule:NAME` exists, no rule refers to itself), so a request never meets a broken rule.
 */
export class PolicyEnforcer {
  private constructor(
    private readonly parsed: ReadonlyMap<string, Rule>,
    private readonly effective: readonly EffectiveRule[],
  ) {}

  static create(defaults: readonly RuleDefault[], overrides: Readonly<Record<string, string>> = {}, source = 'the policy file'): PolicyEnforcer {
    const known = new Map<string, RuleDefault>();
    for (const d of defaults) {
      if (known.has(d.name)) throw new PolicyConfigError(d.name, `rule '${d.name}' is defined twice in the defaults`);
      known.set(d.name, d);
    }
    for (const name of Object.keys(overrides)) {
      if (!known.has(name)) throw new PolicyConfigError(name, `${source}: unknown rule '${name}' (see \`trellis policy-defaults\` for the rules)`);
    }
    const parsed = new Map<string, Rule>();
    const effective: EffectiveRule[] = [];
    for (const d of defaults) {
      const overridden = Object.prototype.hasOwnProperty.call(overrides, d.name);
      const check = overridden ? overrides[d.name] : d.check;
      try {
        parsed.set(d.name, parseRule(check));
      } catch (e) {
        if (!(e instanceof RuleSyntaxError)) throw e;
        const where = overridden ? `${source}: rule '${d.name}'` : `default rule '${d.name}'`;
        throw new PolicyConfigError(d.name, `${where} does not parse: ${e.message} (in "${check}")`);
      }
      effective.push({ name: d.name, check, overridden });
    }
    for (const [name, rule] of parsed) {
      for (const ref of referencedRules(rule)) {
        if (!parsed.has(ref)) throw new PolicyConfigError(name, `rule '${name}' refers to unknown rule '${ref}'`);
      }
    }
    checkNoCycle(parsed);
    return new PolicyEnforcer(parsed, effective);
  }

  has(name: string): boolean {
    return this.parsed.has(name);
  }

  /** Every rule with the check string in force. */
  rules(): readonly EffectiveRule[] {
    return this.effective;
  }

  /** Whether the rule lets this caller act on this target. An unknown rule name is a bug: it throws. */
  enforce(name: string, credentials: Credentials, target: Target = {}): boolean {
    const rule = this.parsed.get(name);
    if (!rule) throw new Error(`no policy rule '${name}'`);
    return this.evaluate(rule, credentials, target);
  }

  private evaluate(rule: Rule, c: Credentials, target: Target): boolean {
    switch (rule.kind) {
      case 'always':
        return true;
      case 'never':
        return false;
      case 'role':
        return c.roles.some((r) => r.toLowerCase() === rule.role);
      case 'rule':
        return this.enforce(rule.name, c, target);
      case 'match':
        return matches(c[rule.credential], typeof rule.value === 'object' ? target[rule.value.target] : rule.value);
      case 'not':
        return !this.evaluate(rule.rule, c, target);
      case 'and':
        return rule.rules.every((r) => this.evaluate(r, c, target));
      case 'or':
        return rule.rules.some((r) => this.evaluate(r, c, target));
    }
  }
}

/** A missing value on either side never matches: a token without a project owns no project's objects. */
function matches(actual: string | boolean | null, expected: Literal | null | undefined): boolean {
  if (actual === null || expected === null || expected === undefined) return false;
  if (typeof actual === 'boolean' || typeof expected === 'boolean') return String(actual).toLowerCase() === String(expected).toLowerCase();
  return actual === expected;
}

function checkNoCycle(parsed: ReadonlyMap<string, Rule>): void {
  const done = new Set<string>();
  const visit = (name: string, path: string[]) => {
    if (done.has(name)) return;
    if (path.includes(name)) {
      throw new PolicyConfigError(name, `rule '${name}' refers to itself: ${[...path.slice(path.indexOf(name)), name].join(' -> ')}`);
    }
    for (const ref of referencedRules(parsed.get(name)!)) visit(ref, [...path, name]);
    done.add(name);
  };
  for (const name of parsed.keys()) visit(name, []);
}
