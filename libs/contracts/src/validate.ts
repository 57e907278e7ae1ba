import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';

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

/** Turn untrusted input (a queue message, an RPC payload) into a validated instance, or throw. */
export function parseContract<T extends object>(cls: ClassConstructor<T>, input: unknown): T {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new ContractViolation(cls.name, ['body: must be a JSON object']);
  }
  const instance = plainToInstance(cls, input);
  const errors = validateSync(instance as object, { whitelist: false, forbidUnknownValues: true });
  if (errors.length) throw new ContractViolation(cls.name, flatten(errors));
  return instance;
}
