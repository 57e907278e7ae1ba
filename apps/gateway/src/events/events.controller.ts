import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ListQuery, NotFound, Ok, SenlinApi } from '../openapi/api-docs.decorators';
import { badRequest } from '@trellis/common';
import { ClusterEntity, EventEntity } from '@trellis/persistence/entities';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { UnitOfWork } from '../infra/unit-of-work';
import { ACTION_NAME_FILTER, parseListQuery, runList, whereUuidIn } from '../shared/list-query';
import { INT4_MAX, pyList } from '../shared/body';
import { HostVisibility } from '../shared/host-visibility';
import { lookup, mustFind } from '../shared/lookup';
import { EventEnvelope, EventList, eventView } from '../shared/views';
import { Operation } from '../core/policy.guard';

const LIST = {
  filters: ['oname', 'otype', 'oid', 'cluster_id', 'action', 'level'],
  sortKeys: ['timestamp', 'level', 'otype', 'oname', 'action', 'status', 'oid', 'cluster_id'],
  enums: { action: ACTION_NAME_FILTER },
} as const;

/** Python logging levels, as the level filter accepts them by name. */
const LEVELS: Record<string, number> = { CRITICAL: 50, ERROR: 40, WARN: 30, WARNING: 30, INFO: 20, DEBUG: 10 };

@ApiTags('events')
@SenlinApi()
@Controller('v1/events')
export class EventsController {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly hosts: HostVisibility,
  ) {}

  @Get()
  @Operation('events:index')
  @Ok(EventList)
  @ListQuery(LIST)
  async list(@Ctx() req: ApiRequest, @Query() query: Record<string, unknown>) {
    const q = parseListQuery(query, LIST, req);
    const manager = this.uow.manager;
    const qb = manager.getRepository(EventEntity).createQueryBuilder('e');
    if (q.filters.level) {
      const levels = q.filters.level.map((l) => {
        // a number beyond the int4 level column is no level any event has, and PostgreSQL would refuse to compare it
        const n = LEVELS[l.toUpperCase()] ?? (/^\d+$/.test(l) && Number(l) <= INT4_MAX ? Number(l) : undefined);
        if (n === undefined) throw badRequest(`Field value ${l} is invalid`);
        return n;
      });
      qb.andWhere('e.level IN (:...levels)', { levels });
    }
    if (q.filters.cluster_id) {
      const ids: string[] = [];
      for (const identity of q.filters.cluster_id) {
        const cluster = await lookup(manager, ClusterEntity, identity, { project: q.globalProject ? null : req.caller.projectId });
        ids.push(cluster?.id ?? identity);
      }
      whereUuidIn(qb, 'cluster_id', ids, 'clusterIds');
    }
    if (q.filters.oid) whereUuidIn(qb, 'oid', q.filters.oid, 'oids');
    if (q.filters.oname) qb.andWhere('e.oname IN (:...onames)', { onames: q.filters.oname });
    if (q.filters.otype) qb.andWhere('e.otype IN (:...otypes)', { otypes: q.filters.otype });
    if (q.filters.action) qb.andWhere('e.action IN (:...actions)', { actions: q.filters.action });
    const rows = await runList(qb, q, req.caller, [{ key: 'timestamp', dir: 'ASC' }]);
    // replacement and drift events name hosts
    const show = await this.hosts.forCaller(manager, req.caller);
    return { events: rows.map((e) => show(eventView(e), e.project)) };
  }

  @Get(':event_id')
  @Operation('events:get')
  @Ok(EventEnvelope)
  @NotFound()
  async show(@Ctx() req: ApiRequest, @Param('event_id') id: string) {
    const event = await mustFind(this.uow.manager, EventEntity, 'event', id, { project: req.caller.projectId, byName: false });
    const show = await this.hosts.forCaller(this.uow.manager, req.caller);
    return { event: show(eventView(event), event.project) };
  }
}
