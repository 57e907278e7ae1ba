import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiQuery, ApiTags } from '@nestjs/swagger';
import { AcceptedAction, AcceptedDelete, Conflict, ListQuery, NotFound, Ok, RequestBody, SenlinApi } from '../openapi/api-docs.decorators';
import { ActionAccepted, NodeEnvelope, NodeList } from '../shared/views';
import { NodeActionRequest, NodeCreateBody, NodeOperationRequest, NodeUpdateBody } from './node.shapes';
import { acceptedNull, setActionLocation } from '../core/accepted';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import type { HttpResponse } from '../core/http.types';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { NodesService } from './nodes.service';
import { NodeActionsService } from './node-actions.service';
import { Operation } from '../core/policy.guard';

@ApiTags('nodes')
@SenlinApi()
@Controller('v1/nodes')
export class NodesController {
  constructor(
    private readonly nodes: NodesService,
    private readonly nodeActions: NodeActionsService,
  ) {}

  @Get()
  @Operation('nodes:index')
  @Ok(NodeList)
  @ListQuery({ filters: ['cluster_id', 'name', 'status'], sortKeys: ['index', 'name', 'status', 'init_at', 'created_at', 'updated_at'] })
  @ApiQuery({ name: 'show_details', required: false, type: Boolean })
  list(@Ctx() req: ApiRequest, @Query() query: Record<string, unknown>) {
    return this.nodes.list(req, query);
  }

  @Post()
  @Operation('nodes:create')
  @Idempotent()
  @HttpCode(202)
  @RequestBody(NodeCreateBody)
  @AcceptedAction(NodeEnvelope, 'The node; NODE_CREATE runs behind the Location.')
  async create(@Ctx() req: ApiRequest, @Body() body: unknown, @Res({ passthrough: true }) res: HttpResponse) {
    const accepted = await this.nodes.create(req, body);
    setActionLocation(res, req, accepted.actionId);
    return accepted.body;
  }

  @Get(':node_id')
  @Operation('nodes:get')
  @Ok(NodeEnvelope)
  @ApiQuery({ name: 'show_details', required: false, type: Boolean, description: 'Add the physical details.' })
  @NotFound()
  get(@Ctx() req: ApiRequest, @Param('node_id') id: string, @Query() query: Record<string, unknown>) {
    return this.nodes.get(req, id, query);
  }

  @Patch(':node_id')
  @Operation('nodes:update')
  @Idempotent()
  @HttpCode(202)
  @RequestBody(NodeUpdateBody)
  @AcceptedAction(NodeEnvelope, 'The node; NODE_UPDATE runs behind the Location.')
  @NotFound()
  async update(
    @Ctx() req: ApiRequest,
    @Param('node_id') id: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: HttpResponse,
  ) {
    const accepted = await this.nodes.update(req, id, body);
    setActionLocation(res, req, accepted.actionId);
    return accepted.body;
  }

  @Delete(':node_id')
  @Operation('nodes:delete')
  @Idempotent()
  @AcceptedDelete()
  @Conflict('The node is busy and force was not given.')
  async remove(
    @Ctx() req: ApiRequest,
    @Param('node_id') id: string,
    @Query() query: Record<string, unknown>,
    @Res({ passthrough: true }) res: HttpResponse,
  ): Promise<string> {
    const actionId = await this.nodes.remove(req, id, query);
    return acceptedNull(res, req, actionId);
  }

  @Post(':node_id/actions')
  @Operation('nodes:action')
  @Idempotent()
  @HttpCode(202)
  @RequestBody(NodeActionRequest, { description: 'Exactly one of `check` or `recover`, its value a map.' })
  @AcceptedAction(ActionAccepted, 'NODE_CHECK or NODE_RECOVER runs behind the Location.')
  @NotFound()
  @Conflict('Another action on the node or its cluster is active.')
  async act(@Ctx() req: ApiRequest, @Param('node_id') id: string, @Body() body: unknown, @Res({ passthrough: true }) res: HttpResponse) {
    const actionId = await this.nodeActions.act(req, id, body);
    setActionLocation(res, req, actionId);
    return { action: actionId };
  }

  @Post(':node_id/ops')
  @Operation('nodes:operation')
  @Idempotent()
  @HttpCode(202)
  @RequestBody(NodeOperationRequest, { description: '>= 1.4. Exactly one operation of the profile type (also pause, unpause, suspend, resume, lock, unlock, rescue, unrescue, evacuate).' })
  @AcceptedAction(ActionAccepted, 'NODE_OPERATION runs behind the Location.')
  @NotFound()
  async operate(@Ctx() req: ApiRequest, @Param('node_id') id: string, @Body() body: unknown, @Res({ passthrough: true }) res: HttpResponse) {
    const actionId = await this.nodeActions.operate(req, id, body);
    setActionLocation(res, req, actionId);
    return { action: actionId };
  }
}
