import type { LogLevel } from './config';
import { currentLogContext } from './log-context';

/**
 * A structured logger for the services and libs: one JSON line per entry on stderr, so logs of
 * the three services can be merged and grepped by correlation_id or action_id. Lines written while
 * a piece of work runs carry its log context (./log-context.ts) without being told.
 */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(
  component: string,
  level: LogLevel = 'info',
  base: Record<string, unknown> = {},
  sink: (line: string) => void = (line) => process.stderr.write(line + '\n'),
): Logger {
  const min = RANK[level];
  const write = (lvl: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < min) return;
    sink(JSON.stringify({ time: new Date().toISOString(), level: lvl, component, msg: message, ...currentLogContext(), ...base, ...fields }));
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger(component, level, { ...base, ...fields }, sink),
  };
}

/** A logger that drops everything (tests that do not look at logs). */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};

export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));
