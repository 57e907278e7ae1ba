import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { setActionLocation } from '../core/accepted';
import type { HttpResponse } from '../core/http.types';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { ActionsService } from './actions.service';

@ApiTags('actions')
@Controller('v1/actions')
export class ActionsController {
  constructor(private readonly actions: ActionsService) {}

  @Get()
  list(@Ctx() req: ApiRequest, @Query() query: Record<string, unknown>) {
    return this.actions.list(req, query);
  }

  @Get(':action_id')
  get(@Ctx() req: ApiRequest, @Param('action_id') id: string) {
    return this.actions.get(req, id);
  }

  @Post(':action_id/replay')
  @HttpCode(202)
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
