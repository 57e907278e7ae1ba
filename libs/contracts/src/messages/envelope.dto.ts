import { IsIn, IsInt, IsOptional, IsString, IsUUID, Matches } from 'class-validator';

export const SCHEMA_VERSION = 1;

/**
 * Fields every queue message carries: a unique message id (the idempotency key of consumers),
 * the schema version, the action the message belongs to and a correlation id that follows one
 * user request through every service and log line.
 */
export abstract class MessageEnvelope {
  @IsUUID()
  message_id: string;

  @IsInt()
  @IsIn([SCHEMA_VERSION])
  schema_version: number;

  @IsUUID()
  action_id: string;

  @IsString()
  @Matches(/^[A-Za-z0-9._:-]{1,128}$/)
  correlation_id: string;

  @IsOptional()
  @IsString()
  sent_at?: string;
}
