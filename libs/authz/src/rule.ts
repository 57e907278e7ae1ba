/**
 * oslo.policy's check-string language, the part OpenStack's default rules use:
 * `role:X`, `rule:NAME`, `project_id:%(project_id)s`, `is_admin_project:True`, `system_scope:all`,
 * `@` (always), `!` (never), `and`, `or`, `not` and parentheses; `not` binds tighter than `and`,
 * `and` tighter than `or`. The empty string means `@`, as in oslo.policy.
 */
export type Rule =
  | { kind: 'always' }
  | { kind: 'never' }
  | { kind: 'role'; role: string }
  | { kind: 'rule'; name: string }
  /** `<credential>:<value>`: a literal, or `%(key)s` for the target's value */
  | { kind: 'match'; credential: Credential; value: Literal | { target: string } }
  | { kind: 'not'; rule: Rule }
  | { kind: 'and'; rules: Rule[] }
  | { kind: 'or'; rules: Rule[] };

export type Literal = string | boolean;

/** The caller's attributes a rule can test (oslo.policy's credentials dictionary). */
export const CREDENTIALS = ['project_id', 'user_id', 'domain_id', 'is_admin_project', 'system_scope'] as const;
export type Credential = (typeof CREDENTIALS)[number];

export class RuleSyntaxError extends Error {}

type Token = { t: '(' | ')' | 'and' | 'or' | 'not' } | { t: 'check'; text: string };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  // as oslo.policy: words split on white space, then parentheses peeled off a word's ends (a
  // target reference such as %(project_id)s keeps its own)
  for (const word of source.split(/\s+/).filter(Boolean)) {
    let start = 0;
    let end = word.length;
    while (start < end && word[start] === '(') start++;
    while (end > start && word[end - 1] === ')' && !/%\([^()]*\)$/.test(word.slice(start, end)) ) end--;
    for (let i = 0; i < start; i++) tokens.push({ t: '(' });
    const core = word.slice(start, end);
    const lower = core.toLowerCase();
    if (core === '') {
      // only parentheses
    } else if (lower === 'and' || lower === 'or' || lower === 'not') tokens.push({ t: lower });
    else tokens.push({ t: 'check', text: core });
    for (let i = end; i < word.length; i++) tokens.push({ t: ')' });
  }
  return tokens;
}

function literal(raw: string): Literal {
  if (raw === 'True') return true;
  if (raw === 'False') return false;
  const quoted = /^'(.*)'$|^"(.*)"$/.exec(raw);
  return quoted ? (quoted[1] ?? quoted[2]) : raw;
}

function check(text: string): Rule {
  if (text === '@') return { kind: 'always' };
  if (text === '!') return { kind: 'never' };
  const colon = text.indexOf(':');
  if (colon <= 0 || colon === text.length - 1) throw new RuleSyntaxError(`'${text}' is not a check (expected kind:value, @ or !)`);
  const kind = text.slice(0, colon);
  const value = text.slice(colon + 1);
  if (kind === 'role') return { kind: 'role', role: value.toLowerCase() };
  if (kind === 'rule') return { kind: 'rule', name: value };
  if (!(CREDENTIALS as readonly string[]).includes(kind)) {
    throw new RuleSyntaxError(`unknown check '${kind}' in '${text}' (known: role, rule, ${CREDENTIALS.join(', ')})`);
  }
  const target = /^%\(([A-Za-z_][A-Za-z0-9_.]*)\)s$/.exec(value);
  if (!target && value.includes('%(')) throw new RuleSyntaxError(`'${value}' is not a target reference (expected %(name)s)`);
  return { kind: 'match', credential: kind as Credential, value: target ? { target: target[1] } : literal(value) };
}

/** Parses a check string; throws RuleSyntaxError saying what is wrong. */
export function parseRule(source: string): Rule {
  const tokens = tokenize(source);
  if (tokens.length === 0) return { kind: 'always' };
  let at = 0;
  const peek = () => tokens[at];

  const orExpr = (): Rule => {
    const rules = [andExpr()];
    while (peek()?.t === 'or') {
      at++;
      rules.push(andExpr());
    }
    return rules.length === 1 ? rules[0] : { kind: 'or', rules };
  };
  const andExpr = (): Rule => {
    const rules = [notExpr()];
    while (peek()?.t === 'and') {
      at++;
      rules.push(notExpr());
    }
    return rules.length === 1 ? rules[0] : { kind: 'and', rules };
  };
  const notExpr = (): Rule => {
    const token = peek();
    if (!token) throw new RuleSyntaxError('the rule ends where a check was expected');
    at++;
    if (token.t === 'not') return { kind: 'not', rule: notExpr() };
    if (token.t === '(') {
      const inner = orExpr();
      if (peek()?.t !== ')') throw new RuleSyntaxError("a '(' is not closed");
      at++;
      return inner;
    }
    if (token.t === 'check') return check(token.text);
    throw new RuleSyntaxError(`'${token.t}' where a check was expected`);
  };

  const rule = orExpr();
  if (at < tokens.length) {
    const rest = tokens[at];
    throw new RuleSyntaxError(rest.t === ')' ? "a ')' without its '('" : `unexpected '${rest.t === 'check' ? rest.text : rest.t}' after a complete rule`);
  }
  return rule;
}

/** The rule names a rule refers to with `rule:NAME`. */
export function referencedRules(rule: Rule): string[] {
  switch (rule.kind) {
    case 'rule':
      return [rule.name];
    case 'not':
      return referencedRules(rule.rule);
    case 'and':
    case 'or':
      return rule.rules.flatMap(referencedRules);
    default:
      return [];
  }
}
