import { ActionEntity } from './action.entity';
import { ActionStepEntity } from './action-step.entity';
import { CloudFactEntity } from './cloud-fact.entity';
import { ClusterFindingEntity } from './cluster-finding.entity';
import { ClusterPolicyEntity } from './cluster-policy.entity';
import { ClusterEntity } from './cluster.entity';
import { DecisionEntity } from './decision.entity';
import { EventEntity } from './event.entity';
import { IdempotencyKeyEntity } from './idempotency-key.entity';
import { NodeEntity } from './node.entity';
import { OutboxEntity } from './outbox.entity';
import { PolicyEntity } from './policy.entity';
import { ProcessedMessageEntity } from './processed-message.entity';
import { ProfileEntity } from './profile.entity';
import { ProjectHostCountEntity, ProjectHostEntity } from './project-host.entity';
import { ReceiverEntity } from './receiver.entity';
import { ServiceEntity } from './service.entity';
import { TrustEntity } from './trust.entity';
import { WorkOrderEntity, WorkOrderOpEntity } from './work-order.entity';

export {
  ActionEntity,
  ActionStepEntity,
  CloudFactEntity,
  ClusterEntity,
  ClusterFindingEntity,
  ClusterPolicyEntity,
  DecisionEntity,
  EventEntity,
  IdempotencyKeyEntity,
  NodeEntity,
  OutboxEntity,
  PolicyEntity,
  ProcessedMessageEntity,
  ProfileEntity,
  ProjectHostEntity,
  ProjectHostCountEntity,
  WorkOrderEntity,
  WorkOrderOpEntity,
  TrustEntity,
  ReceiverEntity,
  ServiceEntity,
};

export { row, type JsonObject } from './columns';

export const ALL_ENTITIES = [
  ActionEntity,
  CloudFactEntity,
  ClusterEntity,
  ClusterPolicyEntity,
  DecisionEntity,
  EventEntity,
  NodeEntity,
  OutboxEntity,
  PolicyEntity,
  ProcessedMessageEntity,
  ProfileEntity,
  WorkOrderEntity,
  ActionStepEntity,
  ClusterFindingEntity,
  TrustEntity,
  ReceiverEntity,
  ServiceEntity,
  IdempotencyKeyEntity,
  ProjectHostEntity,
  ProjectHostCountEntity,
  WorkOrderOpEntity,
];
