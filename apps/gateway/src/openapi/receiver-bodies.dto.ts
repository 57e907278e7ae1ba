import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/* Documentation-only classes for receivers and webhooks (receivers/ builds and checks the bodies). */

const FREE_MAP = { type: 'object', additionalProperties: true } as const;
const TIME = { type: 'string', format: 'date-time', nullable: true, example: '2016-01-18T00:00:00Z' } as const;
const NAME = { type: 'string', minLength: 1, maxLength: 255, pattern: '^[a-zA-Z\\u4e00-\\u9fa5\\d\\.\\_\\~-]*$' } as const;
const ACTION = { type: 'string', example: 'CLUSTER_SCALE_OUT', description: "A Senlin cluster action name (not CLUSTER_CREATE); Trellis webhooks run scaling, resize, check, node and policy actions." } as const;

export class ReceiverCreateFields {
  @ApiProperty({ ...NAME, example: 'r1' })
  name!: string;

  @ApiProperty({ enum: ['webhook', 'message'], description: 'message needs Zaqar, which Trellis does not have (500 EResourceCreation).' })
  type!: string;

  @ApiPropertyOptional({ example: 'c1', description: 'The target cluster (required for a webhook): a UUID, a name or a short-id prefix.' })
  cluster_id?: string;

  @ApiPropertyOptional({ ...ACTION, description: `${ACTION.description} Required for a webhook.` })
  action?: string;

  @ApiPropertyOptional({ ...FREE_MAP, description: 'Accepted and ignored, as Senlin: the owner is the caller.' })
  actor?: Record<string, unknown>;

  @ApiPropertyOptional({ ...FREE_MAP, example: { count: 1 }, description: 'The action parameters.' })
  params?: Record<string, unknown>;
}

export class ReceiverCreateRequest {
  @ApiProperty({ type: ReceiverCreateFields })
  receiver!: ReceiverCreateFields;
}

export class ReceiverUpdateFields {
  @ApiPropertyOptional({ ...NAME })
  name?: string;

  @ApiPropertyOptional({ ...ACTION })
  action?: string;

  @ApiPropertyOptional({ ...FREE_MAP })
  params?: Record<string, unknown>;
}

export class ReceiverUpdateRequest {
  @ApiProperty({ type: ReceiverUpdateFields, description: 'Microversion 1.7 or later; at least one changed field.' })
  receiver!: ReceiverUpdateFields;
}

export class ReceiverView {
  @ApiProperty({ type: 'string', format: 'uuid', description: "Also the webhook's credential: treat it as a secret." })
  id!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({ example: 'webhook' })
  type!: string;

  @ApiProperty({ description: 'Keystone user id of the owner, whom a trigger acts as.' })
  user!: string;

  @ApiProperty()
  project!: string;

  @ApiProperty({ type: 'string', nullable: true })
  domain!: string | null;

  @ApiProperty({ ...TIME })
  created_at!: string | null;

  @ApiProperty({ ...TIME })
  updated_at!: string | null;

  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  cluster_id!: string | null;

  @ApiProperty({ ...FREE_MAP, example: { trust_id: '4e0c...' }, description: "The owner's Keystone trust when the receiver was made." })
  actor!: Record<string, unknown>;

  @ApiProperty({ ...ACTION, nullable: true })
  action!: string | null;

  @ApiProperty({ ...FREE_MAP })
  params!: Record<string, unknown>;

  @ApiProperty({ ...FREE_MAP, example: { alarm_url: 'http://trellis:8778/v1/webhooks/<id>/trigger?V=2&count=1' } })
  channel!: Record<string, unknown>;
}

export class ReceiverEnvelope {
  @ApiProperty({ type: ReceiverView })
  receiver!: ReceiverView;
}

export class ReceiverList {
  @ApiProperty({ type: [ReceiverView] })
  receivers!: ReceiverView[];
}

export class WebhookTriggerBody {
  @ApiPropertyOptional({ ...FREE_MAP, description: 'Merged over the receiver params (the body itself is the parameters from 1.10 or with V=2).' })
  params?: Record<string, unknown>;
}

export class WebhookAccepted {
  @ApiProperty({ type: 'string', format: 'uuid', description: 'The id of the action to poll at GET /v1/actions/{action_id}.' })
  action!: string;
}
