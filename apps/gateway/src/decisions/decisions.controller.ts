import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { DecisionsService } from './decisions.service';

@ApiTags('decisions')
@Controller('v1')
export class DecisionsController {
  constructor(private readonly decisions: DecisionsService) {}

  /** The whole record of an action's decision: input snapshot, output, plan and per-policy trace. */
  @Get('actions/:action_id/decision')
  decision(@Ctx() req: ApiRequest, @Param('action_id') id: string) {
    return this.decisions.decisionOf(req, id);
  }

  /** Evaluate a decision snapshot (the format of `trellis evaluate`), touching nothing. */
  @Post('evaluations')
  @HttpCode(200)
  evaluate(@Body() body: unknown) {
    return this.decisions.evaluate(body);
  }
}
