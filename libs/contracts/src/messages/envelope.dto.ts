import {
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Validate,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';

/** The schema version of every message type that has not needed a second one. */
export const SCHEMA_VERSION = 1;

/**
 * The schema versions a consumer of this release takes for a message type: the class's own
 * `static readonly schemaVersions`, or SCHEMA_VERSION alone. A type whose form changed in a way older
 * consumers cannot take (README "Upgrading a running deployment") lists its older versions too, so
 * messages written before an upgrade (queued, in the outbox, kept for a resend) are still taken.
 */
export function acceptedSchemaVersions(cls: unknown): readonly number[] {
  return (cls as { schemaVersions?: readonly number[] } | undefined)?.schemaVersions ?? [SCHEMA_VERSION];
}

@ValidatorConstraint({ name: 'isIn' })
class AcceptedSchemaVersion implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments): boolean {
    return acceptedSchemaVersions((args.object as object).constructor).includes(value as number);
  }

  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be one of the following values: ${acceptedSchemaVersions((args.object as object).constructor).join(', ')}`;
  }
}

/**
 * Fields every queue message carries: a unique message id (the idempotency key of consumers),
 * the schema version, the action the message belongs to and a correlation id that follows one
 * user request through every service and log line.
 */
export abstract class MessageEnvelope {
  @IsUUID()
  message_id: string;

  @IsInt()
  @Validate(AcceptedSchemaVersion)
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
