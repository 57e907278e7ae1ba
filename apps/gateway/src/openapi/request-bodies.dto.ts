import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { INT4_MAX, INT4_MIN } from '../shared/body';

/*
 * Documentation-only classes: the gateway validates Senlin-shaped bodies by hand (shared/body.ts) to
 * reproduce Senlin's error messages, so these classes describe the bodies and are never used to validate.
 */

const FREE_MAP = { type: 'object', additionalProperties: true } as const;
const IDENTITY = 'A UUID, a name or a short-id prefix (looked up in that order).';
/**
 * Senlin coerces integer fields from numeric strings too (`"count": "1"`), as the CLI sends them;
 * every one is held to the range of the int4 column that stores it.
 */
const INT_OR_STRING = {
  oneOf: [{ type: 'integer', minimum: INT4_MIN, maximum: INT4_MAX }, { type: 'string', pattern: '^\\s*[-+]?\\d+\\s*$' }],
};
const NAME = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: '^[a-zA-Z\\u4e00-\\u9fa5\\d\\.\\_\\~-]*$',
} as const;

export class ProfileSpec {
  @ApiProperty({ example: 'os.nova.server', description: 'Profile type; Trellis supports os.nova.server.' })
  type!: string;

  @ApiProperty({ oneOf: [{ type: 'number' }, { type: 'string' }], example: 1.0, description: 'Type version (a JSON number or string).' })
  version!: number | string;

  @ApiProperty({ ...FREE_MAP, description: 'Type-specific properties (flavor, image, networks, ...).', example: { flavor: 'm1.small', image: 'cirros' } })
  properties!: Record<string, unknown>;
}

export class ProfileCreateFields {
  @ApiProperty({ ...NAME, example: 'p1', description: 'Profile name: alphanumeric or "_-.~", starting with a letter.' })
  name!: string;

  @ApiProperty({ type: ProfileSpec, description: 'The profile spec, as a parsed YAML/JSON map.' })
  spec!: ProfileSpec;

  @ApiPropertyOptional({ ...FREE_MAP, example: {}, description: 'Free-form key/value metadata.' })
  metadata?: Record<string, unknown>;
}

export class ProfileCreateRequest {
  @ApiProperty({ type: ProfileCreateFields })
  profile!: ProfileCreateFields;
}

export class ProfileValidateFields {
  @ApiProperty({ type: ProfileSpec })
  spec!: ProfileSpec;
}

export class ProfileValidateRequest {
  @ApiProperty({ type: ProfileValidateFields, description: 'Microversion 1.2 or later.' })
  profile!: ProfileValidateFields;
}

export class ProfileUpdateFields {
  @ApiPropertyOptional({ ...NAME, example: 'p2' })
  name?: string;

  @ApiPropertyOptional({ ...FREE_MAP, example: { owner: 'ops' } })
  metadata?: Record<string, unknown>;
}

export class ProfileUpdateRequest {
  @ApiProperty({ type: ProfileUpdateFields, description: 'Only name and metadata can change.' })
  profile!: ProfileUpdateFields;
}

export class PolicySpec {
  @ApiProperty({ example: 'senlin.policy.zone_placement', description: 'Policy type name, without the version.' })
  type!: string;

  @ApiProperty({ oneOf: [{ type: 'number' }, { type: 'string' }], example: 1.0 })
  version!: number | string;

  @ApiProperty({ ...FREE_MAP, example: { zones: [{ name: 'az1', weight: 100 }] }, description: 'Checked against the policy type schema.' })
  properties!: Record<string, unknown>;
}

export class PolicyCreateFields {
  @ApiProperty({ ...NAME, example: 'zp1' })
  name!: string;

  @ApiProperty({ type: PolicySpec })
  spec!: PolicySpec;
}

export class PolicyCreateRequest {
  @ApiProperty({ type: PolicyCreateFields, description: 'Both name and spec are required; no other keys.' })
  policy!: PolicyCreateFields;
}

export class PolicyValidateFields {
  @ApiProperty({ type: PolicySpec })
  spec!: PolicySpec;
}

export class PolicyValidateRequest {
  @ApiProperty({ type: PolicyValidateFields, description: 'Microversion 1.2 or later.' })
  policy!: PolicyValidateFields;
}

export class PolicyUpdateFields {
  @ApiProperty({ ...NAME, example: 'zp2', description: 'The new name (the only updatable field).' })
  name!: string;
}

export class PolicyUpdateRequest {
  @ApiProperty({ type: PolicyUpdateFields })
  policy!: PolicyUpdateFields;
}

export class ClusterCreateFields {
  @ApiProperty({ ...NAME, example: 'c1' })
  name!: string;

  @ApiProperty({ example: 'p1', description: `The profile. ${IDENTITY}` })
  profile_id!: string;

  @ApiPropertyOptional({ ...INT_OR_STRING, example: 0, description: 'Defaults to min_size if given, else 0.' })
  desired_capacity?: number | string;

  @ApiPropertyOptional({ ...INT_OR_STRING, example: 0, description: '>= 0; default 0.' })
  min_size?: number | string;

  @ApiPropertyOptional({ ...INT_OR_STRING, example: -1, description: '>= -1 (-1: unlimited); default -1.' })
  max_size?: number | string;

  @ApiPropertyOptional({ ...INT_OR_STRING, nullable: true, example: null, description: 'Action timeout in seconds; default 3600.' })
  timeout?: number | string | null;

  @ApiPropertyOptional({ ...FREE_MAP, example: {} })
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({ ...FREE_MAP, example: {}, description: 'Cluster config, e.g. node.name.format.' })
  config?: Record<string, unknown>;
}

export class ClusterCreateRequest {
  @ApiProperty({ type: ClusterCreateFields, description: 'name and profile_id are required.' })
  cluster!: ClusterCreateFields;
}

export class ClusterUpdateFields {
  @ApiPropertyOptional({ ...NAME, example: 'c2' })
  name?: string;

  @ApiPropertyOptional({ example: 'p2', description: `A new profile. ${IDENTITY}` })
  profile_id?: string;

  @ApiPropertyOptional({ ...FREE_MAP })
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({ ...INT_OR_STRING })
  timeout?: number | string;

  @ApiPropertyOptional({ ...FREE_MAP })
  config?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'boolean', description: 'Change only the profile, not the existing nodes (>= 1.6).' })
  profile_only?: boolean;
}

export class ClusterUpdateRequest {
  @ApiProperty({ type: ClusterUpdateFields })
  cluster!: ClusterUpdateFields;
}

export class ScaleAction {
  @ApiPropertyOptional({ ...INT_OR_STRING, nullable: true, example: 1, description: 'Nodes to add or remove (not 0); null or absent lets the scaling policy decide.' })
  count?: number | string | null;
}

export class ResizeAction {
  @ApiPropertyOptional({ enum: ['EXACT_CAPACITY', 'CHANGE_IN_CAPACITY', 'CHANGE_IN_PERCENTAGE'], example: 'EXACT_CAPACITY' })
  adjustment_type?: string;

  @ApiPropertyOptional({ type: 'number', minimum: INT4_MIN, maximum: INT4_MAX, example: 3, description: 'Required with adjustment_type.' })
  number?: number;

  @ApiPropertyOptional({ ...INT_OR_STRING, example: 1 })
  min_size?: number | string;

  @ApiPropertyOptional({ ...INT_OR_STRING, example: 5 })
  max_size?: number | string;

  @ApiPropertyOptional({ ...INT_OR_STRING, description: 'Minimum step; kept only for CHANGE_IN_PERCENTAGE.' })
  min_step?: number | string;

  @ApiPropertyOptional({ type: 'boolean', default: true, description: 'Reject (true) or truncate (false) sizes out of range.' })
  strict?: boolean;
}

export class PolicyAttachAction {
  @ApiProperty({ example: 'zp1', description: `The policy. ${IDENTITY}` })
  policy_id!: string;

  @ApiPropertyOptional({ type: 'boolean', default: true })
  enabled?: boolean;
}

export class PolicyDetachAction {
  @ApiProperty({ example: 'zp1', description: `An attached policy. ${IDENTITY}` })
  policy_id!: string;
}

export class PolicyUpdateAction {
  @ApiProperty({ example: 'zp1', description: `An attached policy. ${IDENTITY}` })
  policy_id!: string;

  @ApiPropertyOptional({ type: 'boolean', default: true, example: false, description: 'Only enabled can change.' })
  enabled?: boolean;
}

export class AddNodesAction {
  @ApiProperty({ type: [String], minItems: 1, example: ['node-1'], description: 'ACTIVE orphan nodes of the same profile type.' })
  nodes!: string[];
}

export class DelNodesAction {
  @ApiProperty({ type: [String], minItems: 1, example: ['node-1'], description: 'Member nodes of the cluster.' })
  nodes!: string[];

  @ApiPropertyOptional({ type: 'boolean', description: 'Delete the servers too (>= 1.4).' })
  destroy_after_deletion?: boolean;
}

export class CheckAction {}

export class RepairAction {}

/** Senlin's action body holds exactly one of these keys (its value may be null for an empty map). */
export class ClusterActionRequest {
  @ApiPropertyOptional({ type: ScaleAction, description: 'CLUSTER_SCALE_OUT.' })
  scale_out?: ScaleAction;

  @ApiPropertyOptional({ type: ScaleAction, description: 'CLUSTER_SCALE_IN.' })
  scale_in?: ScaleAction;

  @ApiPropertyOptional({ type: ResizeAction, description: 'CLUSTER_RESIZE.' })
  resize?: ResizeAction;

  @ApiPropertyOptional({ type: PolicyAttachAction, description: 'CLUSTER_ATTACH_POLICY.' })
  policy_attach?: PolicyAttachAction;

  @ApiPropertyOptional({ type: PolicyDetachAction, description: 'CLUSTER_DETACH_POLICY.' })
  policy_detach?: PolicyDetachAction;

  @ApiPropertyOptional({ type: PolicyUpdateAction, description: 'CLUSTER_UPDATE_POLICY.' })
  policy_update?: PolicyUpdateAction;

  @ApiPropertyOptional({ type: AddNodesAction, description: 'CLUSTER_ADD_NODES.' })
  add_nodes?: AddNodesAction;

  @ApiPropertyOptional({ type: DelNodesAction, description: 'CLUSTER_DEL_NODES.' })
  del_nodes?: DelNodesAction;

  @ApiPropertyOptional({ type: CheckAction, description: 'CLUSTER_CHECK: a drift check against the attached policies.' })
  check?: CheckAction;

  @ApiPropertyOptional({ type: RepairAction, description: 'CLUSTER_REPAIR: repair the open drift findings; takes no keys.' })
  repair?: RepairAction;

  @ApiPropertyOptional({ ...FREE_MAP, description: '>= 1.9: `{"lifecycle_action_token": <action id>}`; answers with that action.' })
  complete_lifecycle?: Record<string, unknown>;
}

export class NodeCreateFields {
  @ApiProperty({ ...NAME, example: 'n1' })
  name!: string;

  @ApiProperty({ example: 'p1', description: `The profile. ${IDENTITY}` })
  profile_id!: string;

  @ApiPropertyOptional({ example: 'c1', description: `Join this cluster (profile types must match). ${IDENTITY}` })
  cluster_id?: string;

  @ApiPropertyOptional({ example: 'worker' })
  role?: string;

  @ApiPropertyOptional({ ...FREE_MAP, example: {} })
  metadata?: Record<string, unknown>;
}

export class NodeCreateRequest {
  @ApiProperty({ type: NodeCreateFields })
  node!: NodeCreateFields;
}

export class NodeUpdateFields {
  @ApiPropertyOptional({ ...NAME })
  name?: string;

  @ApiPropertyOptional({ description: IDENTITY })
  profile_id?: string;

  @ApiPropertyOptional()
  role?: string;

  @ApiPropertyOptional({ ...FREE_MAP })
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'boolean', description: '>= 1.13.' })
  tainted?: boolean;
}

export class NodeUpdateRequest {
  @ApiProperty({ type: NodeUpdateFields })
  node!: NodeUpdateFields;
}

/** The decision snapshot `trellis evaluate` reads (libs/policies EvaluationInput). */
export class EvaluationRequest {
  @ApiPropertyOptional({ enum: ['pre_op', 'post_op', 'attach', 'detach'], default: 'pre_op' })
  hook?: string;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', additionalProperties: true, required: ['spec'] },
    description: 'Policies to run: {id, name, spec, enabled, binding_id, attached_at, binding_data, last_op, priority}.',
  })
  policies?: Array<Record<string, unknown>>;

  @ApiPropertyOptional({ type: 'array', items: { ...FREE_MAP }, description: 'attach only: policies already attached.' })
  attached?: Array<Record<string, unknown>>;

  @ApiPropertyOptional({ ...FREE_MAP, description: '{id, name, min_size, max_size, desired_capacity, profile, nodes}.' })
  cluster?: Record<string, unknown>;

  @ApiPropertyOptional({ ...FREE_MAP, nullable: true, description: 'Cloud facts: availability zones, hosts, server groups.' })
  cloud?: Record<string, unknown> | null;

  @ApiPropertyOptional({ ...FREE_MAP, example: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 1 } } })
  action?: Record<string, unknown>;

  @ApiPropertyOptional({ format: 'date-time' })
  now?: string;

  @ApiPropertyOptional({ type: 'integer', description: 'Seed for deterministic random choices and ids.' })
  seed?: number;
}

export class ActionUpdateFields {
  @ApiProperty({ enum: ['CANCELLED'], description: 'The only status an action can be set to: cancel it.' })
  status!: string;
}

/** PATCH /v1/actions/{id} (>= 1.12). */
export class ActionUpdateRequest {
  @ApiProperty({ type: ActionUpdateFields })
  action!: ActionUpdateFields;
}

export class NodeRecoverParams {
  @ApiPropertyOptional({ enum: ['REBOOT', 'REBUILD', 'RECREATE'], description: 'Any case. RECREATE is not run by the nova-worker.' })
  operation?: string;

  @ApiPropertyOptional({ ...FREE_MAP, example: { type: 'HARD' }, description: 'REBOOT: `type` SOFT or HARD (default HARD).' })
  operation_params?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'boolean' })
  check?: boolean;
}

/** POST /v1/nodes/{id}/actions: exactly one key. */
export class NodeActionRequest {
  @ApiPropertyOptional({ ...FREE_MAP, description: 'NODE_CHECK: is the server still there and ACTIVE?' })
  check?: Record<string, unknown>;

  @ApiPropertyOptional({ type: NodeRecoverParams, description: 'NODE_RECOVER.' })
  recover?: NodeRecoverParams;
}

/** POST /v1/nodes/{id}/ops (>= 1.4): exactly one operation of GET /v1/profile-types/{type}/ops, its value the parameters. */
export class NodeOperationRequest {
  @ApiPropertyOptional({ ...FREE_MAP, example: { type: 'SOFT' }, description: '`type`: SOFT (default) or HARD.' })
  reboot?: Record<string, unknown>;

  @ApiPropertyOptional({ ...FREE_MAP })
  rebuild?: Record<string, unknown>;

  @ApiPropertyOptional({ ...FREE_MAP, description: '`admin_pass`.' })
  change_password?: Record<string, unknown>;

  @ApiPropertyOptional({ ...FREE_MAP })
  start?: Record<string, unknown>;

  @ApiPropertyOptional({ ...FREE_MAP })
  stop?: Record<string, unknown>;
}
