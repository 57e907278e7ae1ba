import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { MessageEnvelope } from './envelope.dto';

/** Where one new server goes: the merged output of the placement policies for that node. */
export class PlacementDto {
  @IsOptional()
  @IsString()
  zone?: string;

  @IsOptional()
  @IsString()
  servergroup?: string;
}

export class ServerCreateDto {
  @IsUUID()
  node_id: string;

  @IsString()
  name: string;

  @IsInt()
  @Min(0)
  index: number;

  // an object, not a list: ValidateNested alone takes `[]` (found by the fuzz suite)
  @IsObject()
  @ValidateNested()
  @Type(() => PlacementDto)
  placement: PlacementDto;

  /**
   * the os.nova.server profile properties (flavor, image, networks, metadata, scheduler_hints, ...)
   * this server boots from, when they are not the order's `profile`: work orders of schema_version 1
   * carry them here for every server, those of version 2 once, on the order (serverProfile())
   */
  @IsOptional()
  @IsObject()
  profile?: Record<string, unknown>;

  @IsOptional()
  @IsObject()
  metadata?: Record<string, string>;
}

export class ServerDeleteDto {
  @IsUUID()
  node_id: string;

  @IsOptional()
  @IsString()
  physical_id: string | null;

  /** false: the node leaves the cluster but its server survives (deletion policy's destroy_after_deletion) */
  @IsBoolean()
  destroy: boolean;
}

/**
 * An operation on a node's existing server (NODE_CHECK, NODE_RECOVER, NODE_OPERATION): `check`
 * looks the server up, `rebuild`/`reboot`/`start`/`stop`/... are Nova server actions with the
 * profile operation's parameters; `update` (NODE_UPDATE, CLUSTER_UPDATE with a new profile) moves
 * the server to a new profile, its params a ServerUpdateParams.
 */
export class ServerOpDto {
  @IsUUID()
  node_id: string;

  @IsOptional()
  @IsString()
  physical_id: string | null;

  @IsString()
  op: string;

  @IsObject()
  params: Record<string, unknown> = {};
}

/**
 * The params of an `update` server op: what the new profile changes, each key only when it
 * changes (the engine compares the old and new profiles' properties).
 */
export interface ServerUpdateParams {
  /** rebuild from this image (an id, or a name the worker's client looks up) */
  image?: string;
  /** resize to this flavor (an id or a name), then confirm */
  flavor?: string;
  /** the server's new name */
  name?: string;
  /** the profile's metadata the server carries from now on (Trellis's own tags are kept) */
  metadata?: Record<string, string>;
}

export class ServerGroupCreateDto {
  /** placeholder the engine used in the decision; the worker reports the real id under this ref */
  @IsString()
  ref: string;

  @IsString()
  name: string;

  @IsString()
  policy: string;

  @IsOptional()
  @IsObject()
  rules?: Record<string, unknown>;
}

export class ServerGroupDeleteDto {
  @IsString()
  id: string;
}

/**
 * The schema_version engines of this release write on work orders. Version 2 carries the profile
 * properties once, on the order, where version 1 repeated them on every server to create (a
 * 1,000-node scale-out of a profile with 64 KB of user_data was a 64 MB message, above RabbitMQ 4's
 * default 16 MiB limit). Workers of this release take both; workers of the release before
 * dead-letter version 2, naming schema_version (README "Upgrading a running deployment").
 */
export const WORK_ORDER_SCHEMA_VERSION = 2;

/**
 * policy-engine → nova-worker: what to change in Nova for one action, as decided by the chain.
 * Server groups are created first (their refs are resolved in the placements), then servers are
 * created, then servers deleted, then groups deleted.
 */
export class WorkOrderMessage extends MessageEnvelope {
  /** version 1: orders written before WORK_ORDER_SCHEMA_VERSION, still queued, stored or resent */
  static readonly schemaVersions: readonly number[] = [1, WORK_ORDER_SCHEMA_VERSION];

  @IsOptional()
  @IsUUID()
  cluster_id: string | null;

  @IsString()
  project: string;

  /**
   * whose Keystone trust the worker acts with in the project's Nova: the user who started the
   * action (docs/SECURITY.md)
   */
  @IsString()
  user: string;

  @IsString()
  action: string;

  @IsIn(['create', 'delete', 'mixed', 'cloud', 'ops'])
  kind: 'create' | 'delete' | 'mixed' | 'cloud' | 'ops';

  // each list holds objects: ValidateNested alone takes `[[]]` (found by the fuzz suite)
  @IsArray()
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => ServerGroupCreateDto)
  create_groups: ServerGroupCreateDto[] = [];

  @IsArray()
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => ServerCreateDto)
  create_servers: ServerCreateDto[] = [];

  /**
   * the profile properties every server of `create_servers` boots from, unless it carries its own
   * (absent in version 1, where each server carries them); required as soon as one server has none
   */
  @ValidateIf((o: WorkOrderMessage) => Array.isArray(o.create_servers) && o.create_servers.some((c) => isRecord(c) && c.profile === undefined))
  @IsObject()
  profile?: Record<string, unknown>;

  @IsArray()
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => ServerDeleteDto)
  delete_servers: ServerDeleteDto[] = [];

  @IsArray()
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => ServerGroupDeleteDto)
  delete_groups: ServerGroupDeleteDto[] = [];

  /** operations on existing servers (absent in orders of engines before node operations) */
  @IsOptional()
  @IsArray()
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => ServerOpDto)
  server_ops?: ServerOpDto[];

  /** seconds a server may stay in BUILD before the worker gives up on it */
  @IsInt()
  @Min(1)
  build_timeout: number;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The profile properties a server of the order boots from: its own (version 1), else the order's. */
export function serverProfile(order: Pick<WorkOrderMessage, 'profile'>, create: Pick<ServerCreateDto, 'profile'>): Record<string, unknown> {
  return create.profile ?? order.profile ?? {};
}

/**
 * The order in the form of schema `version`, for nova-workers that take no newer one (a rolling
 * upgrade with workers of the release before still up). Version 2 (and the order as the engine builds
 * it) is returned as it is; version 1 repeats the order's profile on every server to create and has
 * no `profile` of its own. The worker builds the same Nova requests from both forms.
 */
export function workOrderAs(order: WorkOrderMessage, version: number): WorkOrderMessage {
  if (version >= WORK_ORDER_SCHEMA_VERSION) return order.schema_version === WORK_ORDER_SCHEMA_VERSION ? order : { ...order, schema_version: WORK_ORDER_SCHEMA_VERSION };
  if (version !== 1) throw new Error(`work orders have no schema_version ${version}`);
  const { profile, ...rest } = order;
  return {
    ...rest,
    schema_version: 1,
    create_servers: order.create_servers.map((c) => ({ ...c, profile: serverProfile({ profile }, c) })),
  };
}
