import { CloudFacts, InMemoryCloud } from './framework/cloud';
import { InvalidSpecError, Policy } from './framework/policy';
import { PolicyRegistry, PolicyTypeNotFoundError } from './framework/registry';
import { VersionsMap } from './framework/types';
import { RenderedSchemaItem, renderSchema } from './schema/render';
import { SchemaError } from './schema/schema';
import { PolicySpec } from './schema/spec';

/** What the gateway turns into an HTTP error: 404 unknown type, 400 schema or InvalidSpec. */
export class PolicySpecError extends Error {
  constructor(
    readonly status: 400 | 404,
    message: string,
    /** the offending property, e.g. `properties.zones[1].weight` */
    readonly path?: string,
    /** Senlin's exception class for the error body */
    readonly type: 'ResourceNotFound' | 'ESchema' | 'InvalidSpec' = status === 404 ? 'ResourceNotFound' : 'InvalidSpec',
  ) {
    super(message);
    this.name = 'PolicySpecError';
  }
}

export interface ValidatedPolicySpec {
  /** `<type>-<version>`, stored as the policy's type */
  typeName: string;
  /** the envelope with the version as a string and description defaulted; properties as sent */
  spec: PolicySpec;
  policy: Policy;
}

let defaultRegistry: PolicyRegistry | undefined;
const builtins = () => (defaultRegistry ??= PolicyRegistry.withBuiltins());

/**
 * Policy create (`cloud` given: also checks names against Nova, Senlin's validate_props=true) and
 * policy validate (`cloud: null`: schema and static checks only).
 */
export function validatePolicySpec(
  spec: unknown,
  options: { registry?: PolicyRegistry; cloud?: CloudFacts | null; name?: string | null; id?: string | null } = {},
): ValidatedPolicySpec {
  const registry = options.registry ?? builtins();
  let policy: Policy;
  try {
    policy = registry.create(spec, { id: options.id ?? null, name: options.name ?? null });
  } catch (e) {
    if (e instanceof PolicyTypeNotFoundError) throw new PolicySpecError(404, e.message);
    if (e instanceof SchemaError) throw new PolicySpecError(400, e.message, e.path || undefined, 'ESchema');
    throw e;
  }
  const cloud = options.cloud ? new InMemoryCloud(options.cloud, () => '') : null;
  try {
    policy.validate({ cloud });
  } catch (e) {
    if (e instanceof InvalidSpecError) throw new PolicySpecError(400, e.message, e.path);
    if (e instanceof SchemaError) throw new PolicySpecError(400, e.message, e.path || undefined, 'ESchema');
    throw e;
  }
  return { typeName: policy.type, spec: policy.spec, policy };
}

export interface PolicyTypeSummary {
  name: string;
  version?: string;
  support_status?: VersionsMap;
}

/**
 * GET /v1/policy-types body. Microversion ≤ 1.4 lists `<name>-<version>` only; from 1.5 name,
 * version and that version's support status.
 */
export function listPolicyTypes(registry: PolicyRegistry, options: { microversion14OrBelow: boolean }): { policy_types: PolicyTypeSummary[] } {
  return {
    policy_types: registry.list().map((t) =>
      options.microversion14OrBelow
        ? { name: t.typeName }
        : { name: t.name, version: t.version, support_status: { [t.version]: structuredClone(t.meta.versions[t.version]) } },
    ),
  };
}

export interface PolicyTypeDetail {
  name: string;
  schema: Record<string, RenderedSchemaItem>;
  support_status?: VersionsMap;
}

/** GET /v1/policy-types/{type_name} body; `supportStatus` (microversion ≥ 1.5) adds the whole VERSIONS. */
export function describePolicyType(
  registry: PolicyRegistry,
  typeName: string,
  options: { supportStatus: boolean },
): { policy_type: PolicyTypeDetail } {
  if (!registry.has(typeName)) throw new PolicySpecError(404, new PolicyTypeNotFoundError(typeName).message);
  const t = registry.get(typeName);
  const detail: PolicyTypeDetail = { name: t.typeName, schema: renderSchema(t.meta.properties) };
  if (options.supportStatus) detail.support_status = structuredClone(t.meta.versions);
  return { policy_type: detail };
}
