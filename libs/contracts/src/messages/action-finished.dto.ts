import { IsIn, IsOptional, IsString, IsUUID } from 'class-validator';
import { MessageEnvelope } from './envelope.dto';

/** policy-engine → anyone bound to trellis.events: an action reached SUCCEEDED, FAILED or CANCELLED. */
export class ActionFinishedMessage extends MessageEnvelope {
  @IsOptional()
  @IsUUID()
  cluster_id: string | null;

  @IsString()
  action: string;

  @IsIn(['SUCCEEDED', 'FAILED', 'CANCELLED'])
  status: 'SUCCEEDED' | 'FAILED' | 'CANCELLED';

  @IsString()
  status_reason: string;

  @IsString()
  project: string;
}
