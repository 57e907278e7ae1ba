import type { Operation } from './profile-type';

/**
 * The operations of os.nova.server-1.0 (Senlin's ServerProfile.OPERATIONS): what
 * GET /v1/profile-types/{type}/ops lists and POST /v1/nodes/{id}/ops accepts; the nova-worker
 * runs them as Nova server actions.
 */
export const SERVER_OPERATIONS: Readonly<Record<string, Operation>> = {
  reboot: {
    description: 'Reboot the nova server.',
    parameters: { type: { description: "Type of reboot which can be 'SOFT' or 'HARD'.", default: 'SOFT', allowed: ['SOFT', 'HARD'] } },
  },
  rebuild: { description: 'Rebuild the server using current image and admin password.', parameters: {} },
  change_password: {
    description: 'Change the administrator password.',
    parameters: { admin_pass: { description: 'New password for the administrator.' } },
  },
  pause: { description: 'Pause the server from running.', parameters: {} },
  unpause: { description: 'Unpause the server to running state.', parameters: {} },
  suspend: { description: 'Suspend the running of the server.', parameters: {} },
  resume: { description: 'Resume the running of the server.', parameters: {} },
  lock: { description: 'Lock the server.', parameters: {} },
  unlock: { description: 'Unlock the server.', parameters: {} },
  start: { description: 'Start the server.', parameters: {} },
  stop: { description: 'Stop the server.', parameters: {} },
  rescue: { description: 'Rescue the server.', parameters: { image_ref: { description: 'A string referencing the image to use.' } } },
  unrescue: { description: 'Unrescue the server.', parameters: {} },
  evacuate: {
    description: 'Evacuate the server to a different host.',
    parameters: {
      host: { description: 'The target host to evacuate the server.' },
      force: { description: 'Whether the evacuation should be a forced one.' },
    },
  },
};
