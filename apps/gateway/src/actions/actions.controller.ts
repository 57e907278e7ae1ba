import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiTags } from '@nestjs/swagger';
import { AcceptedAction, Conflict, ListQuery, NotFound, Ok, RequestBody, SenlinApi } from '../openapi/api-docs.decorators';
import { ActionEnvelope, ActionList } from '../shared/views';
import { ActionReplayed, ActionUpdateBody, ReplayBody } from './action.shapes';
import { setActionLocation } from '../core/accepted';
import type { HttpResponse } from '../core/http.types';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { ActionsService } from './actions.service';
import { Operation } from '../core/policy.guard';

@ApiTags('actions')
@SenlinApi()
@Controller('v1/actions')
export class ActionsController {
  constructor(private readonly actions: ActionsService) {}

  @Get()
  @Operation('actions:index')
  @Ok(ActionList)
  @ListQuery({ filters: ['name', 'cluster_id', 'target', 'action', 'status'], sortKeys: ['name', 'target', 'action', 'created_at', 'status'] })
  list(@Ctx() req: ApiRequest, @Query() query: Record<string, unknown>) {
    return this.actions.list(req, query);
  }

  @Get(':action_id')
  @Operation('actions:get')
  @Ok(ActionEnvelope)
  @NotFound()
  get(@Ctx() req: ApiRequest, @Param('action_id') id: string) {
    return this.actions.get(req, id);
  }

  @Patch(':action_id')
  @Operation('actions:update')
  @RequestBody(ActionUpdateBody, { description: 'Cancel the action (>= 1.12); `?force=true` is accepted.' })
  @ApiAcceptedResponse({ description: 'The cancel was accepted; the body is the JSON document null.', schema: { type: 'object', nullable: true, example: null } })
  @NotFound()
  @Conflict('The action has ended already (ActionImmutable).')
  async cancel(
    @Ctx() req: ApiRequest,
    @Param('action_id') id: string,
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
    @Res() res: HttpResponse,
  ): Promise<void> {
    const actionId = await this.actions.cancel(req, id, body, query);
    setActionLocation(res, req, actionId);
    res.status(202).type('application/json').send('null');
  }

  @Post(':action_id/replay')
  @Operation('actions:replay')
  @HttpCode(202)
  @RequestBody(ReplayBody, { required: false })
  @AcceptedAction(ActionReplayed, 'The READY or RUNNING action was announced again.')
  @NotFound()
  @Conflict('The action is not READY or RUNNING.')
  async replay(
    @Ctx() req: ApiRequest,
    @Param('action_id') id: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: HttpResponse,
  ) {
    const replayed = await this.actions.replay(req, id, body);
    setActionLocation(res, req, replayed.id);
    return replayed.body;
  }
}
