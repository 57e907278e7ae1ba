import { InitialSchema1795309817000 } from './1795309817000-initial-schema';
import { DriftFindings1795400000000 } from './1795400000000-drift-findings';
import { ProjectCloudFacts1795500000000 } from './1795500000000-project-cloud-facts';
import { Trusts1795600000000 } from './1795600000000-trusts';
import { WorkOrderLeases1795700000000 } from './1795700000000-work-order-leases';
import { Receivers1795800000000 } from './1795800000000-receivers';
import { ListIndexes1795900000000 } from './1795900000000-list-indexes';
import { IdempotencyKeys1795910000000 } from './1795910000000-idempotency-keys';
import { Services1795920000000 } from './1795920000000-services';
import { RetentionIndexes1795930000000 } from './1795930000000-retention-indexes';
import { BigClusterIndexes1795945000000 } from './1795945000000-big-cluster-indexes';
import { SnapshotCandidateIndexes1795960000000 } from './1795960000000-snapshot-candidate-indexes';
import { NodePlacementZone1795970000000 } from './1795970000000-node-placement-zone';
import { ServiceAccepts1795980000000 } from './1795980000000-service-accepts';
import { OutboxSetAside1795990000000 } from './1795990000000-outbox-set-aside';
import { ProjectHosts1796000000000 } from './1796000000000-project-hosts';
import { WorkOrderOpsDone1796010000000 } from './1796010000000-work-order-ops-done';
import { WorkOrderOps1796020000000 } from './1796020000000-work-order-ops';

/** In the order they run. A new migration gets a later timestamp and goes at the end. */
export const ALL_MIGRATIONS = [
  InitialSchema1795309817000,
  DriftFindings1795400000000,
  ProjectCloudFacts1795500000000,
  Trusts1795600000000,
  WorkOrderLeases1795700000000,
  Receivers1795800000000,
  ListIndexes1795900000000,
  IdempotencyKeys1795910000000,
  Services1795920000000,
  RetentionIndexes1795930000000,
  BigClusterIndexes1795945000000,
  SnapshotCandidateIndexes1795960000000,
  NodePlacementZone1795970000000,
  ServiceAccepts1795980000000,
  OutboxSetAside1795990000000,
  ProjectHosts1796000000000,
  WorkOrderOpsDone1796010000000,
  WorkOrderOps1796020000000,
];

export { InitialSchema1795309817000, DriftFindings1795400000000, ProjectCloudFacts1795500000000, Trusts1795600000000, WorkOrderLeases1795700000000, Receivers1795800000000, ListIndexes1795900000000, IdempotencyKeys1795910000000, Services1795920000000, RetentionIndexes1795930000000, BigClusterIndexes1795945000000, SnapshotCandidateIndexes1795960000000, NodePlacementZone1795970000000, ServiceAccepts1795980000000, OutboxSetAside1795990000000, ProjectHosts1796000000000, WorkOrderOpsDone1796010000000, WorkOrderOps1796020000000 };
