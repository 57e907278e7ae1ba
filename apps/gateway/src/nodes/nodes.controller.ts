import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { setActionLocation } from '../core/accepted';
import type { HttpResponse } from '../core/http.types';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { NodesService } from './nodes.service';

@ApiTags('nodes')
@Controller('v1/nodes')
export class NodesController {
  constructor(private readonly nodes: NodesService) {}

  @Get()
  list(@Ctx() req: ApiRequest, @Query() query: Record<string, unknown>) {
    return this.nodes.list(req, query);
  }

  @Post()
  @HttpCode(202)
  async create(@Ctx() req: ApiRequest, @Body() body: unknown, @Res({ passthrough: true }) res: HttpResponse) {
    const accepted = await this.nodes.create(req, body);
    setActionLocation(res, req, accepted.actionId);
    return accepted.body;
  }

  @Get(':node_id')
  get(@Ctx() req: ApiRequest, @Param('node_id') id: string, @Query() query: Record<string, unknown>) {
    return this.nodes.get(req, id, query);
  }

  @Patch(':node_id')
  @HttpCode(202)
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
  async remove(
    @Ctx() req: ApiRequest,
    @Param('node_id') id: string,
    @Query() query: Record<string, unknown>,
    @Res() res: HttpResponse,
  ): Promise<void> {
    const actionId = await this.nodes.remove(req, id, query);
    setActionLocation(res, req, actionId);
    res.status(202).type('application/json').send('null');
  }
}
