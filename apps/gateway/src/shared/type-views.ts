import { list, map, optional, str, view } from '../shapes/response';

/** The answers of /v1/policy-types and /v1/profile-types. */

const TypeSummary = view('TypeSummary', {
  name: str({ example: 'senlin.policy.zone_placement', description: 'Below 1.5: "<name>-<version>" and nothing else.' }),
  version: optional(str({ example: '1.0', description: '>= 1.5.' })),
  support_status: optional(map({ description: '>= 1.5: {"<version>": [{status, since}]}.' })),
});

const TypeDetail = view('TypeDetail', {
  name: str({ example: 'senlin.policy.zone_placement-1.0' }),
  schema: map({ description: 'Per property: type, required, updatable, description, default, constraints, schema.' }),
  support_status: optional(map({ description: '>= 1.5.' })),
});

export const PolicyTypeList = view('PolicyTypeList', { policy_types: list(TypeSummary) });
export const PolicyTypeEnvelope = view('PolicyTypeEnvelope', { policy_type: TypeDetail });
export const ProfileTypeList = view('ProfileTypeList', { profile_types: list(TypeSummary) });
export const ProfileTypeEnvelope = view('ProfileTypeEnvelope', { profile_type: TypeDetail });
export const ProfileTypeOps = view('ProfileTypeOps', {
  operations: map({ example: {}, description: 'The operations POST /v1/nodes/{id}/ops runs, with their parameters.' }),
});
