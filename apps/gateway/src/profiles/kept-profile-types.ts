import { Schema } from '../infra/schema.adapter';
import { invalidSpec, type ProfileType } from './profile-type';

/**
 * Senlin's other two profile types, kept so that their profiles can be made, validated, listed and
 * brought over from a Senlin deployment unchanged (their specs are checked as Senlin checks them).
 * Trellis places Nova servers only: a cluster or node of these types is refused with a 400 that
 * says so (ProfileTypes' `buildsNodes`), and their support status says UNSUPPORTED.
 */
const KEPT = { '1.0': [{ status: 'UNSUPPORTED', since: '2026.11' }] };

/** `os.heat.stack-1.0` (Senlin's StackProfile). */
export const HEAT_STACK_PROFILE_TYPE: ProfileType = {
  name: 'os.heat.stack',
  version: '1.0',
  properties: {
    context: Schema.Map({ description: 'A dictionary for specifying the customized context for stack operations', default: {} }),
    template: Schema.Map({ description: 'Heat stack template.', default: {} }),
    template_url: Schema.String({ description: 'Heat stack template url.', default: '' }),
    parameters: Schema.Map({ description: 'Parameters to be passed to Heat for stack operations.', default: {} }),
    files: Schema.Map({ description: 'Contents of files referenced by the template, if any.', default: {} }),
    timeout: Schema.Integer({ description: 'A integer that specifies the number of minutes that a stack operation times out.' }),
    disable_rollback: Schema.Boolean({ description: 'A boolean specifying whether a stack operation can be rolled back.', default: true }),
    environment: Schema.Map({ description: 'A map that specifies the environment used for stack operations.', default: {} }),
  },
  updatable: new Set(['template', 'template_url', 'parameters', 'files', 'timeout', 'disable_rollback', 'environment']),
  supportStatus: KEPT,
  buildsNodes: false,
  operations: { abandon: { description: 'Abandon a heat stack node.', parameters: {} } },
  check(properties, profileName) {
    const empty = (v: unknown) => v === null || v === '' || (typeof v === 'object' && Object.keys(v as object).length === 0);
    if (empty(properties.template) && empty(properties.template_url)) {
      throw invalidSpec(`Both template and template_url are not specified for profile '${profileName ?? 'validated_profile'}'.`);
    }
  },
};

/** `container.dockerinc.docker-1.0` (Senlin's DockerProfile). */
export const DOCKER_PROFILE_TYPE: ProfileType = {
  name: 'container.dockerinc.docker',
  version: '1.0',
  properties: {
    context: Schema.Map({ description: 'Customized security context for operating containers.' }),
    image: Schema.String({ description: 'The image used to create a container', required: true }),
    name: Schema.String({ description: 'The name of the container.' }),
    command: Schema.String({ description: 'The command to run when container is started.' }),
    port: Schema.Integer({ description: 'The port number used to connect to docker daemon.', default: 2375 }),
    host_node: Schema.String({ description: 'The node on which container will be launched.' }),
    host_cluster: Schema.String({ description: 'The cluster on which container will be launched.' }),
  },
  updatable: new Set(['name']),
  supportStatus: KEPT,
  buildsNodes: false,
  operations: {
    restart: {
      description: 'Restart a container.',
      parameters: { wait_time: { type: 'Integer', description: 'Number of seconds to wait before killing the container.' } },
    },
    pause: { description: 'Pause a container.', parameters: {} },
    unpause: { description: 'Unpause a container.', parameters: {} },
  },
};
