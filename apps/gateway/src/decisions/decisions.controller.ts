import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { NotFound, Ok, RequestBody, SenlinApi } from '../openapi/api-docs.decorators';
import { DecisionEnvelope, EvaluationResult } from './decision.shapes';
import { EvaluationRequest } from './evaluation-request';
import { Ctx, type ApiRequest } from '../core/request.decorators';
import { DecisionsService } from './decisions.service';
import { Operation } from '../core/policy.guard';

@ApiTags('decisions')
@SenlinApi()
@Controller('v1')
export class DecisionsController {
  constructor(private readonly decisions: DecisionsService) {}

  /** The whole record of an action's decision: input snapshot, output, plan and per-policy trace. */
  @Get('actions/:action_id/decision')
  @Operation('actions:decision')
  @Ok(DecisionEnvelope)
  @NotFound()
  decision(@Ctx() req: ApiRequest, @Param('action_id') id: string) {
    return this.decisions.decisionOf(req, id);
  }

  /** Evaluate a decision snapshot (the format of `trellis evaluate`), touching nothing. */
  @Post('evaluations')
  @Operation('evaluations:create')
  @HttpCode(200)
  @RequestBody(EvaluationRequest)
  @Ok(EvaluationResult)
  evaluate(@Body() body: unknown) {
    return this.decisions.evaluate(body);
  }
}
