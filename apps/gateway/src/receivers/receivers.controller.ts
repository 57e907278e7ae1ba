import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiTags } from '@nestjs/swagger';
import { Conflict, Created, Fails, ListQuery, NotFound, Ok, RequestBody, SenlinApi } from '../openapi/api-docs.decorators';
import { ReceiverEnvelope, ReceiverList } from './receiver-view';
import { ReceiverCreateBody, ReceiverUpdateBody } from './receiver.shapes';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { Operation } from '../core/policy.guard';
import { RECEIVER_LIST, ReceiversService } from './receivers.service';

@ApiTags('receivers')
@SenlinApi()
@Controller('v1/receivers')
export class ReceiversController {
  constructor(private readonly receivers: ReceiversService) {}

  @Get()
  @Operation('receivers:index')
  @Ok(ReceiverList)
  @ListQuery(RECEIVER_LIST)
  list(@Ctx() req: ApiRequest, @Query() query: Record<string, unknown>) {
    return this.receivers.list(req, query);
  }

  @Post()
  @Operation('receivers:create')
  @HttpCode(201)
  @RequestBody(ReceiverCreateBody)
  @Created(ReceiverEnvelope)
  @Fails(403, "The cluster is not the caller's (Senlin: only its owner binds a webhook to it).")
  @Conflict('The action is one a Trellis webhook does not run.')
  create(@Ctx() req: ApiRequest, @Body() body: unknown) {
    return this.receivers.create(req, body);
  }

  @Get(':receiver_id')
  @Operation('receivers:get')
  @Ok(ReceiverEnvelope)
  @NotFound()
  get(@Ctx() req: ApiRequest, @Param('receiver_id') id: string) {
    return this.receivers.get(req, id);
  }

  @Patch(':receiver_id')
  @Operation('receivers:update')
  @RequestBody(ReceiverUpdateBody)
  @Ok(ReceiverEnvelope)
  @NotFound()
  update(@Ctx() req: ApiRequest, @Param('receiver_id') id: string, @Body() body: unknown) {
    return this.receivers.update(req, id, body);
  }

  @Delete(':receiver_id')
  @Operation('receivers:delete')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Deleted.' })
  @NotFound()
  async remove(@Ctx() req: ApiRequest, @Param('receiver_id') id: string): Promise<void> {
    await this.receivers.remove(req, id);
  }

  @Post(':receiver_id/notify')
  @Operation('receivers:notify')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Never with Trellis: only message receivers are notified (400 for a webhook).' })
  @NotFound()
  async notify(@Ctx() req: ApiRequest, @Param('receiver_id') id: string): Promise<void> {
    await this.receivers.notify(req, id);
  }
}
