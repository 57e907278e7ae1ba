import { Injectable, NestMiddleware } from '@nestjs/common';
import type { HttpRequest, HttpResponse, NextFn } from './http.types';
import { checkBodyText, checkQueryParams } from './request-input';

/** The query string and the JSON body of every HTTP request, checked once before any route reads them. */
@Injectable()
export class RequestInputMiddleware implements NestMiddleware {
  use(req: HttpRequest, _res: HttpResponse, next: NextFn): void {
    checkQueryParams(req.query);
    checkBodyText(req.body);
    next();
  }
}
