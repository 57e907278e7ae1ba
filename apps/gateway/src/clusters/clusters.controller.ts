import { badRequest } from '@trellis/common';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { setActionLocation } from '../core/accepted';
import type { HttpResponse } from '../core/http.types';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { ClusterActionsService } from './cluster-actions.service';
import { ClustersService } from './clusters.service';

@ApiTags('clusters')
@Controller('v1/clusters')
export class ClustersController {
  constructor(
    private readonly clusters: ClustersService,
    private readonly actions: ClusterActionsService,
  ) {}

  @Get()
  list(@Ctx() req: ApiRequest, @Query() query: Record<string, unknown>) {
    return this.clusters.list(req, query);
  }

  @Post()
  @HttpCode(202)
  async create(@Ctx() req: ApiRequest, @Body() body: unknown, @Res({ passthrough: true }) res: HttpResponse) {
    const accepted = await this.clusters.create(req, body);
    setActionLocation(res, req, accepted.actionId);
    return accepted.body;
  }

  @Get(':cluster_id')
  get(@Ctx() req: ApiRequest, @Param('cluster_id') id: string) {
    return this.clusters.get(req, id);
  }

  @Patch(':cluster_id')
  @HttpCode(202)
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

  /** Senlin answers a delete with the JSON document `null`. */
  @Delete(':cluster_id')
  async remove(
    @Ctx() req: ApiRequest,
    @Param('cluster_id') id: string,
    @Query() query: Record<string, unknown>,
    @Res() res: HttpResponse,
  ): Promise<void> {
    const actionId = await this.clusters.remove(req, id, query);
    setActionLocation(res, req, actionId);
    res.status(202).type('application/json').send('null');
  }

  @Post(':cluster_id/actions')
  @HttpCode(202)
  async act(
    @Ctx() req: ApiRequest,
    @Param('cluster_id') id: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: HttpResponse,
    @Query('dry_run') dryRun?: string,
  ) {
    if (parseDryRun(dryRun)) {
      res.status(200);
      return this.actions.dryRun(req, id, body);
    }
    const actionId = await this.actions.perform(req, id, body);
    setActionLocation(res, req, actionId);
    return { action: actionId };
  }
}

/** `dry_run` takes Senlin's boolean strings; anything else is a 400 naming the parameter. */
function parseDryRun(value: string | undefined): boolean {
  if (value === undefined) return false;
  const v = value.toLowerCase();
  if (['1', 't', 'true', 'y', 'yes', 'on'].includes(v)) return true;
  if (['0', 'f', 'false', 'n', 'no', 'off'].includes(v)) return false;
  throw badRequest(`Invalid value '${value}' specified for 'dry_run'`);
}
