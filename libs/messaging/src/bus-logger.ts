import { Logger } from '@nestjs/common';

/** The slice of Nest's LoggerService the bus uses, so any Nest logger (or a test spy) fits. */
export interface BusLogger {
  log(message: string): unknown;
  warn(message: string): unknown;
  error(message: string, trace?: string): unknown;
  debug?(message: string): unknown;
}

export const defaultBusLogger = (context: string): BusLogger => new Logger(context);
