import { IsIn, IsOptional, IsString, IsUUID } from 'class-validator';
import { MessageEnvelope } from './envelope.dto';

/** Why an action message was (re)published: first submission, a replay, lease-expiry resume, or a cancel request. */
export const ActionMessageCauses = ['submitted', 'replay', 'resume', 'cancel'] as const;
export type ActionMessageCause = (typeof ActionMessageCauses)[number];

/**
 * gateway → policy-engine: "action <id> is stored and READY; run its policy chain".
 * The action itself (inputs, target) lives in the database; the message only points at it.
 */
export class ActionRequestedMessage extends MessageEnvelope {
  @IsOptional()
  @IsUUID()
  cluster_id: string | null;

  @IsString()
  action: string;

  @IsString()
  project: string;

  @IsIn(ActionMessageCauses)
  cause: ActionMessageCause;
}
