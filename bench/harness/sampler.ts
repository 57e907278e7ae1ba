import * as v8 from 'v8';
import * as vm from 'vm';

let gcFn: (() => void) | null | undefined;

/**
 * The collector, without asking the user to start node with --expose-gc: the flag can still be set at
 * run time, and a fresh context then exposes `gc`. Null when the runtime refuses.
 */
export function collector(): (() => void) | null {
  if (gcFn !== undefined) return gcFn;
  try {
    v8.setFlagsFromString('--expose-gc');
    const fn = vm.runInNewContext('gc') as unknown;
    gcFn = typeof fn === 'function' ? (fn as () => void) : null;
  } catch {
    gcFn = null;
  }
  return gcFn;
}

export interface SampleOptions<T> {
  /** timed calls */
  samples: number;
  /** untimed calls first, on their own fresh inputs, so the code is optimised before timing starts */
  warmup: number;
  /**
   * `count` fresh inputs, built before any of them is timed. Every call gets an input of its own,
   * never one an earlier call has seen.
   */
  prepare(count: number): T[];
  /**
   * Inputs prepared per batch. 1 prepares each input just before its call, as a service loads its
   * input just before using it; larger batches bound the memory held by prepared inputs.
   */
  batch: number;
  /** collect garbage after preparing each batch (when the runtime allows), so it is not charged to `run` */
  collect?: boolean;
  /** the operation under test */
  run(input: T): unknown;
  /** called after each timed batch with the number of samples it took */
  onBatch?(taken: number): void;
}

export interface Sampled {
  /** nanoseconds per call, in call order */
  times: Float64Array;
  /** what run() returned last: keeps the work observable so it cannot be optimised away */
  last: unknown;
}

/**
 * Times `run` once per input with process.hrtime.bigint(). Inputs are prepared in batches outside the
 * timed region; with `collect`, a collection runs after each batch is prepared, so garbage left by
 * preparing inputs is not charged to the operation (garbage the operation makes still is).
 */
export function sample<T>(options: SampleOptions<T>): Sampled {
  const gc = options.collect ? collector() : null;
  let last: unknown;
  for (let left = options.warmup; left > 0; ) {
    const inputs = options.prepare(Math.min(left, options.batch));
    for (const input of inputs) last = options.run(input);
    left -= inputs.length;
  }
  const times = new Float64Array(options.samples);
  let at = 0;
  while (at < options.samples) {
    const inputs = options.prepare(Math.min(options.samples - at, options.batch));
    gc?.();
    for (let i = 0; i < inputs.length; i++) {
      const input = inputs[i];
      const t0 = process.hrtime.bigint();
      last = options.run(input);
      const t1 = process.hrtime.bigint();
      times[at++] = Number(t1 - t0);
    }
    options.onBatch?.(inputs.length);
  }
  return { times, last };
}

/**
 * Times `call` (an HTTP request, a database read) `samples` times, one after another, after `warmup`
 * untimed calls: nanoseconds per call, in call order, with `tick` after each timed call. For
 * operations whose input is the system's state rather than prepared values, which sample() times.
 */
export async function sampleCalls(options: { samples: number; warmup: number; call(): Promise<unknown>; tick?(): void }): Promise<Float64Array> {
  for (let i = 0; i < options.warmup; i++) await options.call();
  const times = new Float64Array(options.samples);
  for (let i = 0; i < options.samples; i++) {
    const t0 = process.hrtime.bigint();
    await options.call();
    times[i] = Number(process.hrtime.bigint() - t0);
    options.tick?.();
  }
  return times;
}

/** What an empty timed region costs: two hrtime.bigint() calls and the subtraction. */
export function timerOverhead(samples = 100_000): number {
  const times = new Float64Array(samples);
  for (let i = 0; i < samples; i++) {
    const t0 = process.hrtime.bigint();
    const t1 = process.hrtime.bigint();
    times[i] = Number(t1 - t0);
  }
  times.sort();
  return times[samples >> 1];
}

/**
 * Nanoseconds per element of a plain integer sum over an Int32Array: a yardstick recorded with the
 * figures, so a run on a busy or throttled machine shows as one (an idle modern core does ~0.3-0.5).
 */
export function loopCalibration(): number {
  const data = new Int32Array(4096).map((_, i) => i);
  let sink = 0;
  const sum = () => {
    let s = 0;
    for (let i = 0; i < data.length; i++) s = (s + data[i]) | 0;
    return s;
  };
  for (let r = 0; r < 200; r++) sink ^= sum();
  const rounds = new Float64Array(50);
  for (let r = 0; r < rounds.length; r++) {
    const t0 = process.hrtime.bigint();
    for (let k = 0; k < 20; k++) sink ^= sum();
    rounds[r] = Number(process.hrtime.bigint() - t0) / (20 * data.length);
  }
  rounds.sort();
  calibrationSink = sink;
  return Math.round(rounds[rounds.length >> 1] * 1000) / 1000;
}

/** keeps the yardstick's result observable, so the loop cannot be optimised away */
export let calibrationSink = 0;
