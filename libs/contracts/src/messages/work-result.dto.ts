import { Type } from 'class-transformer';
import { IsArray, IsIn, IsObject, IsOptional, IsString, IsUUID, ValidateNested } from 'class-validator';
import { MessageEnvelope } from './envelope.dto';

export class NodeOutcomeDto {
  @IsUUID()
  node_id: string;

  @IsIn(['ACTIVE', 'ERROR', 'DELETED', 'LEFT'])
  status: 'ACTIVE' | 'ERROR' | 'DELETED' | 'LEFT';

  @IsOptional()
  @IsString()
  physical_id?: string | null;

  @IsOptional()
  @IsString()
  zone?: string | null;

  @IsOptional()
  @IsString()
  host?: string | null;

  @IsOptional()
  @IsString()
  reason?: string | null;
}

/** nova-worker → policy-engine: everything in a work order reached a final state. */
export class WorkResultMessage extends MessageEnvelope {
  @IsOptional()
  @IsUUID()
  cluster_id: string | null;

  @IsIn(['SUCCEEDED', 'FAILED'])
  outcome: 'SUCCEEDED' | 'FAILED';

  @IsString()
  reason: string;

  // objects only: ValidateNested alone takes `[[]]` (found by the fuzz suite)
  @IsArray()
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => NodeOutcomeDto)
  nodes: NodeOutcomeDto[];

  /** server group refs of the work order → the ids Nova gave them */
  @IsObject()
  groups: Record<string, string>;
}
