import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import { AcceptedAction, AcceptedDelete, Conflict, ListQuery, NotFound, Ok, RequestBody, SenlinApi } from '../openapi/api-docs.decorators';
import { DryRunResult } from '../decisions/decision.shapes';
import { ActionAccepted, ClusterEnvelope, ClusterList } from '../shared/views';
import { ClusterActionRequest, ClusterCreateBody, ClusterUpdateBody } from './cluster.shapes';
import { ClusterOperationRequest } from './cluster-operation.shapes';
import { acceptedNull, setActionLocation } from '../core/accepted';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import type { HttpResponse } from '../core/http.types';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { ClusterActionsService } from './cluster-actions.service';
import { ClustersService } from './clusters.service';
import { ClusterAttributes, ClusterCollectService } from './cluster-collect.service';
import { Operation } from '../core/policy.guard';
import { clusterActionOperationsOf } from './cluster-action-operations';
import { boolParam } from '../shared/body';
import type { OutOf } from '../shapes/response';

@ApiTags('clusters')
@SenlinApi()
@Controller('v1/clusters')
export class ClustersController {
  constructor(
    private readonly clusters: ClustersService,
    private readonly actions: ClusterActionsService,
    private readonly attributes: ClusterCollectService,
  ) {}

  @Get()
  @Operation('clusters:index')
  @Ok(ClusterList)
  @ListQuery({ filters: ['name', 'status'], sortKeys: ['name', 'status', 'init_at', 'created_at', 'updated_at'] })
  list(@Ctx() req: ApiRequest, @Query() query: Record<string, unknown>) {
    return this.clusters.list(req, query);
  }

  @Post()
  @Operation('clusters:create')
  @Idempotent()
  @HttpCode(202)
  @RequestBody(ClusterCreateBody)
  @AcceptedAction(ClusterEnvelope, 'The cluster, in status INIT; CLUSTER_CREATE runs behind the Location.')
  async create(@Ctx() req: ApiRequest, @Body() body: unknown, @Res({ passthrough: true }) res: HttpResponse) {
    const accepted = await this.clusters.create(req, body);
    setActionLocation(res, req, accepted.actionId);
    return accepted.body;
  }

  @Get(':cluster_id')
  @Operation('clusters:get')
  @Ok(ClusterEnvelope)
  @NotFound()
  get(@Ctx() req: ApiRequest, @Param('cluster_id') id: string) {
    return this.clusters.get(req, id);
  }

  @Patch(':cluster_id')
  @Operation('clusters:update')
  @Idempotent()
  @HttpCode(202)
  @RequestBody(ClusterUpdateBody)
  @AcceptedAction(ClusterEnvelope, 'The cluster; CLUSTER_UPDATE runs behind the Location.')
  @NotFound()
  @Conflict('Another action holds the cluster.')
  async update(
    @Ctx() req: ApiRequest,
    @Param('cluster_id') id: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: HttpResponse,
  ) {
    const accepted = await this.clusters.update(req, id, body);
    setActionLocation(res, req, accepted.actionId);
    return accepted.body;
  }

  @Get(':cluster_id/attrs/:path')
  @Operation('clusters:collect')
  @Ok(ClusterAttributes, '>= 1.2. The value the path selects in each member node that has one.')
  @NotFound()
  collect(@Ctx() req: ApiRequest, @Param('cluster_id') id: string, @Param('path') path: string) {
    return this.attributes.collect(req, id, path);
  }

  /** Senlin answers a delete with the JSON document `null`. */
  @Delete(':cluster_id')
  @Operation('clusters:delete')
  @Idempotent()
  @AcceptedDelete()
  @Conflict('The cluster is busy (CREATING, UPDATING, DELETING, RECOVERING) and force was not given.')
  async remove(
    @Ctx() req: ApiRequest,
    @Param('cluster_id') id: string,
    @Query() query: Record<string, unknown>,
    @Res({ passthrough: true }) res: HttpResponse,
  ): Promise<string> {
    const actionId = await this.clusters.remove(req, id, query);
    return acceptedNull(res, req, actionId);
  }

  @Post(':cluster_id/actions')
  @Operation(clusterActionOperationsOf)
  @Idempotent()
  @HttpCode(202)
  @RequestBody(ClusterActionRequest, { description: 'Exactly one action key; its value may be null for an empty map.' })
  @ApiQuery({ name: 'dry_run', required: false, type: Boolean, description: 'Decide without acting: 200 with the decision, nothing stored.' })
  // the 202 or, with dry_run, the 200: the handler answers one of the two
  @AcceptedAction<OutOf<typeof ActionAccepted> | OutOf<typeof DryRunResult>>(ActionAccepted, 'The action was created.')
  @ApiOkResponse({ schema: DryRunResult.ref, description: 'With dry_run=true: what the engine would decide now.' })
  @NotFound()
  @Conflict('Locked cluster, conflicting action, scaling cooldown, or an unsupported action.')
  async act(
    @Ctx() req: ApiRequest,
    @Param('cluster_id') id: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: HttpResponse,
    @Query('dry_run') dryRun?: string,
  ) {
    if (dryRun !== undefined && boolParam(dryRun, 'dry_run')) {
      res.status(200);
      return this.actions.dryRun(req, id, body);
    }
    const actionId = await this.actions.perform(req, id, body);
    setActionLocation(res, req, actionId);
    return { action: actionId };
  }

  @Post(':cluster_id/ops')
  @Operation('clusters:operation')
  @Idempotent()
  @HttpCode(202)
  @RequestBody(ClusterOperationRequest, {
    description: '>= 1.4. Exactly one operation of the profile type (also pause, unpause, suspend, resume, lock, unlock, rescue, unrescue, evacuate), with `params` and `filters`.',
  })
  @AcceptedAction(ActionAccepted, 'CLUSTER_OPERATION runs behind the Location: the operation on the server of every member the filters pick.')
  @NotFound()
  @Conflict('Locked cluster or a conflicting action.')
  async operate(@Ctx() req: ApiRequest, @Param('cluster_id') id: string, @Body() body: unknown, @Res({ passthrough: true }) res: HttpResponse) {
    const actionId = await this.actions.operate(req, id, body);
    setActionLocation(res, req, actionId);
    return { action: actionId };
  }
}
