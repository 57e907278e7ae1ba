import type { ClassConstructor } from 'class-transformer';
import type { MetadataStorage } from 'class-transformer/types/MetadataStorage';
import { validateSync, type ValidationError } from 'class-validator';

// class-transformer's record of @Type: not in its public API, read the way @nestjs/mapped-types reads it
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as { defaultMetadataStorage: MetadataStorage };

export class ContractViolation extends Error {
  constructor(
    readonly contract: string,
    readonly problems: string[],
  ) {
    super(`invalid ${contract}: ${problems.join('; ')}`);
    this.name = 'ContractViolation';
  }
}

function flatten(errors: ValidationError[], prefix = ''): string[] {
  const out: string[] = [];
  for (const e of errors) {
    const path = prefix ? `${prefix}.${e.property}` : e.property;
    for (const msg of Object.values(e.constraints ?? {})) out.push(`${path}: ${msg}`);
    if (e.children?.length) out.push(...flatten(e.children, path));
  }
  return out;
}

/**
 * How deep a message may nest objects and lists (the message itself is level 1), far above any
 * contract's own depth (a work order's profile properties sit 5 levels down). class-transformer and
 * class-validator recurse: 10,000 levels, which JSON.parse takes, overflowed the stack, an error a
 * consumer took for a transient one and retried until the delivery limit (found by the fuzz suite).
 */
export const MAX_MESSAGE_DEPTH = 64;

/** The depth check, without recursion. */
function tooDeep(input: object): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: input, depth: 1 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_MESSAGE_DEPTH) return true;
    for (const item of Array.isArray(value) ? value : Object.values(value)) stack.push({ value: item, depth: depth + 1 });
  }
  return false;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `cls` from untrusted JSON, for class-validator: the nested messages `@Type` names become their
 * classes, every other value stays as it came. class-transformer's plainToInstance copied every
 * nested object and took an own key `constructor` for the object's class: a profile whose server
 * metadata had a `constructor` key made it throw on every work order of that cluster, which the
 * worker retried, dead-lettered, and the action timed out (found by the fuzz suite). It also dropped
 * `__proto__` keys from free-form values; here they stay, as JSON.parse made them.
 */
function toInstance<T>(cls: ClassConstructor<T>, plain: Record<string, unknown>): T {
  const instance = new cls() as Record<string, unknown>;
  for (const [key, value] of Object.entries(plain)) {
    // no contract has such a field, and an own `constructor` would stand in for the class that
    // class-validator reads the rules from: `"constructor": null` threw, a string skipped every rule
    if (key === 'constructor' || key === '__proto__') continue;
    const type = defaultMetadataStorage.findTypeMetadata(cls, key)?.typeFunction() as ClassConstructor<object> | undefined;
    const typed = (v: unknown) => (type && isPlainObject(v) ? toInstance(type, v) : v);
    const converted = type && Array.isArray(value) ? value.map(typed) : typed(value);
    Object.defineProperty(instance, key, { value: converted, enumerable: true, writable: true, configurable: true });
  }
  return instance as T;
}

/**
 * parseContract's first checks, for a contract checked by hand (a hot path where class-validator's
 * cost shows): the input is a JSON object no deeper than MAX_MESSAGE_DEPTH, or the same
 * ContractViolation parseContract throws.
 */
export function checkContractInput(contract: string, input: unknown): asserts input is Record<string, unknown> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new ContractViolation(contract, ['body: must be a JSON object']);
  }
  if (tooDeep(input)) throw new ContractViolation(contract, [`body: nested more than ${MAX_MESSAGE_DEPTH} levels deep`]);
}

/** Turn untrusted input (a queue message, an RPC payload) into a validated instance, or throw. */
export function parseContract<T extends object>(cls: ClassConstructor<T>, input: unknown): T {
  checkContractInput(cls.name, input);
  const instance = toInstance(cls, input as Record<string, unknown>);
  const errors = validateSync(instance as object, { whitelist: false, forbidUnknownValues: true });
  if (errors.length) throw new ContractViolation(cls.name, flatten(errors));
  return instance;
}
