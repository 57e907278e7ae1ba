import { DomainError, notFound } from '@trellis/common';
import { PROFILE_TYPE_NOVA_SERVER } from '@trellis/contracts';
import {
  Schema,
  SchemaError,
  formatSpecVersion,
  pyStr,
  renderSchema,
  resolveSpec,
  type RenderedSchemaItem,
  type SchemaMap,
} from '../infra/schema.adapter';
import { isMap } from '../shared/body';

/** The one profile type Trellis supports: Senlin's `os.nova.server-1.0`, reduced to what Trellis boots. */
export const NOVA_SERVER_PROPERTIES: SchemaMap = {
  flavor: Schema.String({ description: 'ID of flavor used for the server.', required: true }),
  image: Schema.String({ description: 'ID of image to be used for the new server.', required: true }),
  name: Schema.String({ description: 'Name of the server. When omitted, the node name will be used.' }),
  key_name: Schema.String({ description: 'Name of Nova keypair to be injected to server.' }),
  availability_zone: Schema.String({ description: 'Name of availability zone for running the server.' }),
  user_data: Schema.String({ description: 'User data to be exposed by the metadata server.' }),
  metadata: Schema.Map({
    description: 'A collection of key/value pairs to be associated with the server created. Both key and value must be <=255 chars.',
  }),
  scheduler_hints: Schema.Map({
    description: 'A collection of key/value pairs to be associated with the Scheduler hints. Both key and value must be <=255 chars.',
  }),
  networks: Schema.List({
    description: 'List of networks for the server.',
    schema: Schema.Map({
      description: 'A map specifying the properties of a network for uses.',
      schema: {
        network: Schema.String({ description: 'Name or ID of network to create a port on.' }),
        port: Schema.String({ description: 'Port ID to be used by the network.' }),
        fixed_ip: Schema.String({ description: 'Fixed IP to be used by the network.' }),
        subnet: Schema.String({ description: 'Subnet in which to allocate the IP address for this port.' }),
        floating_network: Schema.String({ description: 'The network on which to create a floating IP' }),
        floating_ip: Schema.String({ description: 'The floating IP address to be associated with this port.' }),
        security_groups: Schema.List({
          description: 'Security groups to be used for the port.',
          schema: Schema.String({ description: 'Name of a security group' }),
        }),
        vnic_type: Schema.String({ description: 'The vnic_type of the port.' }),
      },
    }),
  }),
};

/** Properties Senlin could change on an existing server (its `updatable` flags). */
const UPDATABLE = new Set(['flavor', 'image', 'name', 'metadata', 'networks', 'user_data']);

const ENVELOPE: SchemaMap = {
  type: Schema.String({ description: 'Name of the profile type.', required: true }),
  version: Schema.String({ description: 'Version number of the profile type.', required: true }),
  properties: Schema.Map({ description: 'Properties for the profile.', required: true }),
};

export const PROFILE_TYPE_NAME = 'os.nova.server';
export const PROFILE_TYPE_VERSION = '1.0';
export const PROFILE_SUPPORT_STATUS = { '1.0': [{ status: 'SUPPORTED', since: '2016.04' }] };

export interface ValidatedProfileSpec {
  /** `os.nova.server-1.0` */
  type: string;
  /** the properties after resolution (every key present) */
  properties: Record<string, unknown>;
}

/**
 * Checks a profile spec: envelope, type (404 for an unknown one), then every property; an error is
 * a 400 with Senlin's text (`Unrecognizable spec item 'bogus'`), which at create names the profile
 * (`Failed in creating profile <name>: ...`, Senlin's Profile.create). Values of `metadata` are
 * accepted as Senlin accepts them (the worker hands Nova their string forms).
 */
export function validateProfileSpec(spec: unknown, creating: string | null = null): ValidatedProfileSpec {
  if (!isMap(spec)) throw invalid('The provided spec is not a map.');
  if (!('type' in spec)) throw invalid("The 'type' key is missing from the provided spec map.");
  if (!('version' in spec)) throw invalid("The 'version' key is missing from the provided spec map.");
  const typeName = `${pyStr(spec.type)}-${formatSpecVersion(spec.version)}`;
  if (typeName !== PROFILE_TYPE_NOVA_SERVER) throw notFound('profile_type', typeName);
  try {
    resolveSpec(ENVELOPE, { ...spec, version: formatSpecVersion(spec.version) }, '');
    const properties = resolveSpec(NOVA_SERVER_PROPERTIES, spec.properties as Record<string, unknown>, 'properties');
    return { type: typeName, properties };
  } catch (e) {
    if (e instanceof SchemaError) throw invalid(creating === null ? e.detail : `Failed in creating profile ${creating}: ${e.detail}`);
    throw e;
  }
}

const invalid = (message: string) => new DomainError('INVALID_SPEC', message, 'InvalidSpec');

export function renderProfileSchema(): Record<string, RenderedSchemaItem> {
  const rendered = renderSchema(NOVA_SERVER_PROPERTIES);
  for (const [key, item] of Object.entries(rendered)) item.updatable = UPDATABLE.has(key);
  return rendered;
}
