import { Schema, type SchemaMap } from '../infra/schema.adapter';
import { SERVER_OPERATIONS } from './nova-server.operations';
import type { ProfileType } from './profile-type';

/** The profile type Trellis builds nodes of: Senlin's `os.nova.server-1.0`, reduced to what Trellis boots. */
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

/** `os.nova.server-1.0`: the flavor, image and networks are also checked against the cloud (ProfileCloudCheck). */
export const NOVA_SERVER_PROFILE_TYPE: ProfileType = {
  name: 'os.nova.server',
  version: '1.0',
  properties: NOVA_SERVER_PROPERTIES,
  updatable: UPDATABLE,
  supportStatus: { '1.0': [{ status: 'SUPPORTED', since: '2016.04' }] },
  buildsNodes: true,
  operations: SERVER_OPERATIONS,
};
