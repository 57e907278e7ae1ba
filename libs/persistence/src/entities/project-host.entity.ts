import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A host name a node of the project has recorded (`data.placement.host`), ever: the names the
 * gateway hides from the project's members besides the cloud-wide facts' (docs/SECURITY.md), for a
 * node whose host has left the facts. Kept by PostgreSQL (a trigger on nodes, migration
 * 1796000000000); nobody writes it, and rows are never deleted (a name hidden once stays hidden).
 */
@Entity('project_hosts')
export class ProjectHostEntity {
  @PrimaryColumn('varchar', { length: 64 }) project: string;
  @PrimaryColumn('text') host: string;
}

/**
 * How many rows project_hosts holds for the project, written by the same trigger in the same
 * transaction as the row: the gateway reads this one row per request and reads the names again only
 * when it changed (with 10,000 hosts in a project, finding them in nodes took ~50 ms a request).
 */
@Entity('project_host_counts')
export class ProjectHostCountEntity {
  @PrimaryColumn('varchar', { length: 64 }) project: string;
  @Column('int') hosts: number;
}
