/** A seeded random source (mulberry32) so that a decision replays from its snapshot. */
export type RandomSource = () => number;

export function seededRandom(seed: number): RandomSource {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Python's randrange(n) on a given source. */
export function randrange(random: RandomSource, n: number): number {
  return Math.floor(random() * n);
}

const HEX = '0123456789abcdef';

/** A UUID-shaped id drawn from a seeded source: deterministic ids for objects a hook creates. */
export function seededIdFactory(seed: number): (kind: string) => string {
  const random = seededRandom((seed ^ 0x5eed1d5) >>> 0);
  return () => {
    let s = '';
    for (let i = 0; i < 32; i++) {
      let d = randrange(random, 16);
      if (i === 12) d = 4;
      if (i === 16) d = 8 + (d & 3);
      s += HEX[d];
    }
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  };
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const ALNUM = LETTERS + '0123456789';

/** Senlin's utils.random_name(8): a letter, then 7 letters or digits. */
export function randomName(random: RandomSource, length = 8): string {
  let s = LETTERS[randrange(random, LETTERS.length)];
  for (let i = 1; i < length; i++) s += ALNUM[randrange(random, ALNUM.length)];
  return s;
}
