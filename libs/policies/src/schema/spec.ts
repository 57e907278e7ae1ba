import { isPlainObject, pyStr } from './py-format';
import { Schema, SchemaError, SchemaMap, resolveSpec } from './schema';

/** A policy spec's envelope after resolution; `properties` is kept as sent (see normaliseEnvelope). */
export interface PolicySpec {
  type: string;
  version: string;
  description: string;
  properties: Record<string, unknown>;
}

const ENVELOPE_SCHEMA: SchemaMap = {
  type: Schema.String({ description: 'Name of the policy type.', required: true }),
  version: Schema.String({ description: 'Version number of the policy type.', required: true }),
  description: Schema.String({ description: 'A text description of policy.', default: '' }),
  properties: Schema.Map({ description: 'Properties for the policy.', required: true }),
};

/**
 * Senlin formats the version with Python `str()`: JSON `1.0` is "1.0". `JSON.parse` turns `1.0` into
 * the number 1, so an integral number is written "<n>.0" to accept what YAML-based clients send.
 */
export function formatSpecVersion(version: unknown): string {
  if (typeof version === 'number' && Number.isInteger(version)) return `${version}.0`;
  return pyStr(version);
}

/** The registry key `<type>-<version>`, with Senlin's three envelope errors. */
export function specTypeName(spec: unknown): string {
  if (!isPlainObject(spec)) throw new SchemaError('', 'The provided spec is not a map.');
  if (!('type' in spec)) throw new SchemaError('', "The 'type' key is missing from the provided spec map.");
  if (!('version' in spec)) throw new SchemaError('', "The 'version' key is missing from the provided spec map.");
  return `${pyStr(spec.type)}-${formatSpecVersion(spec.version)}`;
}

/** Checks the envelope keys (type, version, description, properties; nothing else). */
export function normaliseEnvelope(spec: Record<string, unknown>): PolicySpec {
  const plain = plainEnvelope(spec);
  if (plain) return plain;
  const withVersion = { ...spec, version: formatSpecVersion(spec.version) };
  const resolved = resolveSpec(ENVELOPE_SCHEMA, withVersion, '');
  const properties = spec.properties;
  return {
    type: resolved.type as string,
    version: resolved.version as string,
    description: resolved.description as string,
    properties: isPlainObject(properties) ? properties : (resolved.properties as Record<string, unknown>),
  };
}

/** Resolves `properties` against a policy type's schema; errors name `properties.<path>`. */
export function resolveProperties(schema: SchemaMap, properties: Record<string, unknown>): Record<string, unknown> {
  return resolveSpec(schema, properties, 'properties');
}

const ENVELOPE_KEYS = ['type', 'version', 'description', 'properties'];

/**
 * The envelope as every stored spec has it (string type and version, an object of properties, a
 * string description or none), read without the schema walk, which copied the spec and its
 * properties to check four keys: spec resolution runs for every policy of every decision. Null for
 * anything else, which the walk resolves or refuses with Senlin's message, as before.
 */
function plainEnvelope(spec: Record<string, unknown>): PolicySpec | null {
  let seen = 0;
  for (const key of Object.keys(spec)) {
    const at = ENVELOPE_KEYS.indexOf(key);
    if (at < 0) return null;
    seen |= 1 << at;
  }
  // type, version and properties are required (own enumerable keys, as the walk's spread copies them)
  if ((seen & 0b1011) !== 0b1011) return null;
  const { type, version, description, properties } = spec;
  if (typeof type !== 'string' || typeof version !== 'string' || !isPlainObject(properties)) return null;
  if (seen & 0b0100 && typeof description !== 'string') return null;
  return { type, version, description: seen & 0b0100 ? (description as string) : '', properties };
}
