/**
 * One progress line on stderr. On a terminal it is redrawn in place (at most every 100 ms); into a
 * file or a CI log it prints one line when a task starts and one when it ends, so logs stay short.
 */
export class Progress {
  private label = '';
  private total = 0;
  private done = 0;
  private started = 0;
  private lastDraw = 0;
  private drawn = false;

  constructor(
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly prefix = '',
  ) {}

  private get live(): boolean {
    return this.stream.isTTY === true;
  }

  withPrefix(prefix: string): Progress {
    return new Progress(this.stream, prefix);
  }

  /** a new task of `total` steps */
  start(label: string, total: number): void {
    this.finishLine();
    this.label = label;
    this.total = total;
    this.done = 0;
    this.started = Date.now();
    this.lastDraw = 0;
    if (this.live) this.draw();
    else this.stream.write(`${this.prefix}${label} ...\n`);
  }

  tick(steps = 1): void {
    this.done += steps;
    if (!this.live) return;
    const now = Date.now();
    if (now - this.lastDraw >= 100 || this.done >= this.total) this.draw();
  }

  /** ends the task, with an optional summary */
  end(summary = ''): void {
    const seconds = ((Date.now() - this.started) / 1000).toFixed(1);
    const text = `${this.prefix}${this.label}: ${summary ? `${summary} ` : ''}(${seconds} s)`;
    if (this.live) {
      this.stream.write(`\r\x1b[2K${text}\n`);
      this.drawn = false;
    } else {
      this.stream.write(`${text}\n`);
    }
    this.label = '';
  }

  /** a line above the progress line */
  log(message: string): void {
    if (this.live && this.drawn) this.stream.write('\r\x1b[2K');
    this.stream.write(`${this.prefix}${message}\n`);
    if (this.live && this.label) this.draw();
  }

  private draw(): void {
    this.lastDraw = Date.now();
    const pct = this.total > 0 ? Math.floor((100 * this.done) / this.total) : 100;
    const width = 20;
    const filled = Math.min(width, Math.round((width * pct) / 100));
    const bar = '#'.repeat(filled) + '.'.repeat(width - filled);
    const elapsed = (this.lastDraw - this.started) / 1000;
    const eta = this.done > 0 && this.done < this.total ? ` eta ${((elapsed * (this.total - this.done)) / this.done).toFixed(0)} s` : '';
    const columns = this.stream.columns ?? 120;
    const line = `${this.prefix}[${bar}] ${String(pct).padStart(3)}% ${this.label}${eta}`;
    this.stream.write(`\r\x1b[2K${line.slice(0, columns - 1)}`);
    this.drawn = true;
  }

  private finishLine(): void {
    if (this.live && this.drawn) {
      this.stream.write('\n');
      this.drawn = false;
    }
  }
}
