import { DomainError, badRequest, notFound } from '@trellis/common';
import {
  SchemaError,
  formatSpecVersion,
  pyStr,
  renderSchema,
  resolveSpec,
  Schema,
  type RenderedSchemaItem,
  type SchemaMap,
} from '../infra/schema.adapter';
import { isMap } from '../shared/body';

/** A parameter of a profile type's operation (Senlin's schema.StringParam / IntegerParam). */
export interface OperationParam {
  type?: 'String' | 'Integer';
  description: string;
  default?: string;
  allowed?: string[];
}

/** One of a profile type's operations (Senlin's `OPERATIONS`), run by POST /v1/nodes/{id}/ops. */
export interface Operation {
  description: string;
  parameters: Record<string, OperationParam>;
}

/** A profile type as Senlin defines one: its spec schema, support status and operations. */
export interface ProfileType {
  /** `os.nova.server` */
  name: string;
  /** `1.0` */
  version: string;
  properties: SchemaMap;
  /** the properties Senlin marks `updatable` */
  updatable: ReadonlySet<string>;
  supportStatus: Record<string, Array<{ status: string; since: string }>>;
  /**
   * Whether Trellis builds nodes of this type. Profiles of the other types are kept (their specs are
   * checked, as Senlin checks them, so that Senlin's profiles can be brought over unchanged), but no
   * cluster or node can be made of them.
   */
  buildsNodes: boolean;
  operations: Readonly<Record<string, Operation>>;
  /** checks past the schema (Senlin's Profile.validate of the type) */
  check?(properties: Record<string, unknown>, profileName: string | null): void;
}

/** `os.nova.server-1.0` */
export const typeNameOf = (type: ProfileType) => `${type.name}-${type.version}`;

export interface ValidatedProfileSpec {
  /** `os.nova.server-1.0` */
  type: string;
  profileType: ProfileType;
  /** the properties after resolution (every key present) */
  properties: Record<string, unknown>;
}

const ENVELOPE: SchemaMap = {
  type: Schema.String({ description: 'Name of the profile type.', required: true }),
  version: Schema.String({ description: 'Version number of the profile type.', required: true }),
  properties: Schema.Map({ description: 'Properties for the profile.', required: true }),
};

export const invalidSpec = (message: string) => new DomainError('INVALID_SPEC', message, 'InvalidSpec');

/** The profile types of a deployment, looked up by `name-version`. */
export class ProfileTypes {
  private readonly byName: ReadonlyMap<string, ProfileType>;

  constructor(readonly all: readonly ProfileType[]) {
    this.byName = new Map(all.map((t) => [typeNameOf(t), t]));
  }

  /** The type named `os.nova.server-1.0`, or Senlin's 404 for the profile type. */
  get(typeName: string): ProfileType {
    const type = this.byName.get(typeName);
    if (!type) throw notFound('profile_type', typeName);
    return type;
  }

  /**
   * Checks a profile spec: envelope, type (404 for an unknown one), then every property and the
   * type's own checks; an error is a 400 with Senlin's text (`Unrecognizable spec item 'bogus'`),
   * which at create names the profile (`Failed in creating profile <name>: ...`, Senlin's
   * Profile.create). Values of `metadata` are accepted as Senlin accepts them.
   */
  validate(spec: unknown, creating: string | null = null): ValidatedProfileSpec {
    if (!isMap(spec)) throw invalidSpec('The provided spec is not a map.');
    if (!('type' in spec)) throw invalidSpec("The 'type' key is missing from the provided spec map.");
    if (!('version' in spec)) throw invalidSpec("The 'version' key is missing from the provided spec map.");
    const typeName = `${pyStr(spec.type)}-${formatSpecVersion(spec.version)}`;
    const profileType = this.get(typeName);
    let properties: Record<string, unknown>;
    try {
      resolveSpec(ENVELOPE, { ...spec, version: formatSpecVersion(spec.version) }, '');
      properties = resolveSpec(profileType.properties, spec.properties as Record<string, unknown>, 'properties');
    } catch (e) {
      if (e instanceof SchemaError) throw invalidSpec(creating === null ? e.detail : `Failed in creating profile ${creating}: ${e.detail}`);
      throw e;
    }
    profileType.check?.(properties, creating);
    return { type: typeName, profileType, properties };
  }
}

/** Senlin's rendering of a profile type's schema (GET /v1/profile-types/{type}). */
export function renderProfileSchema(type: ProfileType): Record<string, RenderedSchemaItem> {
  const rendered = renderSchema(type.properties);
  for (const [key, item] of Object.entries(rendered)) item.updatable = type.updatable.has(key);
  return rendered;
}

/** Senlin's rendering of a profile type's operations (schema.Operation as a map). */
export function renderOperations(type: ProfileType): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, op] of Object.entries(type.operations)) {
    const parameters: Record<string, unknown> = {};
    for (const [p, s] of Object.entries(op.parameters)) {
      parameters[p] = {
        type: s.type ?? 'String',
        description: s.description,
        ...(s.default !== undefined ? { default: s.default } : {}),
        required: false,
        ...(s.allowed ? { constraints: [{ type: 'AllowedValues', constraint: s.allowed }] } : {}),
      };
    }
    out[name] = { description: op.description, parameters };
  }
  return out;
}

export const hasOperation = (type: ProfileType, name: string): boolean => Object.prototype.hasOwnProperty.call(type.operations, name);

/** Senlin's Operation.validate of an operation's params, with its messages (as 400s). */
export function checkOperationParams(type: ProfileType, name: string, params: unknown): Record<string, unknown> {
  if (params === undefined || params === null) return {};
  if (!isMap(params)) throw badRequest('The params provided is not a map.');
  const schema = type.operations[name].parameters;
  for (const key of Object.keys(params)) {
    if (!Object.prototype.hasOwnProperty.call(schema, key)) throw badRequest(`Unrecognizable parameter '${key}'.`);
  }
  for (const [key, s] of Object.entries(schema)) {
    if (!(key in params)) continue;
    const value = params[key];
    if ((s.type ?? 'String') === 'Integer') {
      if (!Number.isSafeInteger(typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value)) {
        throw badRequest(`The value '${pyStr(value)}' is not a valid Integer`);
      }
      continue;
    }
    if (typeof value !== 'string') throw badRequest('value is not a string.');
    if (s.allowed && !s.allowed.includes(value)) throw badRequest(`'${value}' must be one of the allowed values: ${s.allowed.join(', ')}.`);
  }
  return { ...params };
}
