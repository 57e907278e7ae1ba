/** A small flag parser: `--name value`, `--flag`, repeated flags collect into arrays. */
export interface ParsedArgs {
  positional: string[];
  flags: Map<string, string[]>;
}

export function parseArgs(args: string[], booleanFlags: string[] = []): ParsedArgs {
  const positional: string[] = [];
  const flags = new Map<string, string[]>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith('--')) {
      const [name, inline] = a.slice(2).split('=', 2);
      let value = inline;
      if (value === undefined) value = booleanFlags.includes(name) ? 'true' : args[++i];
      if (value === undefined) throw new Error(`option --${name} needs a value`);
      flags.set(name, [...(flags.get(name) ?? []), value]);
    } else {
      positional.push(a);
    }
  }
  return { positional, flags };
}

export const flag = (p: ParsedArgs, name: string): string | undefined => p.flags.get(name)?.at(-1);
