/**
 * For the enclosing describe block: what each test writes on stdout and stderr, kept as text in
 * `out` and `err` (emptied before each test) instead of reaching the terminal.
 */
export function captureStdio(): { out: string; err: string } {
  const std = { out: '', err: '' };
  beforeEach(() => {
    std.out = std.err = '';
    jest.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => ((std.out += String(c)), true));
    jest.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => ((std.err += String(c)), true));
  });
  afterEach(() => jest.restoreAllMocks());
  return std;
}
