import type { SchemaObject } from '@nestjs/swagger';
import { described, registerComponent, type NamedShape, type Schema } from './components';
import { FREE_MAP } from './request';
import type { JsonText } from '../core/json-text';

/*
 * Response bodies as tables: each property names its OpenAPI schema and, through its type
 * parameter, the TypeScript type of the value. A view function is declared to return `Out<typeof
 * X>`, so the compiler holds what the gateway answers to what the document says it answers.
 */

/** A property of a response: its schema, and the type of its value (`T`, never read at run time). */
export interface Prop<T, Optional extends boolean = false> {
  readonly schema: Schema;
  readonly optional: Optional;
  readonly type?: T;
}

const prop = <T>(schema: Schema): Prop<T> => ({ schema, optional: false });

export const str = (doc: SchemaObject = {}) => prop<string>({ type: 'string', ...doc });
export const uuid = (doc: SchemaObject = {}) => prop<string>({ type: 'string', format: 'uuid', ...doc });
export const int = (doc: SchemaObject = {}) => prop<number>({ type: 'integer', ...doc });
export const num = (doc: SchemaObject = {}) => prop<number>({ type: 'number', ...doc });
export const bool = (doc: SchemaObject = {}) => prop<boolean>({ type: 'boolean', ...doc });
/** A JSON object (typed `object`: the interfaces of libs/policies hold one without an index signature). */
export const map = (doc: SchemaObject = {}) => prop<object>({ ...FREE_MAP, ...doc });
export const oneOf = (values: readonly string[], doc: SchemaObject = {}) => prop<string>({ type: 'string', enum: [...values], ...doc });
/** Any JSON value; the description says what. */
export const value = (doc: SchemaObject = {}) => prop<unknown>(doc);
/** `YYYY-MM-DDTHH:MM:SSZ`, or null. */
export const time = (doc: SchemaObject = {}) =>
  prop<string | null>({ type: 'string', format: 'date-time', nullable: true, example: '2016-01-18T00:00:00Z', ...doc });

export const nullable = <T>(p: Prop<T>): Prop<T | null> => ({ schema: { ...p.schema, nullable: true }, optional: false });
export const optional = <T>(p: Prop<T>): Prop<T, true> => ({ schema: p.schema, optional: true });
export const list = <T>(item: Prop<T>, doc: SchemaObject = {}): Prop<T[]> => ({ schema: { type: 'array', items: item.schema, ...doc }, optional: false });
/**
 * `list`, whose value the gateway may hold as its JSON text (core/json-text.ts), written into the
 * answer unparsed: the same schema.
 */
export const listAsText = <T>(item: Prop<T>, doc: SchemaObject = {}): Prop<T[] | JsonText<T[]>> => ({
  schema: { type: 'array', items: item.schema, ...doc },
  optional: false,
});
/** A view nested with a description of its own. */
export const describedAs = <T>(view: View<T>, description: string): Prop<T> => ({ schema: described(view.ref, description), optional: false });

export type Props = Record<string, Prop<unknown, boolean>>;
type TypeOf<P> = P extends Prop<infer T, boolean> ? T : never;
type OptionalKeys<P extends Props> = { [K in keyof P]: P[K] extends Prop<unknown, true> ? K : never }[keyof P];
type Simplify<T> = { [K in keyof T]: T[K] };

/** The value a table of properties describes. */
export type Out<P extends Props> = Simplify<
  { [K in Exclude<keyof P, OptionalKeys<P>>]: TypeOf<P[K]> } & { [K in OptionalKeys<P>]?: TypeOf<P[K]> }
>;

/** A named response object; nested in another it is a reference to its component. */
export interface View<T> extends NamedShape, Prop<T> {}

export type OutOf<V> = V extends View<infer T> ? T : never;

export function view<P extends Props>(name: string, props: P, doc: SchemaObject = {}): View<Out<P>> {
  const required = Object.keys(props).filter((k) => !props[k].optional);
  const ref = registerComponent(name, {
    type: 'object',
    ...doc,
    properties: Object.fromEntries(Object.entries(props).map(([k, p]) => [k, p.schema])),
    ...(required.length ? { required } : {}),
  });
  return { name, ref, schema: ref, optional: false };
}
