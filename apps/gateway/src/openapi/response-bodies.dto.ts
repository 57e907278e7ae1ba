import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/* Documentation-only classes for the bodies the gateway answers with (shared/views.ts builds them). */

const FREE_MAP = { type: 'object', additionalProperties: true } as const;
const TIME = { type: 'string', format: 'date-time', nullable: true, example: '2016-01-18T00:00:00Z' } as const;
const UUID = { type: 'string', format: 'uuid' } as const;
const NULLABLE_STRING = { type: 'string', nullable: true } as const;

class Owned {
  @ApiProperty({ ...UUID })
  id!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({ description: 'Keystone user id of the creator.' })
  user!: string;

  @ApiProperty({ description: 'Keystone project id.' })
  project!: string;

  @ApiProperty({ ...NULLABLE_STRING })
  domain!: string | null;

  @ApiProperty({ ...TIME })
  created_at!: string | null;

  @ApiProperty({ ...TIME })
  updated_at!: string | null;
}

export class ProfileView extends Owned {
  @ApiProperty({ example: 'os.nova.server-1.0' })
  type!: string;

  @ApiProperty({ ...FREE_MAP })
  spec!: Record<string, unknown>;

  @ApiProperty({ ...FREE_MAP })
  metadata!: Record<string, unknown>;
}

export class ProfileEnvelope {
  @ApiProperty({ type: ProfileView })
  profile!: ProfileView;
}

export class ProfileList {
  @ApiProperty({ type: [ProfileView] })
  profiles!: ProfileView[];
}

export class PolicyView extends Owned {
  @ApiProperty({ example: 'senlin.policy.zone_placement-1.0' })
  type!: string;

  @ApiProperty({ ...FREE_MAP })
  spec!: Record<string, unknown>;

  @ApiProperty({ ...FREE_MAP })
  data!: Record<string, unknown>;
}

export class PolicyEnvelope {
  @ApiProperty({ type: PolicyView })
  policy!: PolicyView;
}

export class PolicyList {
  @ApiProperty({ type: [PolicyView] })
  policies!: PolicyView[];
}

export class ClusterView extends Owned {
  @ApiProperty({ ...UUID })
  profile_id!: string;

  @ApiProperty({ ...NULLABLE_STRING })
  profile_name!: string | null;

  @ApiProperty({ ...TIME })
  init_at!: string | null;

  @ApiProperty({ type: 'integer', example: 0 })
  min_size!: number;

  @ApiProperty({ type: 'integer', example: -1, description: '-1: unlimited.' })
  max_size!: number;

  @ApiProperty({ type: 'integer', example: 2 })
  desired_capacity!: number;

  @ApiProperty({ type: 'integer', nullable: true, example: 3600 })
  timeout!: number | null;

  @ApiProperty({
    enum: ['INIT', 'ACTIVE', 'CREATING', 'UPDATING', 'RESIZING', 'DELETING', 'CHECKING', 'RECOVERING', 'CRITICAL', 'ERROR', 'WARNING', 'OPERATING'],
  })
  status!: string;

  @ApiProperty({ ...NULLABLE_STRING, example: 'Initializing' })
  status_reason!: string | null;

  @ApiProperty({ ...FREE_MAP })
  metadata!: Record<string, unknown>;

  @ApiProperty({ ...FREE_MAP })
  data!: Record<string, unknown>;

  @ApiProperty({ ...FREE_MAP })
  dependents!: Record<string, unknown>;

  @ApiProperty({ ...FREE_MAP })
  config!: Record<string, unknown>;

  @ApiProperty({ type: [String], description: 'Member node ids.' })
  nodes!: string[];

  @ApiProperty({ type: [String], description: 'Policy binding ids (not policy ids).' })
  policies!: string[];
}

export class ClusterEnvelope {
  @ApiProperty({ type: ClusterView })
  cluster!: ClusterView;
}

export class ClusterList {
  @ApiProperty({ type: [ClusterView] })
  clusters!: ClusterView[];
}

export class NodeView extends Owned {
  @ApiProperty({ ...NULLABLE_STRING })
  cluster_id!: string | null;

  @ApiProperty({ ...NULLABLE_STRING, description: 'The Nova server id.' })
  physical_id!: string | null;

  @ApiProperty({ ...UUID })
  profile_id!: string;

  @ApiProperty({ ...NULLABLE_STRING })
  profile_name!: string | null;

  @ApiProperty({ type: 'integer', example: 1 })
  index!: number;

  @ApiProperty({ ...NULLABLE_STRING })
  role!: string | null;

  @ApiProperty({ ...TIME })
  init_at!: string | null;

  @ApiProperty({ example: 'ACTIVE' })
  status!: string;

  @ApiProperty({ ...NULLABLE_STRING })
  status_reason!: string | null;

  @ApiProperty({ ...FREE_MAP, description: 'data.placement.zone is where the zone lands.' })
  data!: Record<string, unknown>;

  @ApiProperty({ ...FREE_MAP })
  metadata!: Record<string, unknown>;

  @ApiProperty({ ...FREE_MAP })
  dependents!: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'boolean', description: '>= 1.13.' })
  tainted?: boolean;

  @ApiPropertyOptional({ ...FREE_MAP, description: 'Physical details, with show_details=true.' })
  details?: Record<string, unknown>;
}

export class NodeEnvelope {
  @ApiProperty({ type: NodeView })
  node!: NodeView;
}

export class NodeList {
  @ApiProperty({ type: [NodeView] })
  nodes!: NodeView[];
}

export class ActionView {
  @ApiProperty({ ...UUID })
  id!: string;

  @ApiProperty({ example: 'cluster_scale_out_0123abcd' })
  name!: string;

  @ApiPropertyOptional({ ...NULLABLE_STRING, description: '>= 1.14.' })
  cluster_id?: string | null;

  @ApiProperty({ example: 'CLUSTER_SCALE_OUT' })
  action!: string;

  @ApiProperty({ ...UUID })
  target!: string;

  @ApiProperty({ example: 'RPC Request' })
  cause!: string;

  @ApiProperty({ ...NULLABLE_STRING })
  owner!: string | null;

  @ApiProperty({ type: 'integer' })
  interval!: number;

  @ApiProperty({ type: 'number', nullable: true, description: 'Epoch seconds.' })
  start_time!: number | null;

  @ApiProperty({ type: 'number', nullable: true, description: 'Epoch seconds.' })
  end_time!: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  timeout!: number | null;

  @ApiProperty({ enum: ['INIT', 'WAITING', 'READY', 'RUNNING', 'SUSPENDED', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'WAITING_LIFECYCLE_COMPLETION'] })
  status!: string;

  @ApiProperty({ ...NULLABLE_STRING })
  status_reason!: string | null;

  @ApiProperty({ ...FREE_MAP })
  inputs!: Record<string, unknown>;

  @ApiProperty({ ...FREE_MAP, description: 'nodes_added, nodes_removed.' })
  outputs!: Record<string, unknown>;

  @ApiProperty({ type: [String] })
  depends_on!: string[];

  @ApiProperty({ type: [String] })
  depended_by!: string[];

  @ApiProperty({ ...TIME })
  created_at!: string | null;

  @ApiProperty({ ...TIME })
  updated_at!: string | null;

  @ApiProperty({ ...FREE_MAP, description: 'The policy decisions: placement, creation, deletion, status, reason.' })
  data!: Record<string, unknown>;

  @ApiProperty()
  user!: string;

  @ApiProperty()
  project!: string;
}

export class ActionEnvelope {
  @ApiProperty({ type: ActionView })
  action!: ActionView;
}

export class ActionList {
  @ApiProperty({ type: [ActionView] })
  actions!: ActionView[];
}

/** 202 body of POST /v1/clusters/{id}/actions; the Location header points at the action. */
export class ActionAccepted {
  @ApiProperty({ ...UUID, description: 'The id of the action to poll at GET /v1/actions/{action_id}.' })
  action!: string;
}

export class ActionReplayed {
  @ApiProperty({ ...UUID })
  action!: string;

  @ApiProperty({ enum: ['READY', 'RUNNING'] })
  status!: string;

  @ApiProperty({ example: 'replay' })
  cause!: string;

  @ApiProperty()
  message_id!: string;

  @ApiProperty()
  correlation_id!: string;
}

export class EventView {
  @ApiProperty({ ...UUID })
  id!: string;

  @ApiProperty({ ...TIME })
  timestamp!: string | null;

  @ApiProperty({ ...NULLABLE_STRING })
  oid!: string | null;

  @ApiProperty({ ...NULLABLE_STRING })
  oname!: string | null;

  @ApiProperty({ enum: ['CLUSTER', 'NODE'] })
  otype!: string;

  @ApiProperty({ ...NULLABLE_STRING })
  cluster_id!: string | null;

  @ApiProperty({ example: '20', description: 'Python logging level, as a string.' })
  level!: string;

  @ApiProperty({ ...NULLABLE_STRING })
  user!: string | null;

  @ApiProperty({ ...NULLABLE_STRING })
  project!: string | null;

  @ApiProperty({ ...NULLABLE_STRING, example: 'CLUSTER_SCALE_OUT' })
  action!: string | null;

  @ApiProperty({ ...NULLABLE_STRING })
  status!: string | null;

  @ApiProperty({ ...NULLABLE_STRING })
  status_reason!: string | null;

  @ApiProperty({ ...FREE_MAP, nullable: true })
  meta_data!: Record<string, unknown> | null;
}

export class EventEnvelope {
  @ApiProperty({ type: EventView })
  event!: EventView;
}

export class EventList {
  @ApiProperty({ type: [EventView] })
  events!: EventView[];
}

export class ClusterPolicyView {
  @ApiProperty({ ...UUID, description: 'The binding id.' })
  id!: string;

  @ApiProperty({ ...UUID })
  cluster_id!: string;

  @ApiProperty()
  cluster_name!: string;

  @ApiProperty({ ...UUID })
  policy_id!: string;

  @ApiProperty()
  policy_name!: string;

  @ApiProperty({ example: 'senlin.policy.zone_placement-1.0' })
  policy_type!: string;

  @ApiProperty({ type: 'boolean' })
  enabled!: boolean;

  @ApiProperty({ type: 'integer', example: 300 })
  priority!: number;

  @ApiProperty({ ...FREE_MAP })
  data!: Record<string, unknown>;

  @ApiProperty({ ...NULLABLE_STRING })
  last_op!: string | null;
}

export class ClusterPolicyEnvelope {
  @ApiProperty({ type: ClusterPolicyView })
  cluster_policy!: ClusterPolicyView;
}

export class ClusterPolicyList {
  @ApiProperty({ type: [ClusterPolicyView] })
  cluster_policies!: ClusterPolicyView[];
}

export class TypeSummary {
  @ApiProperty({ example: 'senlin.policy.zone_placement', description: 'Below 1.5: "<name>-<version>" and nothing else.' })
  name!: string;

  @ApiPropertyOptional({ example: '1.0', description: '>= 1.5.' })
  version?: string;

  @ApiPropertyOptional({ ...FREE_MAP, description: '>= 1.5: {"<version>": [{status, since}]}.' })
  support_status?: Record<string, unknown>;
}

export class TypeDetail {
  @ApiProperty({ example: 'senlin.policy.zone_placement-1.0' })
  name!: string;

  @ApiProperty({ ...FREE_MAP, description: 'Per property: type, required, updatable, description, default, constraints, schema.' })
  schema!: Record<string, unknown>;

  @ApiPropertyOptional({ ...FREE_MAP, description: '>= 1.5.' })
  support_status?: Record<string, unknown>;
}

export class PolicyTypeList {
  @ApiProperty({ type: [TypeSummary] })
  policy_types!: TypeSummary[];
}

export class PolicyTypeEnvelope {
  @ApiProperty({ type: TypeDetail })
  policy_type!: TypeDetail;
}

export class ProfileTypeList {
  @ApiProperty({ type: [TypeSummary] })
  profile_types!: TypeSummary[];
}

export class ProfileTypeEnvelope {
  @ApiProperty({ type: TypeDetail })
  profile_type!: TypeDetail;
}

export class ProfileTypeOps {
  @ApiProperty({ ...FREE_MAP, example: {}, description: 'Trellis runs no profile operations: always empty.' })
  operations!: Record<string, unknown>;
}

export class FindingView {
  @ApiProperty({ ...UUID })
  id!: string;

  @ApiProperty({ ...UUID })
  cluster_id!: string;

  @ApiProperty()
  kind!: string;

  @ApiProperty({ enum: ['OPEN', 'RESOLVED'] })
  status!: string;

  @ApiProperty({ ...NULLABLE_STRING })
  policy_id!: string | null;

  @ApiProperty({ ...NULLABLE_STRING })
  group_id!: string | null;

  @ApiProperty({ ...NULLABLE_STRING })
  host!: string | null;

  @ApiProperty({ type: [String] })
  node_ids!: string[];

  @ApiProperty()
  message!: string;

  @ApiProperty({ ...FREE_MAP, nullable: true })
  detail!: Record<string, unknown> | null;

  @ApiProperty({ ...NULLABLE_STRING })
  found_by!: string | null;

  @ApiProperty({ ...TIME })
  found_at!: string;

  @ApiProperty({ ...TIME })
  last_seen_at!: string;

  @ApiProperty({ ...NULLABLE_STRING })
  resolved_by!: string | null;

  @ApiProperty({ ...TIME })
  resolved_at!: string | null;
}

export class FindingList {
  @ApiProperty({ ...UUID })
  cluster_id!: string;

  @ApiProperty({ ...TIME, description: 'When the last drift check ran.' })
  checked_at!: string | null;

  @ApiProperty({ type: [FindingView] })
  findings!: FindingView[];
}

class DecisionRecord {
  @ApiProperty({ ...UUID })
  action_id!: string;

  @ApiProperty({ enum: ['pre_op', 'post_op', 'attach', 'detach'] })
  hook!: string;

  @ApiProperty({ ...TIME })
  created_at!: string;

  @ApiProperty({
    ...FREE_MAP,
    description:
      'The snapshot the engine decided from (POST /v1/evaluations format). Unless the caller is a cloud or project admin, ' +
      "host names are shown as Nova's hostId (sha224 of project id + host) and cloud.hypervisors is [] with cloud.hidden saying how many there were.",
  })
  input!: Record<string, unknown>;

  @ApiProperty({ ...FREE_MAP })
  output!: Record<string, unknown>;

  @ApiProperty({ ...FREE_MAP, nullable: true })
  plan!: Record<string, unknown> | null;

  @ApiProperty({ type: 'array', items: { ...FREE_MAP }, description: 'One entry per policy run.' })
  trace!: Array<Record<string, unknown>>;
}

export class DecisionEnvelope {
  @ApiProperty({ type: DecisionRecord })
  decision!: DecisionRecord;
}

class DryRunDecision {
  @ApiProperty({ enum: ['OK', 'FAILED'] })
  status!: string;

  @ApiProperty({ ...NULLABLE_STRING })
  reason!: string | null;

  @ApiProperty({ enum: ['pre_op', 'post_op', 'attach', 'detach'] })
  hook!: string;

  @ApiProperty({ ...FREE_MAP })
  input!: Record<string, unknown>;

  @ApiProperty({ ...FREE_MAP })
  output!: Record<string, unknown>;

  @ApiProperty({ ...FREE_MAP, nullable: true })
  plan!: Record<string, unknown> | null;

  @ApiProperty({ type: 'array', items: { ...FREE_MAP } })
  trace!: Array<Record<string, unknown>>;
}

/** 200 body of POST /v1/clusters/{id}/actions?dry_run=true: what the engine would decide, nothing stored. */
export class DryRunResult {
  @ApiProperty({ type: 'boolean', example: true })
  dry_run!: boolean;

  @ApiProperty({ ...FREE_MAP, example: { action: 'CLUSTER_SCALE_OUT', target: 'c1-uuid', inputs: { count: 1 } } })
  action!: Record<string, unknown>;

  @ApiProperty({ type: DryRunDecision })
  decision!: DryRunDecision;
}

/** libs/policies EvaluationOutput. */
export class EvaluationResult {
  @ApiProperty({ enum: ['pre_op', 'post_op', 'attach', 'detach'] })
  hook!: string;

  @ApiProperty({ enum: ['OK', 'ERROR'] })
  status!: string;

  @ApiProperty()
  reason!: string;

  @ApiProperty({ ...FREE_MAP, description: 'The action data the policies wrote (placement, creation, deletion, ...).' })
  data!: Record<string, unknown>;

  @ApiProperty({ ...FREE_MAP, nullable: true })
  plan!: Record<string, unknown> | null;

  @ApiProperty({ type: 'array', items: { ...FREE_MAP } })
  trace!: Array<Record<string, unknown>>;

  @ApiPropertyOptional({ type: 'array', items: { ...FREE_MAP }, description: 'pre_op / post_op.' })
  binding_updates?: Array<Record<string, unknown>>;

  @ApiPropertyOptional({ type: 'boolean', description: 'attach / detach.' })
  ok?: boolean;

  @ApiPropertyOptional({ ...FREE_MAP, description: 'attach / detach.' })
  binding_data?: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'attach / detach.' })
  message?: string;

  @ApiPropertyOptional({ type: 'array', items: { ...FREE_MAP } })
  cloud_changes?: Array<Record<string, unknown>>;
}

class SenlinErrorDetail {
  @ApiProperty({ type: 'integer', example: 400 })
  code!: number;

  @ApiProperty({ example: "'spec' is a required property" })
  message!: string;

  @ApiProperty({ example: 'BadRequest', description: 'Senlin exception class: HTTPBadRequest, BadRequest, ResourceNotFound, ActionConflict, ...' })
  type!: string;

  @ApiPropertyOptional({ description: 'Set on 500s: the id to find the failure in the logs.' })
  error_id?: string;
}

/** Senlin's fault-middleware document (core/error-body.ts), for every 4xx and 5xx. */
export class SenlinError {
  @ApiProperty({ type: 'integer', example: 400 })
  code!: number;

  @ApiProperty({ example: 'Bad Request' })
  title!: string;

  @ApiProperty({ example: 'The server could not comply with the request since it is either malformed or otherwise incorrect.' })
  explanation!: string;

  @ApiProperty({ type: SenlinErrorDetail })
  error!: SenlinErrorDetail;
}

class Revision {
  @ApiProperty({ example: '0.1.0' })
  revision!: string;
}

class BuildInfo {
  @ApiProperty({ type: Revision, description: 'The API service.' })
  api!: Revision;

  @ApiProperty({ type: Revision, description: 'The engine.' })
  engine!: Revision;
}

export class BuildInfoEnvelope {
  @ApiProperty({ type: BuildInfo })
  build_info!: BuildInfo;
}

class Service {
  @ApiProperty({ example: 'trellis-policy-engine' })
  binary!: string;

  @ApiProperty({ type: String, nullable: true, example: null })
  disabled_reason!: string | null;

  @ApiProperty({ example: 'node-1' })
  host!: string;

  @ApiProperty({ ...UUID })
  id!: string;

  @ApiProperty({ enum: ['up', 'down'], description: '`up` while the component renews its registration (every 10 s; `down` after 30 s without).' })
  state!: string;

  @ApiProperty({ enum: ['enabled', 'disabled'] })
  status!: string;

  @ApiProperty({ example: 'trellis.policy-engine.actions', description: 'The queue or endpoint the component serves.' })
  topic!: string;

  @ApiProperty({ example: '2026-11-25T17:40:00' })
  updated_at!: string;
}

export class ServiceList {
  @ApiProperty({ type: [Service] })
  services!: Service[];
}

class ClusterAttribute {
  @ApiProperty({ ...UUID, description: 'The node.' })
  id!: string;

  @ApiProperty({ description: 'What the path selects in the node (its first match).', example: 'node-1' })
  value!: unknown;
}

export class ClusterAttributes {
  @ApiProperty({ type: [ClusterAttribute] })
  cluster_attributes!: ClusterAttribute[];
}
