import { badRequest } from '@trellis/common';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The columns these values go into are `uuid`: a clear error here beats PostgreSQL's 22P02. */
export function requireUuid(field: string, value: unknown): string {
  if (typeof value !== 'string' || !UUID.test(value)) {
    throw badRequest(`${field} must be a UUID, got ${describe(value)}`);
  }
  return value;
}

export function requireText(field: string, value: unknown, maxLength: number, minLength = 1): string {
  if (typeof value !== 'string') throw badRequest(`${field} must be a string, got ${describe(value)}`);
  if (value.length < minLength || value.length > maxLength) {
    throw badRequest(`${field} must be ${minLength} to ${maxLength} characters long, got ${value.length}`);
  }
  return value;
}

export function optionalText(field: string, value: unknown, maxLength: number): string | null {
  return value === undefined || value === null ? null : requireText(field, value, maxLength);
}

export function requirePositiveInt(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new Error(`${field} must be a whole number of at least 1, got ${describe(value)}`);
  }
  return value;
}

export function requirePositiveNumber(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new Error(`${field} must be a number above 0, got ${describe(value)}`);
  }
  return value;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value.length > 60 ? value.slice(0, 60) + '…' : value}'`;
  if (value === null) return 'null';
  return typeof value === 'object' ? (Array.isArray(value) ? 'an array' : 'an object') : String(value);
}
