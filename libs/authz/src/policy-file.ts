import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { PolicyConfigError, PolicyEnforcer, type RuleDefault } from './enforcer';
import { DEFAULT_RULES } from './defaults';

/**
 * The operator's overrides: a YAML (or JSON) map of rule name to check string, as oslo.policy's
 * policy.yaml. Throws PolicyConfigError for anything else.
 */
export function parsePolicyFile(text: string, source: string): Record<string, string> {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    throw new PolicyConfigError(null, `${source}: not valid YAML: ${(e as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new PolicyConfigError(null, `${source}: must be a map of rule name to rule ("clusters:create": "role:admin")`);
  }
  const rules: Record<string, string> = {};
  for (const [name, check] of Object.entries(doc)) {
    if (typeof check !== 'string') throw new PolicyConfigError(name, `${source}: rule '${name}' must be a string, got ${JSON.stringify(check)}`);
    rules[name] = check;
  }
  return rules;
}

/** The enforcer the gateway uses: the defaults, overridden by the policy file when there is one. */
export function loadEnforcer(policyFile: string | null, defaults: readonly RuleDefault[] = DEFAULT_RULES): PolicyEnforcer {
  if (policyFile === null) return PolicyEnforcer.create(defaults);
  let text: string;
  try {
    text = readFileSync(policyFile, 'utf8');
  } catch (e) {
    throw new PolicyConfigError(null, `policy file ${policyFile} cannot be read: ${(e as Error).message}`);
  }
  return PolicyEnforcer.create(defaults, parsePolicyFile(text, `policy file ${policyFile}`), `policy file ${policyFile}`);
}
