import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/**
 * Every relative link in the project's Markdown files leads to a file or directory that exists
 * (issue 19: READMEs pointed newcomers at documents the project does not have). Links inside fenced
 * code blocks, absolute URLs and in-page anchors are not checked.
 */
const ROOT = join(__dirname, '..', '..');

export function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  const links: string[] = [];
  for (const m of prose.matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    links.push(target.split('#')[0]);
  }
  return links.filter((l) => l !== '');
}

describe('Markdown links', () => {
  const files = execFileSync('git', ['ls-files', '*.md'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);

  it('finds the project’s Markdown files', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/ARCHITECTURE.md']));
  });

  it('every relative link resolves to something in the repository', () => {
    const broken = files.flatMap((file) =>
      relativeLinks(readFileSync(join(ROOT, file), 'utf8'))
        .filter((link) => !existsSync(normalize(join(ROOT, dirname(file), decodeURIComponent(link)))))
        .map((link) => `${file} → ${link}`),
    );
    expect(broken).toEqual([]);
  });

  it('reads links as Markdown does', () => {
    const md = 'See [a](docs/A.md#x), [b](<docs/B.md>), [c](https://x.y), [d](#top), `[e](no.md)`\n```\n[f](no.md)\n```';
    expect(relativeLinks(md)).toEqual(['docs/A.md', 'docs/B.md']);
  });
});
