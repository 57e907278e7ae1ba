import { stringify } from 'yaml';
import type { RuleDefault } from './enforcer';
import { DEFAULT_RULES } from './defaults';

/**
 * The defaults as a policy file, each rule under a comment saying what it guards (as
 * oslopolicy-sample-generator does). The rules are not commented out: the output loads as
 * TRELLIS_POLICY_FILE unchanged, and an operator edits the lines they mean to change.
 */
export function renderPolicyDefaults(rules: readonly RuleDefault[] = DEFAULT_RULES): string {
  const out = ['# Trellis API policy: the default rules.', '# Set TRELLIS_POLICY_FILE to a file of the rules you change (or all of them).', ''];
  for (const rule of rules) {
    out.push(`# ${rule.description}`);
    for (const o of rule.operations ?? []) out.push(`# ${o.method.padEnd(6)} ${o.path}`);
    out.push(stringify({ [rule.name]: rule.check }, { defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'QUOTE_DOUBLE', lineWidth: 0 }).trimEnd());
    out.push('');
  }
  return out.join('\n');
}
