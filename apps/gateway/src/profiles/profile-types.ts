import { badRequest } from '@trellis/common';
import { DOCKER_PROFILE_TYPE, HEAT_STACK_PROFILE_TYPE } from './kept-profile-types';
import { NOVA_SERVER_PROFILE_TYPE } from './nova-server.profile-type';
import { ProfileTypes, typeNameOf } from './profile-type';

/** Senlin's three profile types; Trellis builds nodes of os.nova.server only. */
export const PROFILE_TYPES = new ProfileTypes([NOVA_SERVER_PROFILE_TYPE, HEAT_STACK_PROFILE_TYPE, DOCKER_PROFILE_TYPE]);

/** Refuses a cluster or node made of a profile whose type Trellis keeps but does not build (a 400). */
export function mustBuildNodes(profile: { id: string; type: string }): void {
  if (PROFILE_TYPES.get(profile.type).buildsNodes) return;
  const builders = PROFILE_TYPES.all.filter((t) => t.buildsNodes).map(typeNameOf);
  throw badRequest(
    `The profile '${profile.id}' is of type ${profile.type}, which Trellis keeps but does not build; ` +
      `clusters and nodes can be made of profile type ${builders.join(', ')} only.`,
  );
}
